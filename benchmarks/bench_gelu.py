"""Issue 14 row: bundled gelu_fp32 (erf form) vs F.gelu at [4096, 4096] (goal <= 4x).

    python benchmarks/bench_gelu.py [--workspace WS] [--repeat 9]

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
    _bench.banner("gelu_fp32 (erf) vs F.gelu, [4096, 4096]")
    import torch
    import torch.nn.functional as F
    _bench.load_ops(["gelu_fp32"], args.workspace)
    op = torch.ops.opkit.gelu_fp32
    g = torch.Generator().manual_seed(0)
    cases = []
    for dt in _bench.torch_dtypes(args):
        x = torch.randn(4096, 4096, generator=g).to(dt)
        cases.append((str(dt).replace("torch.", ""), lambda x=x: op(x, "none"), lambda x=x: F.gelu(x)))
    rows = _bench.op_rows("gelu", cases, args.repeat)
    _bench.done([(f"{rows[0][0]} CPU-time ratio", rows[0][1] / rows[0][2], 4.0, "x")])


if __name__ == "__main__":
    main()
