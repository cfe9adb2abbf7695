# Rendered by opkit from templates/families/softmax/backward/reference.py.j2 for SoftmaxFP32Backward (log=false, backward=true).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for softmax_fp32_backward: the gradient PyTorch's autograd gives for F.softmax.

Autograd's softmax derivative is a function of the saved output y and dy only
(dx = y * (dy - sum(dy * y))); calling that same derivative directly gives a golden for any test
values of y, not only for rows that are valid probabilities.
"""
import torch
import torch.nn.functional as F


def reference(y, dy, dim=-1):
    # torch's softmax backward is a function of the saved output y and dy only; call it directly so
    # arbitrary test values of y (not just probability rows) have a well-defined golden.
    return torch._softmax_backward_data(dy, y, dim, y.dtype)


def error_scale(y, dy, dim=-1):
    """dx = y * (dy - g), g = sum(dy * y): a correct FP32 kernel rounds dy - g relative to |dy| + |g|."""
    g = (dy * y).sum(dim=dim, keepdim=True)
    return y.abs() * (dy.abs() + g.abs() + (dy * y).abs().sum(dim=dim, keepdim=True))
