"""An INT8 Linear's exact integer accumulation as an int8 x int8 -> int32 GEMM (``torch._int_mm``) instead of one
float32 ``F.linear`` on integer-valued floats (issue 37 / 38 item 2: an INT8 Linear at the cost of a float one).

The same integer, so the same bits. The exact one-matmul path (``QuantLayer._lean_run``) computes, per output,
``acc = sum_k (q_k - o) w_k + b`` (q the activation codes, o the offset, w the weight codes, b the int32 bias
codes) as a float32 ``F.linear`` whose every partial sum stays below 2^24 (the layer's chunk plan proves it), so
the float32 result IS that integer. Here: ``q`` as int8 (uncentered: q - o need not fit int8), ``_int_mm(q, w^T)``
in int32, then ``acc = that + (b - o * sum_k w_k)`` in int64 and converted to float32 -- exact, the integer being
below 2^24 -- then the same dequant (``acc * deq[c]``, then ``+ bias[c]``). The codes kernel does AMCT's codes'
float32 operations in their order (``fused.opkit_codes``) and stores the integer instead of ``t - o``.

Not assumed, checked once per process (``why()``): ``_int_mm`` equal to the exact product on adversarial operands
(every code -128/127, full-range random) over the shapes below, the weight in the layer's own layout (``w^T`` of a
contiguous [N, K]); the codes and dequant kernels equal their torch ops bit for bit; and ``_int_mm`` at least
``MARGIN`` times faster than ``F.linear`` on a mid-size Linear here (a wall-clock race, fastest of interleaved
rounds: a heavily loaded first call can still pick F.linear -- the bits are the same either way).
``OPKIT_INT_GEMM=on`` skips that speed race (the exactness checks still run), ``=off`` keeps F.linear.
Torch 2.13's CPU ``_int_mm`` runs oneDNN only where cpuinfo reports AVX-512 VNNI, else an exact but slow scalar
loop that the speed check refuses (pytorch aten/src/ATen/native/LinearAlgebra.cpp, ``_int_mm_out_cpu``). oneDNN's
int16-saturating u8 x s8 kernels (``vpmaddubsw``) are reached only by capping oneDNN (``ONEDNN_MAX_CPU_ISA=AVX2``)
on a VNNI host; the exactness check refuses them there. K = 1 stays on F.linear: torch 2.13 gives wrong sums for
``_int_mm(a[M, 1], w^T)`` when the [1, N] view has strides (1, 1), as the layer's ``w^T`` of a [N, 1] weight does
(tests/test_quant_int_gemm.py). Anything failing: the float32 ``F.linear`` as before.
"""
from __future__ import annotations

import ctypes
import os
import threading
import time

import torch
import torch.nn.functional as F

from . import fused, native

ENABLED = True        # False: the float32 F.linear on codes, as before (benchmarks and tests compare the two)
K_MAX = (1 << 17) - 1  # K * 128 * 128 < 2^31: _int_mm's int32 sum cannot wrap
K_MIN = 2             # K = 1 stays on F.linear (module docstring)
MARGIN = 1.2          # the GEMM must beat F.linear by this much in the speed race (noise on a shared host)
# below this many multiply-adds (M * K * N) F.linear stays: a Linear 32 -> 10 / 24 -> 10 at batch 64 (20K / 15K)
# was 3-4 us slower through the GEMM, 1024 x 24 -> 24 (590K) even, larger ones faster (bench_quant_int8_call.py)
MIN_MACS = 1 << 16
I8, I32, I64, F32 = torch.int8, torch.int32, torch.int64, torch.float32

_SOURCE = r"""
#include <stdint.h>
#include <math.h>
/* fused.opkit_codes' operations, the code stored as int8 without taking the offset off (lo, hi within int8) */
void opkit_codes_i8(const float *x, int8_t *out, int64_t n, float r, float o, float lo, float hi) {
    for (int64_t i = 0; i < n; i++) {
        float t = rintf(x[i] * r) + o;
        t = t < lo ? lo : t;
        t = t > hi ? hi : t;
        t = t != t ? 0.0f : t;
        out[i] = (int8_t)t;
    }
}
/* out[m, c] = (float)(acc[m, c] + ib[c]) * deq[c * ds] (then + bias[c]): the integer (below 2^24) converted
   exactly, then fused.opkit_dequant's multiply and add */
void opkit_dequant_i32(const int32_t *acc, const int64_t *ib, float *out, int64_t rows, int64_t C,
                       const float *deq, int64_t ds, const float *bias) {
    for (int64_t m = 0; m < rows; m++) {
        const int32_t *a = acc + m * C;
        float *y = out + m * C;
        for (int64_t c = 0; c < C; c++) {
            float v = (float)((int64_t)a[c] + ib[c]) * deq[c * ds];
            y[c] = bias ? v + bias[c] : v;
        }
    }
}
"""

