# Rendered by opkit from templates/families/reduce/reference.py.j2 for ReduceMaxFP32 (reduce=max).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for reduce_max_fp32: torch.max over one dim (values, first index of the max; nan wins)."""
import torch


def reference(x, dim=-1, keepdim=False):
    values, indices = torch.max(x, dim=dim, keepdim=keepdim)
    return values, indices
