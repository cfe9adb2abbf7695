"""The fake-quant steps of an INT8 layer and of IFMR's candidate search, each fused into one pass of a small C
kernel: the same IEEE binary32 operations, in the same order, on every element -- so the same bits.

On the encoder of the quant benchmarks (a 12 ms FP32 pass of small ops) an INT8 Linear under amct-fake-quant ran
about eight tensor ops more than the ``F.linear`` it replaces, each a dispatch and a pass over memory:

- the codes (modes.amct_fake_quant, then the offset taken off in QuantLayer._accumulate):
  ``t = x * r`` (r the float32 reciprocal AMCT's Mul uses), ``round`` (half to even), ``+ o``, ``clamp(lo, hi)``,
  NaN -> 0, ``- o``;
- the dequant: ``acc * deq[c]``, then ``+ bias[c]`` (a Linear on a 3-D input, AMCT's MatMul + Add);
- IFMR's loss per candidate (algorithms._mse_losses): ``e = clamp(x, low, cand) / s`` (a division, as AMCT
  divides), ``round``, ``* s``, ``- x``, ``e * e`` -- the mean stays numerics.mean (float64, NumPy's order).

Why the bits are the same, by construction: each step is one binary32 operation rounded to nearest even (``*``,
``/``, ``+``, ``-``; ``rintf`` in the default rounding mode is round-half-to-even, what ``torch.round`` gives),
or a selection (clamp: a comparison that is false for NaN, so NaN passes through as ``torch.clamp`` lets it, then
becomes 0 as ``nan_to_num_(nan=0.0)`` makes it; after the clamp no inf is left for nan_to_num to change).
Compiled with ``-ffp-contract=off`` and no fast-math, so no multiply-add is fused and nothing is reordered; the
process's floating-point environment (denormals kept) is torch's. Not assumed: the kernel is used only after a
**self-check** against the torch ops it replaces passes bit for bit on this host (ties at .5, NaN, +-inf, -0.0,
values past the int range, denormals, offsets of both signs and 0, 4/8/16 bits); otherwise -- no C compiler,
another result -- the torch ops run as before and ``why()`` says why. ``ENABLED = False`` turns it off (the
benchmark's "before" side; tests compare both).
"""
from __future__ import annotations

import ctypes
import threading

import torch

from . import native

ENABLED = True        # False: the torch ops, as before (benchmarks/bench_quant_algos_search.py measures both)
MIN_ELEMENTS = 256    # smaller tensors stay on the torch ops (the ctypes call would not pay)
F32 = torch.float32

