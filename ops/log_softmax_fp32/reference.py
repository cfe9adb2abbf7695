# Rendered by opkit from templates/families/softmax/reference.py.j2 for LogSoftmaxFP32 (log=true, backward=false).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for log_softmax_fp32: PyTorch's own log_softmax, run by the harness in higher precision."""
import torch.nn.functional as F


def reference(x, dim=-1):
    return F.log_softmax(x, dim=dim)


def error_scale(x, dim=-1):
    """y = (x - max) - log(sum): both terms are <= 0, nothing cancels; judged against |y| itself."""
    return F.log_softmax(x, dim=dim).abs()
