"""Golden for LayerNormFP32: PyTorch's own layer norm over the last dim."""
import torch
import torch.nn.functional as F


def reference(x, weight, bias, eps=1e-5):
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def error_scale(x, weight, bias, eps=1e-5):
    """Per-element magnitude of the terms summed into y = (x - mean) * rstd * w + b.

    A correct kernel rounds x - mean with an error relative to |x| + |mean| (not to |x - mean|), and
    then adds b, so outputs that cancel to near zero are judged against this scale instead.
    """
    mean = x.mean(dim=-1, keepdim=True)
    rstd = torch.rsqrt(x.var(dim=-1, unbiased=False, keepdim=True) + eps)
    return (x.abs() + mean.abs()) * rstd * weight.abs() + bias.abs()
