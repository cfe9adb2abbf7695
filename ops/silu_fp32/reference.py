# Rendered by opkit from templates/families/elementwise/reference.py.j2 for SiluFP32 (activation=silu, backward=false).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for silu_fp32: PyTorch's own SiLU, run by the harness in higher precision."""
import torch.nn.functional as F


def reference(x):
    return F.silu(x)


def error_scale(x):
    """SiLU is a quotient, not a sum: nothing cancels, so every output is judged against itself."""
    return F.silu(x).abs()
