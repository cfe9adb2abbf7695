# Rendered by opkit from templates/families/elementwise/reference.py.j2 for GeluFP32 (activation=gelu, backward=false).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for gelu_fp32: PyTorch's own GELU, run by the harness in higher precision."""
import torch.nn.functional as F


def reference(x, approximate="none"):
    # GELU(+inf) = +inf (x * Phi(x)), as PyTorch's scalar, float64 and CUDA paths give; its float32 CPU path
    # through oneDNN gives NaN (pytorch/pytorch#185770, open), so the golden would depend on the machine.
    return F.gelu(x, approximate=approximate).where(x != float("inf"), x)


def error_scale(x, approximate="none"):
    """GELU is a product, not a sum: nothing cancels, so every output is judged against itself (relative
    error, or the small-value rule for tiny outputs). Stricter than the harness's sensitivity estimate,
    which would call far-tail outputs (|x| large) cancelled."""
    return F.gelu(x, approximate=approximate).abs()
