"""Issue 14 row: bundled layer_norm_fp32 vs F.layer_norm at [4096, 1024] (goal <= 2x), fp32/fp16/bf16.

    python benchmarks/bench_layer_norm.py [--workspace WS] [--repeat 9]

WS: a workspace with layer_norm_fp32 built; default: the bundled op (built into the cache on first use).
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
    _bench.banner("layer_norm_fp32 vs F.layer_norm, [4096, 1024]")
    import torch
    import torch.nn.functional as F
    _bench.load_ops(["layer_norm_fp32"], args.workspace)
    op = torch.ops.opkit.layer_norm_fp32
    g = torch.Generator().manual_seed(0)
    cases = []
    for dt in _bench.torch_dtypes(args):
        x, w, b = (torch.randn(*s, generator=g).to(dt) for s in ((4096, 1024), (1024,), (1024,)))
        cases.append((str(dt).replace("torch.", ""), lambda x=x, w=w, b=b: op(x, w, b, 1e-5),
                      lambda x=x, w=w, b=b: F.layer_norm(x, (1024,), w, b, 1e-5)))
    rows = _bench.op_rows("layer_norm", cases, args.repeat)
    _bench.done([(f"{rows[0][0]} CPU-time ratio", rows[0][1] / rows[0][2], 2.0, "x")])


if __name__ == "__main__":
    main()
