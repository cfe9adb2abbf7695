"""Emulator speed: a LayerNorm-style AscendC kernel (copy-in, cast to float, reduce, normalise, cast back,
copy-out; tests/emulator/test_launch.cpp) run through the emulator's module ABI, against
torch.nn.functional.layer_norm on the CPU with the same input, for fp32/fp16/bf16 at [4096, 1024].

    PYTHONPATH=python python benchmarks/bench_emulator.py [--rows 4096 --cols 1024 --repeat 15]

Prints median wall times and the ratio emulator/torch (target <= 1.5). Both sides use all host cores
(the emulator runs blocks on host threads; torch uses its intra-op pool)."""
from __future__ import annotations

import argparse
import os
import statistics
import struct
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from opkit.emulator.abi import KernelModule  # noqa: E402
from opkit.emulator.modules import compile_module  # noqa: E402

KERNEL = ROOT / "tests" / "emulator" / "test_launch.cpp"
DTYPES = {"fp32": ("float", torch.float32), "fp16": ("half", torch.float16), "bf16": ("bfloat16_t", torch.bfloat16)}


def median_ms(fn, repeat: int, clock=time.perf_counter) -> float:
    fn()  # warm-up (page faults, thread start)
    ts = []
    for _ in range(repeat):
        t = clock()
        fn()
        ts.append(clock() - t)
    return statistics.median(ts) * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--blocks", type=int, default=48, help="block_dim (A2 has 48 vector cores)")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--build-dir", type=Path, default=ROOT / "build" / "bench-emulator")
    args = ap.parse_args()
    rows, cols, blocks = args.rows, args.cols, args.blocks
    tiling = np.frombuffer(struct.pack("IIIf", rows, cols, -(-rows // blocks), 1e-5), np.uint8).copy()
    print(f"LayerNorm [{rows}, {cols}], block_dim {blocks}, host cores {os.cpu_count()}, "
          f"torch threads {torch.get_num_threads()}")
    print(f"{'dtype':6} {'emulator ms':>12} {'torch ms':>10} {'ratio':>7} {'max |diff|':>11}"
          f" | 1 thread CPU ms: {'emulator':>9} {'torch':>7} {'ratio':>6}")
    worst = 0.0
    for name, (ctype, tdt) in DTYPES.items():
        mod = KernelModule(compile_module(KERNEL, "emu_layer_norm", 6, args.build_dir, defines={"DTYPE_X": ctype}))
        g = torch.Generator().manual_seed(0)
        x = torch.randn(rows, cols, generator=g).to(tdt)
        w = torch.rand(cols, generator=g).to(tdt)
        b = torch.rand(cols, generator=g).to(tdt)
        y = torch.empty_like(x)
        # torch tensors share memory with these numpy views (bf16 viewed as int16 bits)
        nx, nw, nb, ny = (t.view(torch.int16).numpy() if tdt == torch.bfloat16 else t.numpy() for t in (x, w, b, y))
        bufs = [nx, nw, nb, ny, None, tiling]
        emu_ms = median_ms(lambda: mod.launch(bufs, blocks), args.repeat)
        ref = None

        def run_torch():
            nonlocal ref
            ref = torch.nn.functional.layer_norm(x, (cols,), w, b, 1e-5)

        torch_ms = median_ms(run_torch, args.repeat)
        diff = (y.float() - ref.float()).abs().max().item()
        ratio = emu_ms / torch_ms
        worst = max(worst, ratio)
        # Per-core cost, less sensitive to other load on the machine: one thread each, CPU time.
        emu_cpu = median_ms(lambda: mod.launch(bufs, blocks, threads=1), args.repeat, time.process_time)
        nthreads = torch.get_num_threads()
        torch.set_num_threads(1)
        torch_cpu = median_ms(run_torch, args.repeat, time.process_time)
        torch.set_num_threads(nthreads)
        print(f"{name:6} {emu_ms:12.2f} {torch_ms:10.2f} {ratio:7.2f} {diff:11.3g}"
              f" | {'':17}{emu_cpu:9.2f} {torch_cpu:7.2f} {emu_cpu / torch_cpu:6.2f}")
    print(f"worst ratio {worst:.2f} (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
