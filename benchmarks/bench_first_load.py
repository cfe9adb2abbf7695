"""Issues 14 and 25 row: first `opkit.patch(model)` / `opkit.load()` on a fresh machine (issue 25 goal: the first
patch of a model with LayerNorm, GELU and softmax <= 60 s, with a progress bar).

    python benchmarks/bench_first_load.py [--ops layer_norm_fp32,gelu_fp32] [--all]

Each figure is a new Python process with an empty cache (OPKIT_CACHE_DIR in a temporary folder):
- `opkit.load(ops=[...])`: only the named bundled ops (and their backward ops) are built;
- `opkit.patch(model)` on a model with LayerNorm, GELU and softmax: only the ops its modules map to (and
  their backward ops), plus opkit's torch-side library (once per torch version);
- `--all`: `opkit.load()` of the whole bundled library (16 ops: many CPU-minutes on 2 cores).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import _bench

PATCH = """
import torch.nn as nn, opkit
m = nn.Sequential(nn.Linear(8, 8), nn.LayerNorm(8), nn.GELU(), nn.Softmax(dim=-1))
print(opkit.patch(m))
"""


def fresh(code: str) -> tuple[float, float, str]:
    with tempfile.TemporaryDirectory(prefix="opkit-cache-") as cache, tempfile.TemporaryDirectory() as cwd:
        env = dict(os.environ, OPKIT_CACHE_DIR=cache)
        wall, cpu, out = _bench.run([sys.executable, "-c", code], cwd=Path(cwd), env=env)
        built = sorted(p.name for p in Path(cache).glob("*/*") if (p / "build.json").is_file())
        if any(Path(cache).glob("runtime/*/_opkit_torch*.so")):
            built.append("_opkit_torch")
    return wall, cpu, f"built {', '.join(built)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", default="layer_norm_fp32")
    ap.add_argument("--all", action="store_true", help="also time opkit.load() of every bundled op")
    args = ap.parse_args()
    _bench.banner("first opkit.load() with an empty cache")
    ops = args.ops.split(",")
    rows = []
    for label, code in ((f"opkit.load(ops={ops})", f"import opkit; opkit.load(ops={ops!r})"),
                        ("opkit.patch(LayerNorm + GELU + softmax model)", PATCH)) + \
            ((("opkit.load() (all bundled)", "import opkit; opkit.load()"),) if args.all else ()):
        wall, cpu, built = fresh(code)
        print(f"   {label}: wall {wall:6.1f} s, CPU {cpu:6.1f} s; {built}", flush=True)
        rows.append((label, wall, cpu))
    _bench.done([(f"{label}, wall", wall, 60.0 if "patch" in label else 90.0, " s") for label, wall, _ in rows] +
                [(f"{label}, CPU / 2 cores (idle-machine estimate)", cpu / 2, 60.0 if "patch" in label else 90.0, " s")
                 for label, _, cpu in rows])


if __name__ == "__main__":
    main()
