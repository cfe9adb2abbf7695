"""The per-shard function every runner calls (in process, on local worker processes, on Ray workers).

A shard is a list of sample indices; it is cut into batches of ``batch_size`` consecutive indices, the same
batches whatever runs the shard, so every backend computes each sample in the same batch. The result is
keyed by sample index: ``{"indices": [...], "topk": {variant: int64 [n, k]}, "classes": {variant: C}}``,
with -1 in every column of a sample whose output holds a NaN or inf (a wrong prediction, never a lucky
argmax over NaN).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn

from ..data.sets import LabelledSet
from ..errors import OpkitError
from .variants import logits


@dataclass
class ModelRef:
    """A model to evaluate: a factory spec (``pkg.module:factory`` / ``file.py:factory``, reloadable by any
    worker) and/or the module itself (in this process; shipped by value to Ray)."""

    spec: str | None = None
    module: nn.Module | None = None

    def load(self) -> nn.Module:
        if self.module is not None:
            return self.module
        from ..toolchain.user_code import load_model     # the one MODEL loader of every command
        return load_model(self.spec)[0]

    def describe(self) -> str:
        return self.spec or type(self.module).__name__

    def __getstate__(self):
        # a spec travels alone (each worker loads it); only a model without a spec travels by value
        return {"spec": self.spec, "module": self.module if self.spec is None else None}


class Prepared:
    """A model and its variants ready to run shards (built once per worker process)."""

    def __init__(self, model: ModelRef, dataset: LabelledSet, variants: list, sys_path: list[str] | None = None):
        for p in reversed(sys_path or []):
            if p not in sys.path:
                sys.path.insert(0, p)
        self.dataset = dataset
        self.module = model.load()
        self.module.eval()
        self.variants = variants
        self.fns = [(v.name, v.prepare(self.module)) for v in variants]

    def run(self, indices, k: int, batch_size: int) -> dict:
        return run_shard(self.fns, self.dataset, indices, k, batch_size)


def run_shard(fns, dataset: LabelledSet, indices, k: int, batch_size: int) -> dict:
    """Run every ``(name, fn)`` variant over ``indices`` of ``dataset``; top-``k`` predictions by index."""
    indices = [int(i) for i in indices]
    topk: dict[str, list[np.ndarray]] = {name: [] for name, _ in fns}
    classes: dict[str, int] = {}
    for s in range(0, len(indices), batch_size):
        idx = indices[s:s + batch_size]
        x, _ = dataset.batch(idx)
        for name, fn in fns:
            where = f"variant {name} on samples {idx[0]}..{idx[-1]}"
            out = logits(fn(x), where)
            if out.shape[0] != len(idx):
                raise OpkitError(f"{where}: the model returned {out.shape[0]} rows for a batch of {len(idx)}")
            c = out.shape[1]
            if classes.setdefault(name, c) != c:
                raise OpkitError(f"{where}: {c} classes, {classes[name]} on an earlier batch")
            kk = min(k, c)
            pred = out.topk(kk, dim=1).indices
            if kk < k:
                pred = torch.cat([pred, torch.full((len(idx), k - kk), -1, dtype=pred.dtype)], 1)
            pred[~torch.isfinite(out).all(1)] = -1
            topk[name].append(pred.numpy().astype(np.int64))
    return {"indices": indices,
            "topk": {n: (np.concatenate(v) if v else np.zeros((0, k), np.int64)) for n, v in topk.items()},
            "classes": classes}


def described_variants(variants, described):
    """The variants as the workers prepared them (with their notes), as objects with describe()."""
    if described is None:
        return variants

    class _D:
        def __init__(self, d):
            self.d = d
            self.name = d["name"]

        def describe(self):
            return self.d
    return [_D(d) for d in described]
