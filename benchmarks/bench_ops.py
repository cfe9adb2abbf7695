"""Bundled-op benchmark (issue 6): emulator time vs the PyTorch CPU op, and the modelled 910B time vs
its HBM floor, at one large shape per op ([4096, 4096] elementwise, [4096, 1024] row ops).

    python benchmarks/bench_ops.py [--dtype float32|float16|bfloat16 ...] [--ops a,b] [--reps N]

Emulator time: wall time of one ``torch.ops.opkit.<op>`` call on this machine (best of --reps).
PyTorch time: the stock CPU op on the same tensors (best of --reps).
Modelled time: opkit.roofline.model() on the emulator's counters of that call (opkit.registration.last_launch()): GM bytes
and the busiest block's 256 B vector repeats, at the facts sheet's ESTIMATED 1.6 TB/s HBM and 1 repeat per
cycle per AIV at 1.8 GHz. The HBM floor is the op's unavoidable bytes (inputs read once, outputs written
once, in the dtypes the kernel reads and writes) over the same bandwidth. Target: modelled <= 1.3x floor
for memory-bound ops; ops whose vector work exceeds their memory time are listed as vector-bound.
"""
from __future__ import annotations

import argparse
import sys
import time

import torch
import torch.nn.functional as F

import opkit
from opkit import loader, registration, roofline

EW = (4096, 4096)      # elementwise shape
ROW = (4096, 1024)     # row-op shape
TARGET = 1.3


def _rms(x, w, eps=1e-6):
    return F.rms_norm(x, (x.shape[-1],), w, eps)


def cases(dt):
    """name -> (opkit call, torch call, input tensors, kernel output bytes)."""
    g = torch.Generator().manual_seed(0)

    def rn(*shape, dtype=dt):
        return torch.randn(*shape, generator=g).to(dtype)

    x_ew, dy_ew = rn(*EW), rn(*EW)
    x, r, dy = rn(*ROW), rn(*ROW), rn(*ROW)
    w, b = rn(ROW[1]), rn(ROW[1])
    y_soft = torch.softmax(x.float(), -1).to(dt)
    ops = torch.ops.opkit
    isz = x.element_size()
    rows = ROW[0]
    c = {
        "gelu_fp32": (lambda: ops.gelu_fp32(x_ew, "none"), lambda: F.gelu(x_ew), [x_ew], x_ew.nbytes),
        "gelu_fp32[tanh]": (lambda: ops.gelu_fp32(x_ew, "tanh"), lambda: F.gelu(x_ew, approximate="tanh"), [x_ew],
                            x_ew.nbytes),
        "silu_fp32": (lambda: ops.silu_fp32(x_ew), lambda: F.silu(x_ew), [x_ew], x_ew.nbytes),
        "gelu_fp32_backward": (lambda: ops.gelu_fp32_backward(x_ew, dy_ew, "none"),
                               lambda: torch.ops.aten.gelu_backward(dy_ew, x_ew), [x_ew, dy_ew], x_ew.nbytes),
        "silu_fp32_backward": (lambda: ops.silu_fp32_backward(x_ew, dy_ew),
                               lambda: torch.ops.aten.silu_backward(dy_ew, x_ew), [x_ew, dy_ew], x_ew.nbytes),
        "softmax_fp32": (lambda: ops.softmax_fp32(x, -1), lambda: F.softmax(x, -1), [x], x.nbytes),
        "log_softmax_fp32": (lambda: ops.log_softmax_fp32(x, -1), lambda: F.log_softmax(x, -1), [x], x.nbytes),
        "softmax_fp32_backward": (lambda: ops.softmax_fp32_backward(y_soft, dy, -1),
                                  lambda: torch._softmax_backward_data(dy, y_soft, -1, dt), [y_soft, dy], x.nbytes),
        "reduce_sum_fp32": (lambda: ops.reduce_sum_fp32(x, -1, False), lambda: torch.sum(x, -1), [x], rows * isz),
        "reduce_mean_fp32": (lambda: ops.reduce_mean_fp32(x, -1, False), lambda: torch.mean(x, -1), [x], rows * isz),
        # indices: the kernel writes int32 (op.yaml kernel_dtype); the binding widens them to int64.
        "reduce_max_fp32": (lambda: ops.reduce_max_fp32(x, -1, False), lambda: torch.max(x, -1), [x],
                            rows * isz + rows * 4),
        "layer_norm_fp32": (lambda: ops.layer_norm_fp32(x, w, b, 1e-5),
                            lambda: F.layer_norm(x, (ROW[1],), w, b, 1e-5), [x, w, b], x.nbytes),
        "rms_norm_fp32": (lambda: ops.rms_norm_fp32(x, w, 1e-6), lambda: _rms(x, w), [x, w], x.nbytes),
        "add_layer_norm_fp32": (lambda: ops.add_layer_norm_fp32(x, r, w, b, 1e-5),
                                lambda: F.layer_norm(x + r, (ROW[1],), w, b, 1e-5), [x, r, w, b], 2 * x.nbytes),
        "add_rms_norm_fp32": (lambda: ops.add_rms_norm_fp32(x, r, w, 1e-6), lambda: _rms(x + r, w), [x, r, w],
                              2 * x.nbytes),
    }
    return c


