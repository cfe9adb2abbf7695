"""Issues 14 and 25 row: per-call cost of torch.ops.opkit.layer_norm_fp32 vs F.layer_norm on [8, 1024] (goal <= 2x),
plus the fixed cost of a call on a tiny [1, 8] input.

    python benchmarks/bench_call_overhead.py [--workspace WS] [--calls 300]

WS: a workspace whose layer_norm_fp32 is built (`opkit build`); default: the bundled op via
opkit.load(ops=[...]) (built into the per-user cache on first use). One thread on both sides; the figure
is CPU time of the calling thread per call (best of 9 batches), robust to other work on the machine.
"""
from __future__ import annotations

import argparse

import _bench


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", default=None)
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args()
    _bench.banner("per-call cost, layer_norm_fp32 vs F.layer_norm")
    import torch
    import torch.nn.functional as F
    _bench.load_ops(["layer_norm_fp32"], args.workspace)
    torch.set_num_threads(1)
    op = torch.ops.opkit.layer_norm_fp32
    rows = []
    for shape, dt in (((8, 1024), torch.float32), ((8, 1024), torch.float16), ((1, 8), torch.float32)):
        x, w, b = torch.randn(*shape, dtype=dt), torch.randn(shape[-1], dtype=dt), torch.randn(shape[-1], dtype=dt)
        ours = _bench.cpu_min(lambda: op(x, w, b, 1e-5), inner=args.calls)
        ref = _bench.cpu_min(lambda: F.layer_norm(x, shape[-1:], w, b, 1e-5), inner=args.calls)
        with _bench.emulator_checks("always"):
            checked = _bench.cpu_min(lambda: op(x, w, b, 1e-5), inner=args.calls)
        rows.append((shape, dt, ours, ref))
        print(f"   {list(shape)} {str(dt):14s} opkit {ours * 1e6:7.1f} us  F.layer_norm {ref * 1e6:6.1f} us  "
              f"ratio {ours / ref:5.2f}x | every launch checked: opkit {checked * 1e6:7.1f} us", flush=True)
    _bench.done([(f"{list(s)} {str(d).replace('torch.', '')} ratio", o / r, 2.0, "x") for s, d, o, r in rows[:2]])


if __name__ == "__main__":
    main()
