# Rendered by opkit from templates/families/norm/backward/reference.py.j2 for RmsNormFP32Backward (norm=rms, backward=true).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for RmsNormFP32Backward: autograd through F.rms_norm (the harness runs it in fp64 for fp32)."""
import torch
import torch.nn.functional as F


def reference(dy, x, weight, eps=1e-6):
    x = x.detach().requires_grad_(True)
    weight = weight.detach().requires_grad_(True)
    with torch.enable_grad():
        y = F.rms_norm(x, (x.shape[-1],), weight, eps)
        dx, dweight = torch.autograd.grad(y, (x, weight), dy)
    return dx, dweight


def error_scale(dy, x, weight, eps=1e-6):
    """Per-element magnitude of the terms summed into each gradient (for outputs that cancel to ~0).

    dx = rstd * (g - xhat * mean(g * xhat)) with g = dy * weight, dweight = sum(dy * xhat) over rows.
    """
    rstd = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
    xhat = x * rstd
    g = dy * weight
    dx = rstd * (g.abs() + xhat.abs() * (g * xhat).abs().mean(-1, keepdim=True))
    lead = tuple(range(x.dim() - 1))
    dweight = (dy * xhat).abs().sum(dim=lead) if lead else (dy * xhat).abs()
    return dx, dweight