_lock = threading.Lock()
_state: dict = {}


def _load():
    lib = native.load(_SOURCE, "fused_quant", "int_gemm", ("opkit_codes_i8", "opkit_dequant_i32"))
    ptr, i64, f32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_float
    lib.opkit_codes_i8.restype = lib.opkit_dequant_i32.restype = None
    lib.opkit_codes_i8.argtypes = [ptr, ptr, i64, f32, f32, f32, f32]
    lib.opkit_dequant_i32.argtypes = [ptr, ptr, ptr, i64, i64, ptr, i64, ptr]
    return lib


def int_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` for int8 [M, K] x [K, N] -> int32 (a seam: tests plant a wrong GEMM here)."""
    return torch._int_mm(a, b)


def codes_i8(lib, x: torch.Tensor, r: float, offset: int, lo: int, hi: int) -> torch.Tensor:
    out = torch.empty(x.shape, dtype=I8)
    lib.opkit_codes_i8(x.data_ptr(), out.data_ptr(), x.numel(), r, float(offset), float(lo), float(hi))
    return out


def dequant_i32(lib, acc: torch.Tensor, ib: torch.Tensor, deq: torch.Tensor,
                bias: torch.Tensor | None) -> torch.Tensor:
    rows, C = acc.shape
    out = torch.empty((rows, C), dtype=F32)
    lib.opkit_dequant_i32(acc.data_ptr(), ib.data_ptr(), out.data_ptr(), rows, C, deq.data_ptr(),
                          0 if deq.numel() == 1 else 1, bias.data_ptr() if bias is not None else None)
    return out


def _gemm_check() -> str | None:
    g = torch.Generator().manual_seed(37)
    # K = 1 / 2 with N > 1: where torch's stride handling bit (module docstring); a shape constants() declines
    # (K < K_MIN) is one the layer never sends, so it is not checked
    for m, k, n in ((1, 1, 1), (1, 64, 10), (7, 3, 5), (16, 48, 64), (17, 64, 64), (64, 256, 64),
                    (1024, 48, 64), (333, 1000, 129), (64, 4096, 32), (5, 17, 256), (1024, 1, 64), (64, 1, 1024),
                    (1024, 2, 64), (64, 2, 1024)):
        full = (torch.randint(-128, 128, (m, k), generator=g, dtype=I8),
                torch.randint(-128, 128, (k, n), generator=g, dtype=I8))
        for a, b in (full, (torch.full((m, k), -128, dtype=I8), torch.full((k, n), -128, dtype=I8)),
                     (torch.full((m, k), 127, dtype=I8), torch.full((k, n), -128, dtype=I8)),
                     (full[0].sign().mul(127).to(I8), full[1].sign().mul(-128).clamp(-128, 127).to(I8))):
            want = a.double() @ b.double()
            layer_op = constants(b.t(), None, 0)               # the layer's own w^T view, or None: never sent
            for bb in (b,) + ((layer_op[0],) if layer_op else ()):
                try:
                    got = int_mm(a, bb)
                except RuntimeError as e:
                    return f"torch._int_mm({m}x{k} @ {k}x{n}) raised: {str(e)[:120]}"
                if got.dtype != I32 or not torch.equal(got.double(), want):
                    return f"torch._int_mm({m}x{k} @ {k}x{n}) is not the exact product here"
    return None


def _kernel_check(lib) -> str | None:
    g = torch.Generator().manual_seed(38)
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-45, 0.5, -0.5, 1.5, -2.5,
                            127.5, -128.5, 1e7, -1e7], dtype=F32)
    for offset, scale in ((0, 0.037), (-3, 0.25), (77, 1 / 3), (-128, 0.01), (127, 2.0)):
        r = torch.tensor(1.0 / scale, dtype=torch.float64).to(F32)
        x = torch.cat([special, special / r, torch.randn(2048, generator=g, dtype=F32) * 100 / r,
                       (torch.randint(-300, 300, (500,), generator=g).to(F32) + 0.5) / r])
        want = fused.codes_torch(x, r, offset, -128, 127).add_(offset)
        if not torch.equal(codes_i8(lib, x, float(r), offset, -128, 127).to(F32), want):
            return f"int8 codes differ (offset {offset}, scale {scale})"
    acc = torch.randint(-2 ** 23, 2 ** 23, (37, 24), generator=g, dtype=I32)
    ib = torch.randint(-2 ** 20, 2 ** 20, (24,), generator=g, dtype=I64)
    for deq in (torch.rand(24, generator=g, dtype=F32) * 1e-3, torch.rand(1, generator=g, dtype=F32)):
        for bias in (None, torch.randn(24, generator=g, dtype=F32)):
            want = fused.dequant_torch((acc.to(I64) + ib).to(F32), deq.reshape(1, -1) if deq.numel() > 1
                                       else deq.reshape([]), None if bias is None else bias.reshape(1, -1))
            if not torch.equal(dequant_i32(lib, acc, ib, deq, bias).view(I32), want.view(I32)):
                return f"int32 dequant differs ({deq.numel()} scale(s), bias {bias is not None})"
    return None


def _faster() -> str | None:
    """None when _int_mm beats the float32 F.linear it replaces by MARGIN on a mid-size Linear here (fastest of
    5 interleaved rounds each)."""
    a = torch.randint(-128, 128, (512, 64), dtype=I8)
    w = torch.randint(-128, 128, (128, 64), dtype=I8)
    af, wf, wt = a.to(F32), w.to(F32), weight_t(w)

    def once(fn) -> float:
        t = time.perf_counter()
        for _ in range(10):
            fn()
        return time.perf_counter() - t

    gemm, flin = (lambda: int_mm(a, wt)), (lambda: F.linear(af, wf))
    gemm(), flin()
    rounds = [(once(gemm), once(flin)) for _ in range(5)]
    ti, tf = min(r[0] for r in rounds), min(r[1] for r in rounds)
    return None if ti * MARGIN <= tf else \
        f"torch._int_mm not {MARGIN}x faster than float32 F.linear here ({ti * 1e5:.1f} vs {tf * 1e5:.1f} us)"


def _mode() -> str:
    """OPKIT_INT_GEMM: "on" (no speed race), "off" (F.linear), anything else / unset: "auto"."""
    v = os.environ.get("OPKIT_INT_GEMM", "").strip().lower()
    return v if v in ("on", "off") else "auto"


def _check(lib) -> str | None:
    if not hasattr(torch, "_int_mm"):
        return "this torch has no torch._int_mm"
    return _gemm_check() or _kernel_check(lib) or (None if _mode() == "on" else _faster())


def kernels():
    """The checked codes/dequant kernels when the int8 GEMM path can run here, else None (``why()`` says why)."""
    if not ENABLED or _mode() == "off":
        return None
    with _lock:
        return native.checked(_state, _load, _check)


def why() -> str | None:
    kernels()
    if _mode() == "off":
        return "OPKIT_INT_GEMM=off"
    return _state.get("why") if ENABLED else "int_gemm.ENABLED is False"


def constants(codes: torch.Tensor, bias_codes: torch.Tensor | None, offset: int) -> tuple | None:
    """(w^T as int8 [K, N] view, int64 correction with the int32 bias, without it) for a Linear's weight codes,
    or None when the int8 GEMM cannot take them (codes past int8, K = 1 (module docstring), K past K_MAX)."""
    if codes.dim() != 2 or not K_MIN <= codes.shape[1] <= K_MAX or not codes.numel() or codes.device.type != "cpu":
        return None
    c = codes.to(I64)
    if int(c.min()) < -128 or int(c.max()) > 127:
        return None
    w8 = torch.empty(c.shape, dtype=I8).copy_(c)       # [N, K] with its own strides, whatever codes' were
    corr = -offset * c.sum(dim=1)
    with_b = corr + bias_codes.to(I64).reshape(-1) if bias_codes is not None else corr
    return weight_t(w8), with_b.contiguous(), corr.contiguous()


def weight_t(w8: torch.Tensor) -> torch.Tensor:
    """The layer's GEMM operand: ``w^T`` as a view of the int8 [N, K] weight with its own strides ((1, 1) at K = 1:
    a size-1 dimension's stride is not normalized by ``.contiguous()``)."""
    return w8.t()
