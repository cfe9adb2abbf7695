# Rendered by opkit from templates/families/norm/reference.py.j2 for LayerNormFP32 (norm=layer, backward=false).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for LayerNormFP32: PyTorch's own layer norm over the last dim."""
import torch
import torch.nn.functional as F


def reference(x, weight, bias, eps=1e-5):
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def error_scale(x, weight, bias, eps=1e-5):
    """Per-element magnitude of the terms summed into y = (x - mean) * rstd * w + b.

    A correct FP32 kernel gets x - mean with an error relative to |x| + mean(|x|) (not to |x - mean|):
    the mean is a sum of the x, rounded relative to their magnitude, not to the (cancelled) mean itself
    (docs/harness.md "The mean's error"). It then adds b, so outputs that cancel to near zero are
    judged against this scale instead.
    """
    rstd = torch.rsqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps)
    return (x.abs() + x.abs().mean(dim=-1, keepdim=True)) * rstd * weight.abs() + bias.abs()
