# Rendered by opkit from templates/families/reduce/reference.py.j2 for ReduceMeanFP32 (reduce=mean).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for reduce_mean_fp32: torch.mean over one dim, run by the harness in higher precision."""
import torch


def reference(x, dim=-1, keepdim=False):
    return torch.mean(x, dim=dim, keepdim=keepdim)


def error_scale(x, dim=-1, keepdim=False):
    """A mean of terms of mixed sign is judged against mean(|x|): FP32 accumulation errors scale with it."""
    return torch.mean(x.abs(), dim=dim, keepdim=keepdim)
