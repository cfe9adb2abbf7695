"""q16 (issue 37 / 38 item 2): ``torch._int_mm`` (int8 x int8 -> int32) against the float32 ``F.linear`` of the same
integer codes -- today's exact one-matmul INT8 Linear -- on the encoder's shapes, and whether it is exact, with
oneDNN at this host's ISA and capped (``ONEDNN_MAX_CPU_ISA``: AVX2 = no VNNI, SSE41 = baseline), each cap in its own
process. One torch thread, process CPU, fastest of 5 x 300 calls; exact = equal to the float64 product on
full-range random codes. The caps emulate no real host: torch 2.13 calls oneDNN for ``_int_mm`` only where cpuinfo
reports AVX-512 VNNI (``_int_mm_out_cpu``, pytorch aten/src/ATen/native/LinearAlgebra.cpp), elsewhere an exact
scalar loop; they show the int16-saturating kernels int_gemm's exactness check guards against (and on a host
without AVX-512 VNNI they change nothing).

    python benchmarks/bench_int_mm.py
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

from _bench import banner, load

SHAPES = ((1024, 48, 64), (1024, 32, 96), (1024, 32, 128), (1024, 160, 32), (64, 64, 10), (16, 64, 64))


def _one() -> None:
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(1)

    def best(fn) -> float:
        out = []
        for _ in range(5):
            t = time.process_time()
            for _ in range(300):
                fn()
            out.append((time.process_time() - t) / 300)
        return min(out) * 1e6

    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "(host)")
    print(f"   oneDNN ISA {cap:<7} torch capability {torch.backends.cpu.get_cpu_capability()}")
    for m, k, n in SHAPES:
        a = torch.randint(-128, 128, (m, k), dtype=torch.int8)
        w = torch.randint(-128, 128, (n, k), dtype=torch.int8)
        exact = torch.equal(torch._int_mm(a, w.t()).double(), a.double() @ w.double().t())
        af, wf = a.float(), w.float()
        ti, tf = best(lambda: torch._int_mm(a, w.t())), best(lambda: F.linear(af, wf))
        print(f"     {m:>5} x {k:>4} @ {k:>4} x {n:>4}: _int_mm {ti:7.1f} us  F.linear {tf:7.1f} us  "
              f"{tf / ti:5.2f}x  exact {exact}")


def main() -> None:
    if "--child" in sys.argv:
        _one()
        return
    banner("q16: torch._int_mm vs float32 F.linear on the same int8 codes, one thread, process CPU")
    for cap in (None, "AVX2", "SSE41"):
        env = dict(os.environ)
        if cap:
            env["ONEDNN_MAX_CPU_ISA"] = cap
        subprocess.run([sys.executable, __file__, "--child"], env=env, check=True)
    print(f"   after: {load()}")


if __name__ == "__main__":
    main()
