"""Golden for silu_fp32: PyTorch's own SiLU, run by the harness in higher precision."""
import torch.nn.functional as F


def reference(x):
    return F.silu(x)
