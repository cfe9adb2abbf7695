# Rendered by opkit from templates/families/norm/reference.py.j2 for RmsNormFP32 (norm=rms, backward=false).
# Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
"""Golden for RmsNormFP32: PyTorch's own RMS norm over the last dim (eps passed explicitly)."""
import torch.nn.functional as F


def reference(x, weight, eps=1e-6):
    return F.rms_norm(x, (x.shape[-1],), weight, eps)
