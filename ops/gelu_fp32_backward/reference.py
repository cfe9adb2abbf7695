# Rendered by opkit from templates/families/elementwise/backward/reference.py.j2 for GeluFP32Backward (activation=gelu, backward=true).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for gelu_fp32_backward: torch.autograd through F.gelu, in the harness's higher precision."""
import torch
import torch.nn.functional as F


def reference(x, dy, approximate="none"):
    with torch.enable_grad():
        xr = x.detach().requires_grad_(True)
        (dx,) = torch.autograd.grad(F.gelu(xr, approximate=approximate), xr, dy)
    return dx


def error_scale(x, dy, approximate="none"):
    """dx = dy * (sum of GELU' terms); GELU' has a root near x = -0.75 where its terms cancel, so each
    element is judged against |dy| times the magnitude of the terms the kernel adds."""
    if approximate == "tanh":
        beta, kappa = (2.0 / torch.pi) ** 0.5, 0.044715
        s = torch.sigmoid(2.0 * beta * (x + kappa * x ** 3))
        terms = s * (1.0 + (2.0 * beta * x * (1.0 + 3.0 * kappa * x * x)).abs() * (1.0 - s))
    else:
        cdf = 0.5 * torch.special.erfc(-x / 2.0 ** 0.5)
        pdf = torch.exp(-0.5 * x * x) / (2.0 * torch.pi) ** 0.5
        terms = cdf + (x * pdf).abs()
    return dy.abs() * terms
