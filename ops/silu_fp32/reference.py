"""Golden for silu_fp32: PyTorch's own SiLU, run by the harness in higher precision."""
import torch.nn.functional as F


def reference(x):
    return F.silu(x)


def error_scale(x):
    """SiLU is a quotient, not a sum: nothing cancels, so every output is judged against itself."""
    return F.silu(x).abs()
