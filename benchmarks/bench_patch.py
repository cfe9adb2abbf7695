"""Cost of opkit.patch on the CPU (the emulator): patched vs unpatched model time per batch, and the
per-call overhead of an opkit op vs the native op on tiny inputs.

    python benchmarks/bench_patch.py [--size 224] [--batch 8] [--repeat 3]

The emulator runs AscendC kernels on the host (scalar C++ per vector instruction), so patched-model time
on CPU says nothing about NPU speed; it shows what a user pays for running the patched model here
(tests, the accuracy example). The tiny-input figures are the fixed cost of the binding: dispatcher,
checks, casts, tiling, module launch through the emulator.
"""
from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "convnext"))
from model import ConvNeXt, realistic_init  # noqa: E402

import opkit  # noqa: E402


def per_call(fn, repeat: int, inner: int) -> float:
    """Median over `repeat` timings of `inner` calls, in seconds per call."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times)


def model_times(args) -> None:
    torch.manual_seed(0)
    base = ConvNeXt(num_classes=100).eval()
    realistic_init(base)
    x = torch.randn(args.batch, 3, args.size, args.size, generator=torch.Generator().manual_seed(0))
    configs = []
    for dtype in (torch.float32, torch.float16):
        plain = copy.deepcopy(base).to(dtype)
        patched = copy.deepcopy(base).to(dtype)
        opkit.patch(patched)
        configs.append((str(dtype).replace("torch.", ""), plain, patched, x.to(dtype)))
    print(f"ConvNeXt example model, input {args.batch}x3x{args.size}x{args.size}, {torch.get_num_threads()} threads,"
          f" median of {args.repeat}")
    print(f"{'dtype':8s} {'unpatched s/batch':>18s} {'patched s/batch':>16s} {'ratio':>6s}")
    with torch.no_grad():
        for name, plain, patched, xin in configs:
            t_plain = per_call(lambda: plain(xin), args.repeat, 1)
            t_patch = per_call(lambda: patched(xin), args.repeat, 1)
            print(f"{name:8s} {t_plain:18.3f} {t_patch:16.3f} {t_patch / t_plain:6.2f}")


def overhead(args) -> None:
    print(f"\nper-call time on tiny inputs (median of {args.repeat} x {args.inner} calls), microseconds")
    print(f"{'op':24s} {'shape':>8s} {'native':>9s} {'opkit':>9s} {'opkit_naive':>12s} {'overhead':>9s}")
    x = torch.randn(4, 16)
    w, b = torch.ones(16), torch.zeros(16)
    cases = [
        ("layer_norm_fp32", lambda: F.layer_norm(x, (16,), w, b), lambda ns: ns.layer_norm_fp32(x, w, b)),
        ("rms_norm_fp32", lambda: F.rms_norm(x, (16,), w, 1e-6), lambda ns: ns.rms_norm_fp32(x, w)),
        ("softmax_fp32", lambda: torch.softmax(x, -1), lambda ns: ns.softmax_fp32(x, -1)),
        ("gelu_fp32", lambda: F.gelu(x), lambda ns: ns.gelu_fp32(x)),
        ("silu_fp32", lambda: F.silu(x), lambda ns: ns.silu_fp32(x)),
    ]
    with torch.no_grad():
        for name, native, ours in cases:
            t_n = per_call(native, args.repeat, args.inner)
            t_o = per_call(lambda: ours(torch.ops.opkit), args.repeat, args.inner)
            t_v = per_call(lambda: ours(torch.ops.opkit_naive), args.repeat, args.inner)
            print(f"{name:24s} {'4x16':>8s} {t_n * 1e6:9.1f} {t_o * 1e6:9.1f} {t_v * 1e6:12.1f} "
                  f"{(t_o - t_n) * 1e6:9.1f}")
        # through autograd (requires_grad input): adds the Python autograd kernel's cost
        xg = x.clone().requires_grad_()
        t_n = per_call(lambda: F.layer_norm(xg, (16,), w, b), args.repeat, args.inner)
        t_o = per_call(lambda: torch.ops.opkit.layer_norm_fp32(xg, w, b), args.repeat, args.inner)
        print(f"{'layer_norm_fp32 (grad)':24s} {'4x16':>8s} {t_n * 1e6:9.1f} {t_o * 1e6:9.1f} {'':>12s} "
              f"{(t_o - t_n) * 1e6:9.1f}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--inner", type=int, default=200)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    opkit.load()
    model_times(args)
    overhead(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
