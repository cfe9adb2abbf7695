"""Per-call cost of torch.ops.opkit.layer_norm_fp32 vs F.layer_norm on the same [8, 1024] input (issue 3,
target <= 2x), plus the fixed cost of a call on a tiny input.

    python benchmarks/bench_call_overhead.py [--workspace WS]

WS: a workspace whose layer_norm_fp32 is built (`opkit build`); default: the bundled op via opkit.load()
(built into the per-user cache on first use).
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F

import opkit


def per_call_us(fn, calls: int, repeats: int) -> float:
    for _ in range(max(10, calls // 10)):
        fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", default=None)
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch intra-op threads (1: steadier figures on a shared 2-core machine)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.workspace:
        opkit.load(args.workspace, ops=["layer_norm_fp32"], bundled=False)
    else:
        opkit.load()
    op = torch.ops.opkit.layer_norm_fp32
    res = {"threads": torch.get_num_threads()}
    for dt in (torch.float32, torch.float16):
        x = torch.randn(8, 1024, dtype=dt)
        w, b = torch.randn(1024, dtype=dt), torch.randn(1024, dtype=dt)
        ours = per_call_us(lambda: op(x, w, b, 1e-5), args.calls, args.repeats)
        ref = per_call_us(lambda: F.layer_norm(x, (1024,), w, b, 1e-5), args.calls, args.repeats)
        res[str(dt)] = {"opkit_us": ours, "F.layer_norm_us": ref, "ratio": ours / ref}
        print(f"[8, 1024] {str(dt):14s} opkit {ours:8.1f} us   F.layer_norm {ref:8.1f} us   ratio {ours / ref:5.2f}x")
    t = torch.randn(1, 8)
    tw, tb = torch.randn(8), torch.randn(8)
    res["tiny_opkit_us"] = per_call_us(lambda: op(t, tw, tb, 1e-5), args.calls, args.repeats)
    res["tiny_F_us"] = per_call_us(lambda: F.layer_norm(t, (8,), tw, tb, 1e-5), args.calls, args.repeats)
    print(f"[1, 8] float32        opkit {res['tiny_opkit_us']:8.1f} us   F.layer_norm {res['tiny_F_us']:8.1f} us"
          "   (fixed cost: dispatch, checks, tiling, launch)")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
