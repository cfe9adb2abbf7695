"""Golden for reduce_max_fp32: torch.max over one dim (values, first index of the max; nan wins)."""
import torch


def reference(x, dim=-1, keepdim=False):
    values, indices = torch.max(x, dim=dim, keepdim=keepdim)
    return values, indices
