# Rendered by opkit from templates/families/elementwise/backward/reference.py.j2 for SiluFP32Backward (activation=silu, backward=true).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for silu_fp32_backward: torch.autograd through F.silu, in the harness's higher precision."""
import torch
import torch.nn.functional as F


def reference(x, dy):
    with torch.enable_grad():
        xr = x.detach().requires_grad_(True)
        (dx,) = torch.autograd.grad(F.silu(xr), xr, dy)
    return dx


def error_scale(x, dy):
    """dx = dy * s * (1 + x (1 - s)): the two terms cancel near x = -1.28, so each element is judged
    against |dy| times the magnitude of the terms the kernel adds."""
    s = torch.sigmoid(x)
    return dy.abs() * s * (1.0 + (x * (1.0 - s)).abs())