_SOURCE = r"""
#include <stdint.h>
#include <math.h>
/* AMCT's fake-quant codes with the offset taken off: clamp(rint(x * r) + o, lo, hi), NaN -> 0, minus o */
void opkit_codes(const float *x, float *out, int64_t n, float r, float o, float lo, float hi) {
    for (int64_t i = 0; i < n; i++) {
        float t = rintf(x[i] * r) + o;
        t = t < lo ? lo : t;                 /* NaN compares false: it passes, as through torch.clamp */
        t = t > hi ? hi : t;
        t = t != t ? 0.0f : t;               /* nan_to_num_(nan=0.0) */
        out[i] = t - o;
    }
}
/* in place: y = acc * deq[c * ds] (then + bias[c]), c = (i / inner) % C; ds 0: one scale for all channels.
   Each case its own loop (restrict: no aliasing) so that the compiler vectorises it; each element still gets
   one multiply, then one add. */
static void row_mul(float *restrict a, const float *restrict d, int64_t C) {
    for (int64_t c = 0; c < C; c++) a[c] = a[c] * d[c];
}
static void row_mul_add(float *restrict a, const float *restrict d, const float *restrict b, int64_t C) {
    for (int64_t c = 0; c < C; c++) { float y = a[c] * d[c]; a[c] = y + b[c]; }
}
static void row_scale(float *restrict a, float d, int64_t m) {
    for (int64_t j = 0; j < m; j++) a[j] = a[j] * d;
}
static void row_scale_add(float *restrict a, float d, const float *restrict b, int64_t C) {
    for (int64_t c = 0; c < C; c++) { float y = a[c] * d; a[c] = y + b[c]; }
}
static void row_scale_add1(float *restrict a, float d, float b, int64_t m) {
    for (int64_t j = 0; j < m; j++) { float y = a[j] * d; a[j] = y + b; }
}
void opkit_dequant(float *acc, int64_t n, const float *deq, int64_t ds, const float *bias, int64_t C,
                   int64_t inner) {
    if (inner == 1) {
        if (!bias && !ds) { row_scale(acc, deq[0], n); return; }
        for (int64_t i = 0; i < n; i += C) {
            if (!bias) row_mul(acc + i, deq, C);
            else if (ds) row_mul_add(acc + i, deq, bias, C);
            else row_scale_add(acc + i, deq[0], bias, C);
        }
        return;
    }
    for (int64_t i = 0; i < n; i += C * inner)
        for (int64_t c = 0; c < C; c++) {
            if (bias) row_scale_add1(acc + i + c * inner, deq[c * ds], bias[c], inner);
            else row_scale(acc + i + c * inner, deq[c * ds], inner);
        }
}
/* out[k, i] = (rint(clamp(x[i], lo[k], hi[k]) / s[k]) * s[k] - x[i])^2 for candidates k (IFMR's squared errors) */
void opkit_ifmr_sq(const float *x, int64_t n, const float *lo, const float *hi, const float *s, int64_t k,
                   float *out) {
    for (int64_t c = 0; c < k; c++) {
        const float l = lo[c], h = hi[c], sc = s[c];
        float *o = out + c * n;
        for (int64_t i = 0; i < n; i++) {
            float t = x[i];
            t = t < l ? l : t;
            t = t > h ? h : t;
            t = rintf(t / sc) * sc - x[i];
            o[i] = t * t;
        }
    }
}
/* sums[k] = the squared errors above of candidate k added in float64: lane j (0..7) adds e[j], e[j+8], ... in
   order, then ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). Any order does for algorithms._ifmr_best's bound; this one is
   fixed so that the self-check can reproduce it bit for bit. */
void opkit_ifmr_sums(const float *x, int64_t n, const float *lo, const float *hi, const float *s, int64_t k,
                     double *sums) {
    float e[256];
    for (int64_t c = 0; c < k; c++) {
        const float l = lo[c], h = hi[c], sc = s[c];
        double a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
        for (int64_t i0 = 0; i0 < n; i0 += 256) {
            const int64_t m = n - i0 < 256 ? n - i0 : 256;
            for (int64_t i = 0; i < m; i++) {          /* opkit_ifmr_sq's operations, a block at a time */
                float t = x[i0 + i];
                t = t < l ? l : t;
                t = t > h ? h : t;
                t = rintf(t / sc) * sc - x[i0 + i];
                e[i] = t * t;
            }
            for (int64_t i = m; i < ((m + 7) & ~7); i++) e[i] = 0.0f;   /* +0.0 changes no sum of e >= 0 */
            for (int64_t i = 0; i < m; i += 8) {
                a0 += (double)e[i]; a1 += (double)e[i + 1]; a2 += (double)e[i + 2]; a3 += (double)e[i + 3];
                a4 += (double)e[i + 4]; a5 += (double)e[i + 5]; a6 += (double)e[i + 6]; a7 += (double)e[i + 7];
            }
        }
        sums[c] = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
    }
}
"""

_lock = threading.Lock()
_state: dict = {}


def _load():
    lib = native.load(_SOURCE, "fused_quant", "fused", ("opkit_codes", "opkit_dequant", "opkit_ifmr_sq",
                                                         "opkit_ifmr_sums"))
    ptr, i64, f32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_float
    lib.opkit_codes.restype = lib.opkit_dequant.restype = lib.opkit_ifmr_sq.restype = None
    lib.opkit_codes.argtypes = [ptr, ptr, i64, f32, f32, f32, f32]
    lib.opkit_dequant.argtypes = [ptr, i64, ptr, i64, ptr, i64, i64]
    lib.opkit_ifmr_sq.argtypes = [ptr, i64, ptr, ptr, ptr, i64, ptr]
    lib.opkit_ifmr_sums.restype = None
    lib.opkit_ifmr_sums.argtypes = [ptr, i64, ptr, ptr, ptr, i64, ptr]
    return lib


# -- the torch ops each kernel replaces (the self-check's reference; also the path when the kernel is off) ------

def codes_torch(x: torch.Tensor, r: torch.Tensor, offset: int, lo: int, hi: int) -> torch.Tensor:
    q = (x * r).round_().add_(offset).clamp_(lo, hi).nan_to_num_(nan=0.0)
    return q.sub_(offset)


