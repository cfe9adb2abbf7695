"""Merged predictions and the figures read from them: top-k, per-class accuracy, changed samples.

Accuracies are percentages (78.0 means 78.0 %), the unit deployment targets and the CI gate's points use.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import OpkitError


class Merger:
    """Per-sample predictions keyed by index: a rerun shard fills the same rows (never counted twice); a
    rerun that disagrees with a first result is an error, and ``result()`` refuses holes."""

    def __init__(self, n: int, names: list[str], k: int, check_classes=None):
        self.n, self.k = n, k
        self.check_classes = check_classes      # called with the model's class count on the first result
        self.pred = {name: np.full((n, k), -2, dtype=np.int64) for name in names}      # -2: not yet run
        self.filled = np.zeros(n, dtype=bool)
        self.classes: dict[str, int] = {}

    def add(self, shard: dict) -> int:
        """Merge one shard result; returns how many samples were new."""
        idx = np.asarray(shard["indices"], dtype=np.int64)
        for name, c in shard["classes"].items():
            if not self.classes and self.check_classes is not None:
                self.check_classes(c)            # labels out of range: said before the whole set has run
            if self.classes.setdefault(name, c) != c:
                raise OpkitError(f"variant {name}: {c} classes on samples {idx[0]}..{idx[-1]}, "
                                 f"{self.classes[name]} elsewhere")
        again = self.filled[idx]
        for name, p in shard["topk"].items():
            old = self.pred[name][idx[again]]
            if again.any() and not np.array_equal(old, p[again]):
                raise OpkitError(f"variant {name}: a rerun of samples {idx[0]}..{idx[-1]} predicted differently "
                                 "from the first run (the model is not deterministic)")
            self.pred[name][idx] = p
        new = int((~again).sum())
        self.filled[idx] = True
        return new

    def missing(self) -> np.ndarray:
        return np.nonzero(~self.filled)[0]


@dataclass
class EvalResult:
    n: int
    k: int
    labels: np.ndarray                    # int64 [n]
    classes: list[str]                    # class names by label
    predictions: dict[str, np.ndarray]    # variant -> int64 [n, k] top-k class indices (-1: non-finite output)
    variants: list[dict]                  # describe() of each variant, in order
    data: dict                            # source, n, classes, transform, hash
    model: str
    backend: str = "in-process"           # in-process | local (N processes) | ray (ADDRESS)
    workers: int = 1
    shards: int = 1
    reruns: int = 0                       # shards run again after a worker died
    seconds: float = 0.0
    num_classes: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [v["name"] for v in self.variants]

    def topk(self, name: str, k: int = 1) -> float:
        """Top-``k`` accuracy of variant ``name`` in percent."""
        if self.n == 0:
            return 0.0
        p = self.predictions[name][:, :min(k, self.k)]
        return 100.0 * float((p == self.labels[:, None]).any(1).mean())

    def top1_predictions(self, name: str) -> list[int]:
        return self.predictions[name][:, 0].tolist()

    def per_class(self, name: str) -> list[dict]:
        hit = self.predictions[name][:, 0] == self.labels
        rows = []
        for c, cname in enumerate(self.classes):
            sel = self.labels == c
            n = int(sel.sum())
            if n:
                rows.append({"class": cname, "label": c, "n": n, "top1": 100.0 * float(hit[sel].mean())})
        return rows

    def changed(self, name: str, ref: str = "fp32") -> list[dict]:
        """Samples whose top-1 prediction differs between ``ref`` and ``name``."""
        a, b = self.predictions[ref][:, 0], self.predictions[name][:, 0]
        rows = []
        for i in np.nonzero(a != b)[0].tolist():
            y = int(self.labels[i])
            rows.append({"index": i, "label": y, "class": self.classes[y] if y < len(self.classes) else str(y),
                         ref: int(a[i]), name: int(b[i]),
                         "effect": "lost" if a[i] == y else "gained" if b[i] == y else "still wrong"})
        return rows

    @property
    def samples_per_s(self) -> float:
        return self.n * len(self.variants) / self.seconds if self.seconds > 0 else 0.0

    def to_json(self, primary: str | None = None, ref: str = "fp32") -> dict:
        """``top1``/``top5``/``n``/``predictions`` of ``primary`` (default: the last variant), ``fp32`` beside
        it when another variant is evaluated, and every variant under ``variants``."""
        primary = primary or self.names[-1]
        out = {"model": self.model, "variant": primary, "n": self.n,
               "top1": self.topk(primary, 1), "top5": self.topk(primary, 5),
               "predictions": self.top1_predictions(primary),
               "data": self.data, "variants": [], "per_class": self.per_class(primary)}
        if primary != ref and ref in self.predictions:
            out["fp32"] = {"top1": self.topk(ref, 1), "top5": self.topk(ref, 5)}
            out["delta_top1"] = out["top1"] - out["fp32"]["top1"]
            out["changed"] = self.changed(primary, ref)
        for v in self.variants:
            out["variants"].append({**v, "top1": self.topk(v["name"], 1), "top5": self.topk(v["name"], 5)})
        out["run"] = {"backend": self.backend, "workers": self.workers, "shards": self.shards,
                      "reruns": self.reruns, "seconds": round(self.seconds, 3),
                      "samples_per_s": round(self.samples_per_s, 2)}
        out["notes"] = self.notes
        return out
