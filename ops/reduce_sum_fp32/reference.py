# Rendered by opkit from templates/families/reduce/reference.py.j2 for ReduceSumFP32 (reduce=sum).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for reduce_sum_fp32: torch.sum over one dim, run by the harness in higher precision."""
import torch


def reference(x, dim=-1, keepdim=False):
    return torch.sum(x, dim=dim, keepdim=keepdim)


def error_scale(x, dim=-1, keepdim=False):
    """A sum of terms of mixed sign is judged against sum(|x|): FP32 accumulation errors scale with it."""
    return torch.sum(x.abs(), dim=dim, keepdim=keepdim)
