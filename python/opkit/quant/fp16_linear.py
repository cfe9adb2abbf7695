"""PyTorch's CPU float16 Linear, the same bits at a fraction of the cost: the `--deploy-dtype float16` rows and
search score the model in float16, and on a CPU ``F.linear`` on float16 tensors costs 7-25x the float32 one.

How ATen computes it (torch 2.x, x86): ``at::linear`` -> ``addmm`` (bias, contiguous input flattened to 2-D) or
``mm`` (no bias) -> ``cpublas::gemm`` for Half -> ``gemm_transa_``, one dot product per output element through
``fp16_dot_with_fp32_arith`` (aten/src/ATen/native/cpu/BlasKernel.cpp, ``gemm_transa_`` for ``at::Half``;
ReducedPrecisionFloatGemvFastPathKernel.cpp, pytorch@0396d12681cc, ``dot_with_fp32_arith_main_loop_no_bfdot`` and
``DOT_WITH_FP32_ARITH_TAIL_AFTER_MAIN_LOOP_BODY``), then ``c = beta * c + alpha * dot`` in float and one
rounding to float16 (``c`` holds the bias, beta = 1; without a bias beta = 0). The dot, in float32:

- blocks of ``8 registers x L lanes``: accumulator ``[r][l] += x[k] * w[k]`` (an fma; the product of two float16
  values is exact in float32, so fma = multiply + add), then the registers summed pairwise (r + 4, r + 2, r + 1)
  and the L lanes by ``vec_reduce_all``'s butterfly (lane i + lane i ^ L/2, ... i ^ 1);
- the rest in vectors of 2L halves: ``tail[l] += x[j + l] * w[j + l]``, then ``+= x[j + L + l] * w[j + L + l]``;
  ``sum = blocks + reduce(tail)``; the last ``K mod 2L`` elements one by one, ``sum += x[j] * w[j]``.

L = 8 on this build (``Vectorized<float>`` of the AVX2 kernel): measured, 0 of 38,000 outputs differ for each K
in 8..300 (tests/test_quant_fp16_linear.py); L = 16 differs. The order is what makes the bits, and it depends on
the torch build and the host (an ARM host runs NEON kernels, a CPU with AVX512-FP16 oneDNN's), so the kernel here
is used only after a self-check against ``F.linear`` on this host and torch -- shapes covering every branch (one
row, no blocks, blocks, vector and scalar tails, with and without bias, 2-D/3-D) -- passes bit for bit;
otherwise, or for any call it does not cover (non-contiguous or non-finite input, a 16-bit reduction flag set),
``F.linear`` runs as before. The kernel computes the same float32 operations in the same order per output,
vectorised across 16 outputs instead of within one dot (no horizontal reduction per output), compiled with
``-ffp-contract=off`` and no fast-math; it is built once into opkit's cache with the host's C compiler.
"""
from __future__ import annotations

import ctypes
import os
import threading

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from . import native

LANES = 8          # float lanes of the kernel torch picks here (checked at run time, never assumed)
REGISTERS = 8      # accumulator registers of its main loop (kF32RegistersPerIteration)
ENABLED = True      # False: every call on F.linear (benchmarks/bench_quant_algos_search.py measures both)
MIN_OUTPUTS = 4096  # smaller calls stay on F.linear (cheaper than the wrapper's few tensor ops)

