# Rendered by opkit from templates/families/norm/backward/reference.py.j2 for LayerNormFP32Backward (norm=layer, backward=true).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for LayerNormFP32Backward: autograd through F.layer_norm, in float64 for every case dtype."""
import torch
import torch.nn.functional as F


def reference(dy, x, weight, eps=1e-5):
    # float64 for fp16/bf16 cases too (the harness hands them over as float32): PyTorch's float32 CPU backward
    # forms dx = rstd * g + b * x + c, whose b * x and c cancel; on a row of one element (exact dx 0) it was
    # off by more than the cancellation bound where the kernel was exact (docs/harness.md).
    dy, x, weight = (t.detach().double() for t in (dy, x, weight))
    x = x.detach().requires_grad_(True)
    weight = weight.detach().requires_grad_(True)
    bias = torch.zeros_like(weight, requires_grad=True)
    with torch.enable_grad():
        y = F.layer_norm(x, (x.shape[-1],), weight, bias, eps)
        dx, dweight, dbias = torch.autograd.grad(y, (x, weight, bias), dy)
    return dx, dweight, dbias


def error_scale(dy, x, weight, eps=1e-5):
    """Per-element magnitude of the terms summed into each gradient (for outputs that cancel to ~0).

    dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * weight; dweight = sum(dy * xhat),
    dbias = sum(dy) over rows: a correct FP32 kernel's error is relative to these, not to the result.
    """
    mean = x.mean(dim=-1, keepdim=True)
    rstd = torch.rsqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps)
    xhat = (x - mean) * rstd
    g = dy * weight
    # xhat is itself rounded relative to (|x| + mean(|x|)) * rstd, which offset inputs make large: the mean
    # is a sum of the x, rounded relative to their magnitude (docs/harness.md "The mean's error").
    xmag = (x.abs() + x.abs().mean(-1, keepdim=True)) * rstd
    dx = rstd * (g.abs() + g.abs().mean(-1, keepdim=True) + xmag * (g * xhat).abs().mean(-1, keepdim=True)
                 + xhat.abs() * (g.abs() * xmag).mean(-1, keepdim=True))
    lead = tuple(range(x.dim() - 1))
    dweight = (dy.abs() * xmag).sum(dim=lead) if lead else dy.abs() * xmag
    dbias = dy.abs().sum(dim=lead) if lead else dy.abs()
    return dx, dweight, dbias
