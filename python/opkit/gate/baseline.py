"""The committed accuracy baseline (``.npu-accuracy-baseline``): the best top-1 per model, variant and data hash.

Format (JSON)::

    {"opkit_accuracy_baseline": 1,
     "entries": {"convnext/cann-force-fp16@3f2a...": {"key": "convnext/cann-force-fp16", "data_hash": "3f2a...",
                  "best": 78.3, "history": [{"top1": 78.3, "time": "2026-12-04T19:30:00Z", "commit": "ab12cd3"}]}}}

Rules: a result more than ``threshold`` points below the entry's best fails; the best rises only when the run
asks for it (``--opkit-update-baseline``) and is never lowered by a run (to accept a loss, edit the file in a
reviewed commit); the file is written to a temporary file and renamed over the old one.
"""
from __future__ import annotations

import datetime
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import OpkitError
from ..evaluate.target import Target
from ..toolchain.files import write_json

FORMAT = 1


def parse_threshold(text) -> float:
    """``0.5%`` or ``0.5`` -> 0.5 (points of top-1)."""
    s = str(text).strip()
    try:
        v = float(s[:-1] if s.endswith("%") else s)
    except ValueError:
        raise OpkitError(f"--opkit-threshold {text!r}: expected points of top-1, e.g. 0.5 or 0.5%") from None
    if v < 0:
        raise OpkitError(f"--opkit-threshold {text!r}: must not be negative")
    return v


def entry_id(key: str, data_hash: str) -> str:
    return f"{key}@{data_hash}" if data_hash else key


def read(path: Path) -> dict:
    if not path.is_file():
        return {"opkit_accuracy_baseline": FORMAT, "entries": {}}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise OpkitError(f"{path}: cannot read the accuracy baseline: {e}") from None
    if not isinstance(data, dict) or data.get("opkit_accuracy_baseline") != FORMAT or \
            not isinstance(data.get("entries"), dict):
        raise OpkitError(f"{path}: not an opkit accuracy baseline (field opkit_accuracy_baseline: {FORMAT} and an "
                         "'entries' object expected)")
    for eid, e in data["entries"].items():
        if not isinstance(e, dict) or not isinstance(e.get("best"), (int, float)) or "key" not in e:
            raise OpkitError(f"{path}: entry {eid!r}: needs key, data_hash and a numeric best")
    return data


@dataclass
class Verdict:
    key: str
    data_hash: str
    top1: float
    best: float | None        # the stored best (None: no entry)
    threshold: float
    ok: bool
    message: str

    @property
    def delta(self) -> float | None:
        return None if self.best is None else self.top1 - self.best


def judge(data: dict, path: Path, key: str, top1: float, data_hash: str, threshold: float) -> Verdict:
    """Compare one result with the baseline's best for (key, data hash)."""
    if not 0.0 <= top1 <= 100.0:
        raise OpkitError(f"opkit_accuracy.record({key!r}, {top1}): top-1 is in percent (0..100)")
    e = data["entries"].get(entry_id(key, data_hash))
    if e is None:
        others = sorted(v.get("data_hash", "") for v in data["entries"].values() if v.get("key") == key)
        if others and data_hash:
            return Verdict(key, data_hash, top1, None, threshold, False,
                           f"{path}: {key} is recorded for data hash {', '.join(others)}, but this run used data "
                           f"hash {data_hash}: the data changed, so the stored best does not apply (store a new "
                           "entry with --opkit-update-baseline after checking the data)")
        return Verdict(key, data_hash, top1, None, threshold, True,
                       f"{key}: top-1 {top1:.2f}% (no baseline entry in {path}; --opkit-update-baseline stores it)")
    best = float(e["best"])
    drop = best - top1
    if not Target.drop(best, threshold).met(top1):
        return Verdict(key, data_hash, top1, best, threshold, False,
                       f"{key}: top-1 {top1:.2f}% is {drop:.2f} points below the best {best:.2f}% recorded in "
                       f"{path} (threshold {threshold:g} points)")
    if top1 > best:
        return Verdict(key, data_hash, top1, best, threshold, True,
                       f"{key}: top-1 {top1:.2f}% is {top1 - best:.2f} points above the best {best:.2f}% "
                       "(--opkit-update-baseline stores it)")
    return Verdict(key, data_hash, top1, best, threshold, True,
                   f"{key}: top-1 {top1:.2f}% within {threshold:g} points of the best {best:.2f}%")


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def update(path: Path, results: list[dict]) -> list[str]:
    """Store ``results`` ({key, data_hash, top1}): history appended, best raised, never lowered. Returns notes."""
    data = read(path)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    commit = os.environ.get("GITHUB_SHA", "")[:12] or os.environ.get("CI_COMMIT_SHORT_SHA", "") or _commit()
    notes = []
    for r in results:
        eid = entry_id(r["key"], r["data_hash"])
        e = data["entries"].setdefault(eid, {"key": r["key"], "data_hash": r["data_hash"], "best": r["top1"],
                                             "history": []})
        e.setdefault("history", []).append({"top1": r["top1"], "time": now, "commit": commit})
        if r["top1"] > e["best"]:
            notes.append(f"{r['key']}: best raised {e['best']:.2f}% -> {r['top1']:.2f}%")
            e["best"] = r["top1"]
        elif r["top1"] < e["best"]:
            notes.append(f"{r['key']}: best kept at {e['best']:.2f}% ({r['top1']:.2f}% this run; a baseline is "
                         "never lowered by a run)")
        else:
            notes.append(f"{r['key']}: best {e['best']:.2f}%")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, data)
    return notes
