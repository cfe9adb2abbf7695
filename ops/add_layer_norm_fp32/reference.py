# Rendered by opkit from templates/families/fused/reference.py.j2 for AddLayerNormFP32 (norm=layer).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for AddLayerNormFP32: the residual sum and F.layer_norm of it (the sum is not rounded to the
I/O dtype before the norm: the kernel normalises its FP32 sum)."""
import torch.nn.functional as F


def reference(x, residual, weight, bias, eps=1e-5):
    s = x + residual
    return s, F.layer_norm(s, (s.shape[-1],), weight, bias, eps)


def error_scale(x, residual, weight, bias, eps=1e-5):
    """Per-element magnitude of the terms summed into each output (see layer_norm_fp32/reference.py)."""
    s = x + residual
    rstd = (s.var(dim=-1, unbiased=False, keepdim=True) + eps).rsqrt()
    # |x| + |residual| bounds the rounding of the sum itself; it then enters x - mean like x does (and the
    # mean, a sum of those terms, is rounded relative to their mean magnitude: docs/harness.md).
    mag = x.abs() + residual.abs()
    return mag, (mag + mag.mean(dim=-1, keepdim=True)) * rstd * weight.abs() + bias.abs()
