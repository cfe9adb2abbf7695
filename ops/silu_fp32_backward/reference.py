"""Golden for silu_fp32_backward: torch.autograd through F.silu, in the harness's higher precision."""
import torch
import torch.nn.functional as F


def reference(x, dy):
    with torch.enable_grad():
        xr = x.detach().requires_grad_(True)
        (dx,) = torch.autograd.grad(F.silu(xr), xr, dy)
    return dx