_SOURCE = r"""
#include <stdint.h>
#include <string.h>
#define L %(lanes)d
#define R %(regs)d
typedef float v16 __attribute__((vector_size(64)));      /* 16 outputs at a time (GCC/clang vector extension) */
static inline v16 ld(const float *p) { v16 r; memcpy(&r, p, sizeof r); return r; }
#define NB 4
/* out[n*O + o] = x[n, :] . w[o, :] in the order of ATen's fp16_dot_with_fp32_arith; wt is w transposed [K, O],
   O a multiple of 16 (zero-padded). Each accumulator is one chain, as one SIMD lane of ATen's is; NB rows share
   each load of w. */
static inline __attribute__((always_inline)) void rows(const float *x, const float *w, float *out, int nb,
                                                       int64_t K, int64_t O, v16 *acc) {
    const int64_t per = (int64_t)R * L, main_end = K / per * per, vec_end = K & ~(int64_t)(2 * L - 1);
    v16 rs[NB], t[L][NB], a[NB];
    for (int i = 0; i < nb; i++) rs[i] = (v16){0};
    if (main_end) {
        for (int q = 0; q < R * L; q++) {                   /* register q / L, lane q %% L */
            for (int i = 0; i < nb; i++) a[i] = (v16){0};
            for (int64_t b = 0; b < main_end; b += per) {
                const v16 wv = ld(w + (b + q) * O);
                for (int i = 0; i < nb; i++) a[i] = a[i] + x[i * K + b + q] * wv;
            }
            for (int i = 0; i < nb; i++) acc[q * NB + i] = a[i];
        }
        for (int off = R / 2; off >= 1; off /= 2)          /* registers: x[i] += x[i + off] */
            for (int r = 0; r < off; r++)
                for (int l = 0; l < L; l++)
                    for (int i = 0; i < nb; i++)
                        acc[(r * L + l) * NB + i] = acc[(r * L + l) * NB + i] + acc[((r + off) * L + l) * NB + i];
        for (int s = L / 2; s >= 1; s /= 2)                 /* lanes: butterfly, lane i + lane i ^ s */
            for (int l = 0; l < s; l++)
                for (int i = 0; i < nb; i++) acc[l * NB + i] = acc[l * NB + i] + acc[(l ^ s) * NB + i];
        for (int i = 0; i < nb; i++) rs[i] = acc[i];
    }
    for (int l = 0; l < L; l++) {                           /* vector tail: low half, then high half */
        for (int i = 0; i < nb; i++) a[i] = (v16){0};
        for (int64_t j = main_end; j < vec_end; j += 2 * L) {
            const v16 w0 = ld(w + (j + l) * O), w1 = ld(w + (j + L + l) * O);
            for (int i = 0; i < nb; i++) a[i] = a[i] + x[i * K + j + l] * w0;
            for (int i = 0; i < nb; i++) a[i] = a[i] + x[i * K + j + L + l] * w1;
        }
        for (int i = 0; i < nb; i++) t[l][i] = a[i];
    }
    for (int s = L / 2; s >= 1; s /= 2)
        for (int l = 0; l < s; l++)
            for (int i = 0; i < nb; i++) t[l][i] = t[l][i] + t[l ^ s][i];
    for (int i = 0; i < nb; i++) rs[i] = rs[i] + t[0][i];
    for (int64_t j = vec_end; j < K; j++) {                 /* scalar tail */
        const v16 wv = ld(w + j * O);
        for (int i = 0; i < nb; i++) rs[i] = rs[i] + x[i * K + j] * wv;
    }
    for (int i = 0; i < nb; i++) memcpy(out + i * O, &rs[i], sizeof rs[i]);
}

/* returns how many dots are not finite (then the caller runs F.linear) */
int64_t opkit_fp16_dot(const float *x, const float *wt, float *out, int64_t N, int64_t K, int64_t O) {
    v16 acc[R * L * NB];
    for (int64_t o0 = 0; o0 < O; o0 += 16) {               /* a 16-column block of w stays in cache */
        int64_t n = 0;
        for (; n + NB <= N; n += NB) rows(x + n * K, wt + o0, out + n * O + o0, NB, K, O, acc);
        for (; n < N; n++) rows(x + n * K, wt + o0, out + n * O + o0, 1, K, O, acc);
    }
    int64_t bad = 0;
    for (int64_t i = 0; i < N * O; i++) bad += !(out[i] - out[i] == 0.0f);      /* inf - inf, NaN: not 0 */
    return bad;
}
"""
_lock = threading.Lock()
_state: dict = {}           # "lib": the loaded function or None; "why": why F.linear runs instead


def _load(lanes: int = LANES, regs: int = REGISTERS):
    """The compiled kernel (built once into the cache); native.BuildError says why not."""
    src = _SOURCE % {"lanes": lanes, "regs": regs}
    fn = native.load(src, "fp16_linear", "fp16_dot", ("opkit_fp16_dot",)).opkit_fp16_dot
    fn.restype = ctypes.c_int64
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p] + [ctypes.c_int64] * 3
    return fn


def _reduced_precision_flag() -> bool:
    get = getattr(torch._C, "_get_cpu_allow_fp16_reduced_precision_reduction", None)
    return bool(get()) if get is not None else False


