"""Sample transforms of folder sets: ``--transform pkg.module:function`` (or ``path/file.py:function``).

A transform takes one raw sample -- a PIL RGB image for .jpg/.jpeg/.png files, a tensor for .npy/.pt
files -- and returns the model's input for it without the batch dim (a tensor or a numpy array), one
fixed shape for every sample.

The default (``opkit.data.transforms:default``): images become float32 CHW in [0, 1], normalised with the
ImageNet mean and std that torchvision's pretrained classifiers use; no resizing, so all images must share
one size. Tensors are taken as stored (float32). ``imagenet_eval`` is torchvision's classification eval
preprocessing (resize the short side to 256, centre crop 224, then the default); ``to_tensor`` is the
default without the normalisation.
"""
from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from ..errors import OpkitError

# torchvision.transforms._presets.ImageClassification defaults (mean, std of ImageNet-1k)
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
DEFAULT_SPEC = "opkit.data.transforms:default"


def to_tensor(sample) -> torch.Tensor:
    """PIL image -> float32 CHW in [0, 1]; tensors pass through as float32."""
    if isinstance(sample, torch.Tensor):
        return sample.float() if sample.is_floating_point() else sample
    a = np.asarray(sample, dtype=np.uint8)
    if a.ndim == 2:
        a = a[:, :, None]
    return torch.from_numpy(a.transpose(2, 0, 1).copy()).float().div_(255.0)


def normalize(x: torch.Tensor, mean=IMAGENET_MEAN, std=IMAGENET_STD) -> torch.Tensor:
    m = torch.tensor(mean, dtype=x.dtype)[:, None, None]
    s = torch.tensor(std, dtype=x.dtype)[:, None, None]
    return (x - m) / s


def default(sample) -> torch.Tensor:
    """Images: [0, 1] CHW, ImageNet-normalised, not resized. Tensors: as stored."""
    if isinstance(sample, torch.Tensor):
        return to_tensor(sample)
    return normalize(to_tensor(sample))


def imagenet_eval(sample, resize: int = 256, crop: int = 224) -> torch.Tensor:
    """Short side to ``resize`` (bilinear), centre ``crop`` x ``crop``, then ``default``."""
    if isinstance(sample, torch.Tensor):
        raise OpkitError("imagenet_eval takes images (.jpg/.png); tensors are taken as stored")
    from PIL import Image
    w, h = sample.size
    s = resize / min(w, h)
    im = sample.resize((max(crop, round(w * s)), max(crop, round(h * s))), Image.BILINEAR)
    w, h = im.size
    left, top = (w - crop) // 2, (h - crop) // 2
    return default(im.crop((left, top, left + crop, top + crop)))


def resolve(spec: str) -> Callable:
    """``pkg.module:function`` or ``path/to/file.py:function`` -> the function."""
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise OpkitError(f"--transform {spec!r}: expected pkg.module:function or path/to/file.py:function")
    if target.endswith(".py"):
        path = Path(target).resolve()
        if not path.is_file():
            raise OpkitError(f"--transform {spec!r}: no file {path}")
        name = f"opkit_transform_{re.sub(r'[^0-9a-zA-Z_]', '_', str(path))}"
        module = sys.modules.get(name)
        if module is None:
            s = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(s)
            sys.modules[name] = module
            s.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as e:
            raise OpkitError(f"--transform {spec!r}: cannot import {target}: {e}") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise OpkitError(f"--transform {spec!r}: {target} has no function {attr}")
    return fn
