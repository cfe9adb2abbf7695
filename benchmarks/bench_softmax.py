"""Issue 14 row: bundled softmax_fp32 vs torch.softmax at [4096, 1024] over the last dim (goal <= 2x).

    python benchmarks/bench_softmax.py [--workspace WS] [--repeat 9]

The goal is judged on the fp32 row's one-thread CPU-time ratio (load-robust); all figures are printed."""
from __future__ import annotations

import argparse

import _bench


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", default=None)
    ap.add_argument("--repeat", type=int, default=9)
    _bench.add_dtype_arg(ap)
    args = ap.parse_args()
    _bench.banner("softmax_fp32 vs torch.softmax, [4096, 1024], dim -1")
    import torch
    _bench.load_ops(["softmax_fp32"], args.workspace)
    op = torch.ops.opkit.softmax_fp32
    g = torch.Generator().manual_seed(0)
    cases = []
    for dt in _bench.torch_dtypes(args):
        x = torch.randn(4096, 1024, generator=g).to(dt)
        cases.append((str(dt).replace("torch.", ""), lambda x=x: op(x, -1), lambda x=x: torch.softmax(x, -1)))
    rows = _bench.op_rows("softmax", cases, args.repeat)
    _bench.done([(f"{rows[0][0]} CPU-time ratio", rows[0][1] / rows[0][2], 2.0, "x")])


if __name__ == "__main__":
    main()
