"""`opkit quant MODEL --workers 1` beside `--workers 2` (the default on a 2-core machine: one per core), the
real command on the test suite's small classifier (tests/quantdata/models.py:mixed_scale), side by side in one
run, plus plain PyTorch FP32 inference of the same labelled set. Prints wall and CPU seconds (the command and
its worker processes) and the load average: the shared default `--workers` (docs/cli.md "Options") must not
make quant slower than one process.

    .venv/bin/python benchmarks/bench_quant_workers.py [--eval 2000] [--search]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from _bench import ROOT, banner, load, opkit_cmd, run

import torch

sys.path.insert(0, str(ROOT / "tests"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--eval", type=int, default=2000, help="labelled samples")
    ap.add_argument("--search", action="store_true", help="with the searches (default: --no-search)")
    a = ap.parse_args()
    from quantdata.models import inputs, labelled, mixed_scale

    banner(f"opkit quant --workers 1 vs 2, {a.eval} labelled samples")
    m = mixed_scale()
    x, y = labelled(m, a.eval, seed=1)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        torch.save({"x": inputs(64, seed=2)}, tmp / "calib.pt")
        torch.save({"x": x, "y": y}, tmp / "val.pt")
        t = time.perf_counter()
        with torch.no_grad():
            for i in range(0, len(x), 16):
                m(x[i:i + 16])
        print(f"   plain PyTorch FP32 inference of the set: {time.perf_counter() - t:.2f} s wall")
        spec = f"{ROOT / 'tests' / 'quantdata' / 'models.py'}:mixed_scale"
        base = ["quant", spec, "--calib", str(tmp / "calib.pt"), "--data", str(tmp / "val.pt")]
        base += [] if a.search else ["--no-search"]
        tops = {}
        for w in (1, 2):
            wall, cpu, _ = run(opkit_cmd(*base, "--workers", str(w), "--json", str(tmp / f"r{w}.json")), cwd=tmp)
            r = json.loads((tmp / f"r{w}.json").read_text())
            tops[w] = [(s["name"], s["top1"]) for s in r["strategies"]]
            print(f"   --workers {w}: {wall:6.1f} s wall, {cpu:6.1f} CPU s, {r['evaluations']} evaluations, "
                  f"backends {r['eval_backends']}")
        print(f"   same strategy rows and top-1 on both: {tops[1] == tops[2]}")
    print(f"   after: {load()}")


if __name__ == "__main__":
    main()