def dequant_torch(acc: torch.Tensor, deq_view: torch.Tensor, bias_view: torch.Tensor | None) -> torch.Tensor:
    y = acc.mul_(deq_view)
    return y if bias_view is None else y + bias_view


def ifmr_sq_torch(x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    e = torch.clamp(x.expand(len(lo), x.numel()), lo[:, None], hi[:, None])
    return e.div_(s[:, None]).round_().mul_(s[:, None]).sub_(x).mul_(e)      # algorithms._mse_losses' ops


# -- the kernels ----------------------------------------------------------------------------------------------

def _codes(lib, x, r: float, offset: int, lo: int, hi: int) -> torch.Tensor:
    out = torch.empty_like(x)
    lib.opkit_codes(x.data_ptr(), out.data_ptr(), x.numel(), r, float(offset), float(lo), float(hi))
    return out


def _dequant(lib, acc, deq, bias, axis: int) -> torch.Tensor:
    C = acc.shape[axis]
    inner = 1
    for d in acc.shape[axis + 1:]:
        inner *= d
    lib.opkit_dequant(acc.data_ptr(), acc.numel(), deq.data_ptr(), 0 if deq.numel() == 1 else 1,
                      bias.data_ptr() if bias is not None else None, C, inner)
    return acc


def _ifmr_sq(lib, x, lo, hi, s) -> torch.Tensor:
    out = torch.empty(len(lo), x.numel(), dtype=torch.float32)
    lib.opkit_ifmr_sq(x.data_ptr(), x.numel(), lo.data_ptr(), hi.data_ptr(), s.data_ptr(), len(lo),
                      out.data_ptr())
    return out


def ifmr_sums_reference(e: torch.Tensor) -> list[float]:
    """``opkit_ifmr_sums``' float64 sums of a block of squared errors (one row per candidate), in its order: lane j
    adds elements j, j+8, ... one after another (``np.add.accumulate`` is sequential), then the lanes pairwise."""
    import numpy as np
    out = []
    for row in e.detach().to(torch.float64).numpy():
        a = [float(np.add.accumulate(row[j::8])[-1]) if len(row) > j else 0.0 for j in range(8)]
        out.append(((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7])))
    return out


def _ifmr_sums(lib, x, lo, hi, s) -> list[float]:
    out = torch.empty(len(lo), dtype=torch.float64)
    lib.opkit_ifmr_sums(x.data_ptr(), x.numel(), lo.data_ptr(), hi.data_ptr(), s.data_ptr(), len(lo),
                        out.data_ptr())
    return out.tolist()


def _self_check(lib) -> str | None:
    """None when every kernel equals its torch ops bit for bit here; else what differed."""
    g = torch.Generator().manual_seed(4321)
    F32, I32 = torch.float32, torch.int32
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-45, -1e-45, 1e-39, 3e38,
                            -3e38, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 127.5, -128.5, 126.5, 1e7, -1e7], dtype=F32)
    for bits, offset, scale in ((8, 0, 0.037), (8, -3, 0.25), (8, 77, 1 / 3), (8, -128, 0.01), (4, 2, 0.5),
                                (16, -5, 0.001), (8, 127, 2.0)):
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        r = torch.tensor(1.0 / scale, dtype=torch.float64).to(F32)
        ties = (torch.randint(-300, 300, (999,), generator=g).to(F32) + 0.5) / r          # exact where r allows
        x = torch.cat([special, special / r, torch.randn(4096, generator=g, dtype=F32) * 100 / r, ties])
        want = codes_torch(x, r, offset, lo, hi)
        got = _codes(lib, x, float(r), offset, lo, hi)
        if not torch.equal(want.view(I32), got.view(I32)):
            return f"codes differ (bits {bits}, offset {offset}, scale {scale})"
    for shape, axis in (((64, 16, 32), 2), ((37, 5), 1), ((4, 6, 5, 3), 1), ((2, 3, 4, 5, 6), 1)):
        acc = torch.randint(-2 ** 20, 2 ** 20, shape, generator=g).to(F32)
        acc.view(-1)[:3] = torch.tensor([float("nan"), float("inf"), -0.0], dtype=F32)
        C = shape[axis]
        bias = torch.randn(C, generator=g, dtype=F32)
        view = [1] * len(shape)
        view[axis] = C
        for deq in (torch.rand(C, generator=g, dtype=F32) * 1e-3, torch.rand(1, generator=g, dtype=F32)):
            dview = [1] * len(shape)
            dview[axis] = deq.numel()
            for b in (None, bias):
                want = dequant_torch(acc.clone(), deq.reshape(dview), None if b is None else b.reshape(view))
                got = _dequant(lib, acc.clone(), deq, b, axis)
                if not torch.equal(want.view(I32), got.view(I32)):
                    return f"dequant differs (shape {list(shape)}, {deq.numel()} scale(s), bias {b is not None})"
    x = torch.cat([torch.randn(3000, generator=g, dtype=F32) * 5, special[3:],
                   torch.tensor([2.5, -2.5, 0.75], dtype=F32)])
    for k in (1, 7):
        lo = -torch.rand(k, generator=g, dtype=F32) * 4
        hi = torch.rand(k, generator=g, dtype=F32) * 6
        s = (hi - lo) / 255
        if k == 1:
            lo, hi, s = (torch.tensor([v], dtype=F32) for v in (-4.0, 4.0, 0.5))     # ties
        want, got = ifmr_sq_torch(x, lo, hi, s), _ifmr_sq(lib, x, lo, hi, s)
        if not torch.equal(want.view(I32), got.view(I32)):
            return f"IFMR squared errors differ ({k} candidates)"
        for m in (0, 1, 7, 8, 9, 23, len(x)):      # every lane filled or not, the tail of 0..7 elements
            xs = x[:m].contiguous()
            sums, ref = _ifmr_sums(lib, xs, lo, hi, s), ifmr_sums_reference(ifmr_sq_torch(xs, lo, hi, s))
            if [v.hex() for v in sums] != [v.hex() for v in ref]:
                return f"IFMR float64 sums differ ({k} candidates, {m} elements)"
    return None


