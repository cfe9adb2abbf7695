"""What the torch binding's padding costs a call (docs/emulator.md "Data extent", torch binding): each input that
owns its block runs from a padded copy (copied in, its data copied back) and each output is allocated with the
device's padding (python/opkit/csrc/kernels.cpp `stage`, `padded_empty`). Per-call CPU time of
torch.ops.opkit.layer_norm_fp32 (3 inputs, 1 output) on a tiny, a small and a 1 MB input, launched fast (the default
`once`, after its first checked launch) and checked every time (`always`). --before TREE measures another checkout's
python/ (e.g. main's, without the padding) in a child the same way, alternating sides, so both come from one run.

    PYTHONPATH=python OPKIT_CACHE_DIR=... python benchmarks/bench_binding_padding.py --before /work/main/python

The before side builds into $OPKIT_CACHE_DIR + "_before" (its own binding and modules). One thread per side; the
figure is the best of 9 batches of --calls calls, CPU time of the calling thread."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import _bench

SHAPES = ((1, 8), (8, 1024), (64, 4096))


def measure(tree: str | None, calls: int) -> dict:
    _bench.import_opkit(tree)
    import torch
    _bench.load_ops(["layer_norm_fp32"], None)
    torch.set_num_threads(1)
    op = torch.ops.opkit.layer_norm_fp32
    out = {}
    for shape in SHAPES:
        x, w, b = torch.randn(*shape), torch.randn(shape[-1]), torch.randn(shape[-1])
        n = max(1, calls // (shape[0] * shape[1] // 1024 + 1))
        fast = _bench.cpu_min(lambda: op(x, w, b, 1e-5), inner=n)
        with _bench.emulator_checks("always"):
            checked = _bench.cpu_min(lambda: op(x, w, b, 1e-5), inner=max(1, n // 4))
        out[str(list(shape))] = (fast, checked)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=2, help="alternations of the sides")
    ap.add_argument("--before", help="another checkout's python/ to measure too, in a child")
    ap.add_argument("--tree", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.json:
        print(json.dumps(measure(a.tree, a.calls)))
        return
    _bench.banner("per-call cost of the binding's padding, layer_norm_fp32 (fast / every launch checked)")
    sides = [("this tree", None)] + ([("before", a.before)] if a.before else [])
    for r in range(a.rounds):
        for name, tree in sides:
            env = dict(os.environ, OPKIT_EMU_THREADS="1")
            if tree:
                env["OPKIT_CACHE_DIR"] = os.environ.get("OPKIT_CACHE_DIR", "/tmp/opkit_bench") + "_before"
            cmd = [sys.executable, __file__, "--json", "--calls", str(a.calls)] + (["--tree", tree] if tree else [])
            res = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env, check=True).stdout
            for shape, (fast, checked) in json.loads(res.strip().splitlines()[-1]).items():
                print(f"   round {r} {name:9s} {shape:12s} fast {fast * 1e6:9.1f} us   checked {checked * 1e6:9.1f} us",
                      flush=True)
    print(f"   after:  {_bench.load()}")


if __name__ == "__main__":
    main()