def best_time(fn, reps: int) -> float:
    fn()   # warm-up (first call allocates, loads the kernel module)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dtype", action="append", choices=["float32", "float16", "bfloat16"])
    ap.add_argument("--ops", help="comma-separated subset")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    dtypes = args.dtype or ["float32", "float16"]

    misses, failures = [], []
    wanted = sorted({n.split("[")[0] for n in cases(torch.float32)
                     if not args.ops or n.split("[")[0] in args.ops.split(",")})
    for snake in wanted:   # one by one: an op that is not built is reported, the others still run
        try:
            opkit.load(ops=[snake], quiet=True)
        except Exception as e:
            failures.append(f"{snake}: not loaded: {e}")
    libs = loader.loaded()
    print(f"model: {roofline.model({'blocks': 1}, 1)['assumptions']}; target modelled <= {TARGET}x HBM floor "
          "for memory-bound ops")
    hdr = f"{'op':24} {'dtype':9} {'emu ms':>9} {'torch ms':>9} {'emu/torch':>9} {'model us':>9} " \
          f"{'floor us':>9} {'x floor':>7} {'bound':>6} {'blocks':>6}  verdict"
    for dname in dtypes:
        dt = getattr(torch, dname)
        print()
        print(hdr)
        for name, (ours, ref, inputs, out_bytes) in cases(dt).items():
            if args.ops and name.split("[")[0] not in args.ops.split(","):
                continue
            snake = name.split("[")[0]
            if snake not in libs:
                print(f"{name:24} {dname:9} not loaded")
                continue
            try:
                t_emu = best_time(ours, args.reps)
                stats = registration.last_launch()
            except Exception as e:  # report and go on: one broken op must not hide the others
                failures.append(f"{name} {dname}: {type(e).__name__}: {e}")
                print(f"{name:24} {dname:9} FAILED: {e}")
                continue
            t_ref = best_time(ref, args.reps)
            ideal = sum(t.nbytes for t in inputs) + out_bytes
            m = roofline.model(stats, ideal)
            ratio = m["vs_floor"]
            if m["bound"] == "memory":
                verdict = "ok" if ratio <= TARGET else "MISS"
            else:
                verdict = "vector-bound" + (" (ok)" if ratio <= TARGET else " MISS")
            if ratio > TARGET:
                misses.append((name, dname, ratio, m))
            print(f"{name:24} {dname:9} {t_emu * 1e3:9.1f} {t_ref * 1e3:9.2f} {t_emu / t_ref:9.1f} "
                  f"{m['modelled_s'] * 1e6:9.1f} {m['hbm_floor_s'] * 1e6:9.1f} {ratio:7.2f} {m['bound']:>6} "
                  f"{m['blocks']:6d}  {verdict}")
    print()
    for name, dname, ratio, m in misses:
        print(f"above {TARGET}x floor: {name} {dname}: {ratio:.2f}x ({m['bound']}-bound: memory "
              f"{m['memory_s'] * 1e6:.1f} us, vector {m['vector_s'] * 1e6:.1f} us, GM bytes {m['gm_bytes']} vs "
              f"ideal {m['ideal_bytes']})")
    for f in failures:
        print(f"FAILED: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
