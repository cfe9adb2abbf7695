"""Issue 14 row: bundled layer_norm_fp32 vs F.layer_norm at [4096, 1024] (goal <= 2x), fp32/fp16/bf16.

    python benchmarks/bench_layer_norm.py [--workspace WS] [--repeat 9]

WS: a workspace with layer_norm_fp32 built; default: the bundled op (built into the cache on first use).
The goal is judged on the fp32 row's one-thread CPU-time ratio (load-robust); all figures are printed."""
from __future__ import annotations

import _bench

if __name__ == "__main__":
    import torch
    import torch.nn.functional as F

    _bench.op_vs_torch(__doc__, "layer_norm_fp32 vs F.layer_norm, [4096, 1024]", "layer_norm_fp32",
                       lambda dt, g: tuple(torch.randn(*s, generator=g).to(dt)
                                           for s in ((4096, 1024), (1024,), (1024,))),
                       lambda op, x, w, b: op(x, w, b, 1e-5),
                       lambda x, w, b: F.layer_norm(x, (1024,), w, b, 1e-5), goal=2.0)
