"""Static vs dynamic input shapes: observed sizes, buckets chosen from them, and the variant that feeds a model
the shapes a deployment would.

Each sample gets an *observed size* (one of ``--sizes``, chosen by a hash of the sample's bytes, so every
runner agrees): the sample resized to that size is the image as it arrives. Then
- ``static``: resized to the one compiled shape (``--input``), as a static OM with AIPP resizing would see it;
- ``bucketed``: zero-padded (bottom/right) to the smallest bucket that holds it (ATC's dynamic gears);
- ``padded``: zero-padded to the largest bucket (one dynamic shape with a maximum).
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

from ..errors import OpkitError

STRIDE = 32          # bucket sides are rounded up to this (the total stride of common backbones)


def read_sizes(path: str | Path) -> list[tuple[int, int]]:
    """Observed input sizes: one ``HxW`` (or ``H W`` / ``H,W``) per line, or a JSON list of [H, W]."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise OpkitError(f"--sizes {p}: {e}") from None
    sizes = []
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
            sizes = [(int(h), int(w)) for h, w in data]
        except (ValueError, TypeError):
            raise OpkitError(f"--sizes {p}: expected a JSON list of [H, W] pairs") from None
    else:
        for n, line in enumerate(text.splitlines(), 1):
            line = line.split("#")[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"(\d+)\s*[x, ]\s*(\d+)", line)
            if not m:
                raise OpkitError(f"--sizes {p}:{n}: expected HxW (e.g. 480x640); got {line!r}")
            sizes.append((int(m.group(1)), int(m.group(2))))
    if not sizes or min(min(s) for s in sizes) < 1:
        raise OpkitError(f"--sizes {p}: no positive HxW sizes")
    return sizes


def _up(v: int, to: int = STRIDE) -> int:
    return int(math.ceil(v / to) * to)


def choose_buckets(sizes: list[tuple[int, int]], k: int = 3) -> list[tuple[int, int]]:
    """``k`` buckets (at most) for the observed sizes: sorted by area, split into k groups of equal count; each
    bucket is its group's largest height and width, rounded up to a multiple of 32."""
    s = sorted(sizes, key=lambda hw: (hw[0] * hw[1], hw))
    k = max(1, min(k, len(set(s))))
    out = []
    for g in range(k):
        grp = s[g * len(s) // k:(g + 1) * len(s) // k]
        if grp:
            b = (_up(max(h for h, _ in grp)), _up(max(w for _, w in grp)))
            if b not in out:
                out.append(b)
    return sorted(out, key=lambda hw: (hw[0] * hw[1], hw))


def bucket_for(size: tuple[int, int], buckets: list[tuple[int, int]]) -> tuple[int, int]:
    fits = [b for b in buckets if b[0] >= size[0] and b[1] >= size[1]]
    return min(fits, key=lambda b: b[0] * b[1]) if fits else max(buckets, key=lambda b: b[0] * b[1])


def observed(sample: torch.Tensor, sizes: list[tuple[int, int]]) -> tuple[int, int]:
    h = hashlib.sha256(sample.detach().contiguous().numpy().tobytes()).digest()
    return sizes[int.from_bytes(h[:8], "little") % len(sizes)]


def _resize(x: torch.Tensor, hw) -> torch.Tensor:
    return F.interpolate(x[None], size=tuple(hw), mode="bilinear", align_corners=False)[0]


def _pad(x: torch.Tensor, hw) -> torch.Tensor:
    h, w = x.shape[-2:]
    return F.pad(x, (0, hw[1] - w, 0, hw[0] - h))


@dataclass
class ShapeVariant:
    """``base`` (any variant) fed the shapes of a ``mode`` deployment; see the module docstring."""

    base: object
    mode: str                                   # static | bucketed | padded
    target: tuple[int, int]                     # the static shape (--input)
    sizes: list[tuple[int, int]]
    buckets: list[tuple[int, int]] = field(default_factory=list)
    name: str = ""

    def __post_init__(self):
        if self.mode not in ("static", "bucketed", "padded"):
            raise OpkitError(f"shape mode {self.mode!r}: static, bucketed or padded")
        self.name = self.name or f"{self.base.name}@{self.mode}"

    def describe(self) -> dict:
        return {**self.base.describe(), "name": self.name, "shapes": self.mode, "target": list(self.target),
                "buckets": [list(b) for b in self.buckets]}

    def warm(self) -> None:
        getattr(self.base, "warm", lambda: None)()

    def shape_for(self, size: tuple[int, int]) -> tuple[int, int]:
        if self.mode == "static":
            return tuple(self.target)
        if self.mode == "bucketed":
            return bucket_for(size, self.buckets)
        return max(self.buckets, key=lambda b: b[0] * b[1])

    def prepare(self, model):
        run = self.base.prepare(model)

        def fn(x: torch.Tensor):
            groups: dict[tuple, list[int]] = {}
            shaped = []
            for i in range(len(x)):
                size = observed(x[i], self.sizes)
                raw = _resize(x[i], size)
                shape = self.shape_for(size)
                shaped.append(_resize(raw, shape) if self.mode == "static" else _pad(raw, shape))
                groups.setdefault(tuple(shape), []).append(i)
            out = [None] * len(x)
            for idx in groups.values():
                y = run(torch.stack([shaped[i] for i in idx]))
                y = y if isinstance(y, torch.Tensor) else next(t for t in y if isinstance(t, torch.Tensor))
                for j, i in enumerate(idx):
                    out[i] = y[j]
            return torch.stack(out)
        return fn
