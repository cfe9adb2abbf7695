# Rendered by opkit from templates/families/fused/reference.py.j2 for AddRmsNormFP32 (norm=rms).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for AddRmsNormFP32: the residual sum and F.rms_norm of it (the sum is not rounded to the I/O
dtype before the norm: the kernel normalises its FP32 sum)."""
import torch.nn.functional as F


def reference(x, residual, weight, eps=1e-6):
    s = x + residual
    return s, F.rms_norm(s, (s.shape[-1],), weight, eps)


def error_scale(x, residual, weight, eps=1e-6):
    """Per-element magnitude of the terms summed into each output: the sum is rounded relative to
    |x| + |residual|, and that error goes through the (scale-free) norm."""
    s = x + residual
    mag = x.abs() + residual.abs()
    rstd = (s.pow(2).mean(dim=-1, keepdim=True) + eps).rsqrt()
    return mag, mag * rstd * weight.abs()