def _covered(x, w, b) -> bool:
    """Whether ``F.linear(x, w, b)`` is a call the kernel reproduces (ATen's addmm / mm path on finite values)."""
    return (x.dtype == w.dtype == torch.float16 and x.device.type == w.device.type == "cpu" and x.dim() >= 1
            and w.dim() == 2 and x.shape[-1] == w.shape[1] and w.shape[1] > 0 and x.numel() > 0
            and x.is_contiguous() and not x.requires_grad and not w.requires_grad
            and (b is None or (b.dtype == torch.float16 and b.dim() == 1 and b.shape[0] == w.shape[0]
                               and not b.requires_grad))
            and not _reduced_precision_flag())


def _run(fn, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor | None:
    """The kernel's F.linear(x, w, b); None when a value is not finite (then F.linear runs: inf/NaN order and
    payloads are not modelled). A non-finite x or w makes some dot non-finite (inf * w, inf * 0 = NaN, NaN), so
    the kernel's count of non-finite dots covers them; finite float16 dots and bias cannot overflow float32."""
    K, O = w.shape[1], w.shape[0]
    pad = -O % 16                                    # the kernel's 16 outputs at a time
    xf = x.reshape(-1, K).float().contiguous()
    wt = torch.zeros(K, O + pad, dtype=torch.float32)
    wt[:, :O] = w.t()
    dot = torch.empty(xf.shape[0], O + pad, dtype=torch.float32)
    if fn(xf.data_ptr(), wt.data_ptr(), dot.data_ptr(), xf.shape[0], K, O + pad) or (
            b is not None and not bool(torch.isfinite(b).all())):
        return None
    dot = dot[:, :O]
    out = dot if b is None else b.float() + dot      # ATen: beta * c + alpha * dot in float, c = the bias
    return out.half().reshape(*x.shape[:-1], O)


def _self_check(fn) -> str | None:
    """None when the kernel equals F.linear bit for bit on this host and torch; else what differed."""
    g = torch.Generator().manual_seed(1234)
    ks = [1, 7, 8, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 100, 127, 128, 130, 160, 200, 257, 300]
    for i, k in enumerate(ks):
        for rows, o in ((1, 19), (37, 5), (64, 33)):
            scale = (1.0, 30.0, 0.01)[i % 3]
            x = (torch.randn(rows, k, generator=g) * scale).half()
            w = torch.randn(o, k, generator=g).half()
            b = torch.randn(o, generator=g).half()
            for xx, bb in ((x, b), (x, None), (x.reshape(1, rows, k), b), (x.reshape(1, 1, rows, k), b)):
                got = _run(fn, xx, w, bb)
                if got is None or not torch.equal(F.linear(xx, w, bb).view(torch.int16), got.view(torch.int16)):
                    return (f"differs from F.linear at K={k}, {rows} rows, {o} outputs, input {list(xx.shape)}, "
                            f"bias {bb is not None}")
    return None


def kernel():
    """The checked kernel, or None (then ``why()`` says why F.linear runs)."""
    with _lock:
        return native.checked(_state, _load, _self_check)


def why() -> str | None:
    kernel()
    return _state.get("why")


def linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """``F.linear(x, w, b)``, bit for bit; through the kernel when it is checked and covers the call."""
    small = x.numel() // max(x.shape[-1], 1) * w.shape[0] < MIN_OUTPUTS     # the call overhead would dominate
    fn = kernel() if ENABLED and not small and _covered(x, w, b) else None
    out = _run(fn, x, w, b) if fn is not None else None
    return F.linear(x, w, b) if out is None else out


class Float16Linear(TorchFunctionMode):
    """Within it, every ``F.linear`` (nn.Linear, AMCT's FakeQuantLinear) runs through ``linear`` above."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.linear or func is torch._C._nn.linear:
            x = args[0] if args else kwargs.get("input")
            w = args[1] if len(args) > 1 else kwargs.get("weight")
            b = args[2] if len(args) > 2 else kwargs.get("bias")
            if all(type(t) is torch.Tensor for t in (x, w)) and (b is None or type(b) is torch.Tensor) \
                    and x.dtype == torch.float16:
                return linear(x, w, b)
        return func(*args, **kwargs)