def kernels():
    """The checked kernels (a ctypes library), or None (then ``why()`` says why the torch ops run)."""
    with _lock:
        return native.checked(_state, _load, _self_check)


def why() -> str | None:
    kernels()
    return _state.get("why")


def _usable(*ts: torch.Tensor) -> bool:
    for t in ts:            # a plain loop: every INT8 layer call asks (a generator in all() cost twice as much)
        if t.dtype != F32 or t.device.type != "cpu" or not t.is_contiguous() or t.requires_grad \
                or t.is_neg():         # a neg view's data is not its values
            return False
    return True


def codes(x: torch.Tensor, r: torch.Tensor, offset: int, lo: int, hi: int) -> torch.Tensor:
    """AMCT's fake-quant integer codes of float32 ``x`` minus the offset (a new tensor): ``codes_torch``'s bits."""
    lib = kernels() if ENABLED and x.numel() >= MIN_ELEMENTS and _usable(x) else None
    if lib is None:
        return codes_torch(x, r, offset, lo, hi)
    return _codes(lib, x, float(r), offset, lo, hi)


def dequant(acc: torch.Tensor, deq: torch.Tensor, bias: torch.Tensor | None, axis: int) -> torch.Tensor:
    """``acc * deq`` (then ``+ bias``), both per channel along ``axis``, in place on float32 ``acc`` where the
    kernel runs: ``dequant_torch``'s bits."""
    ok = ENABLED and acc.numel() >= MIN_ELEMENTS and _usable(acc, deq) and deq.dim() == 1 \
        and deq.numel() in (1, acc.shape[axis]) and (bias is None or (_usable(bias) and bias.dim() == 1
                                                                     and bias.numel() == acc.shape[axis]))
    lib = kernels() if ok else None
    if lib is None:
        view = [1] * acc.dim()
        view[axis] = -1
        return dequant_torch(acc, deq.reshape(view) if deq.numel() > 1 else deq.reshape([]),
                             None if bias is None else bias.reshape(view))
    return _dequant(lib, acc, deq, bias, axis)


def ifmr_sq(x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, s: torch.Tensor) -> torch.Tensor | None:
    """IFMR's squared errors, one row per candidate (``ifmr_sq_torch``'s bits); None when the kernel is off."""
    lib = kernels() if ENABLED and _usable(x, lo, hi, s) else None
    return None if lib is None else _ifmr_sq(lib, x, lo, hi, s)


def ifmr_sums(x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, s: torch.Tensor) -> list[float] | None:
    """Each candidate's squared errors (``ifmr_sq``'s, the same float32 bits) added up in float64 in the kernel's
    own order (``ifmr_sums_reference``) -- not NumPy's: a bound, not the loss; None when the kernel is off."""
    lib = kernels() if ENABLED and _usable(x, lo, hi, s) else None
    return None if lib is None else _ifmr_sums(lib, x, lo, hi, s)
