# Rendered by opkit from templates/families/softmax/reference.py.j2 for SoftmaxFP32 (log=false, backward=false).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for softmax_fp32: PyTorch's own softmax, run by the harness in higher precision."""
import torch.nn.functional as F


def reference(x, dim=-1):
    return F.softmax(x, dim=dim)


def error_scale(x, dim=-1):
    """exp(x - max) / sum: the sum has positive terms only, nothing cancels; each output is judged
    against itself (relative error, or the small-value rule for outputs that underflow)."""
    return F.softmax(x, dim=dim).abs()
