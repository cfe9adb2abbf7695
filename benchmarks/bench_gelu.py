"""Issues 14 and 25 row: bundled gelu_fp32 (erf form) vs F.gelu at [4096, 1024] (issue 25: goal <= 3x; issue 14 had
[4096, 4096] and 4x).

    python benchmarks/bench_gelu.py [--workspace WS] [--repeat 9]

The goal is judged on the fp32 row's one-thread CPU-time ratio (load-robust); all figures are printed."""
from __future__ import annotations

import _bench

if __name__ == "__main__":
    import torch
    import torch.nn.functional as F

    _bench.op_vs_torch(__doc__, "gelu_fp32 (erf) vs F.gelu, [4096, 1024]", "gelu_fp32",
                       lambda dt, g: (torch.randn(4096, 1024, generator=g).to(dt),),
                       lambda op, x: op(x, "none"), lambda x: F.gelu(x), goal=3.0)
