"""The INT8 Linear's integer accumulation as an int8 GEMM (quant/int_gemm.py, q16): the self-check refuses an
inexact GEMM (a planted int16-saturating one, torch's K = 1 layout, and oneDNN capped at AVX2 in a subprocess),
the path is exact here with the speed race off (OPKIT_INT_GEMM=on, so the bit tests compare the GEMM with
F.linear whatever the load), and a layer whose sums reach 2^24 does not take it. The bits on every INT8 layer of
the zoo nets: tests/test_quant_lean_call.py (the lean call, now the int8 GEMM, against the general path)."""
import os
import subprocess
import sys

import pytest
import torch

from opkit.quant import int_gemm
from opkit.quant import modes as M
from opkit.quant.modes import ConvGeometry, QuantLayer

I8 = torch.int8


class _Sim:
    policy = None
    notes: list = []


def _saturating_mm(a, b):
    """oneDNN's AVX2 arithmetic without VNNI: u8 (a + 128) x s8 pairs summed with int16 saturation."""
    u = a.to(torch.int64) + 128
    w = b.to(torch.int64)
    k = a.shape[1] + a.shape[1] % 2
    u = torch.nn.functional.pad(u, (0, k - a.shape[1]))
    w = torch.nn.functional.pad(w, (0, 0, 0, k - b.shape[0]))
    pairs = (u[:, 0::2, None] * w[None, 0::2] + u[:, 1::2, None] * w[None, 1::2]).clamp(-32768, 32767)
    return (pairs.sum(1) - 128 * b.to(torch.int64).sum(0)).to(torch.int32)


def test_the_self_check_refuses_a_saturating_gemm(monkeypatch):
    assert int_gemm._gemm_check() is None or "not the exact product" in int_gemm._gemm_check()
    monkeypatch.setattr(int_gemm, "int_mm", _saturating_mm)
    assert "is not the exact product" in (int_gemm._gemm_check() or "")


def _cpu_flags() -> set:
    """The host's x86 flags from /proc/cpuinfo (empty elsewhere): torch 2.13's _int_mm runs oneDNN only with
    avx512_vnni, else an exact scalar loop (int_gemm's docstring)."""
    try:
        with open("/proc/cpuinfo") as f:
            return set(next((ln.split(":", 1)[1].split() for ln in f if ln.startswith("flags")), []))
    except OSError:
        return set()


def _onednn_here() -> bool:
    return "avx512_vnni" in _cpu_flags() and torch.backends.mkldnn.enabled


def onednn_capped() -> bool:
    """ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA set (docs/ci.md's AVX2 run): oneDNN's int8 kernels may be inexact."""
    return bool({"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"} & set(os.environ))


def gemm_on(monkeypatch) -> bool:      # (tests/test_quant_lean_call.py uses it too)
    """The GEMM path without the wall-clock speed race (OPKIT_INT_GEMM=on), self-checked afresh: True when it is
    taken -- always, unless oneDNN is capped (then the exactness check may refuse it)."""
    monkeypatch.setenv("OPKIT_INT_GEMM", "on")
    monkeypatch.setattr(int_gemm, "_state", {})
    on = int_gemm.why() is None
    assert on or onednn_capped(), int_gemm.why()
    return on


@pytest.mark.skipif(onednn_capped(), reason="oneDNN capped: its int8 kernels are inexact by design there")
def test_the_gemm_is_exact_here(monkeypatch):
    """Deterministic on every host: torch's _int_mm (oneDNN VNNI with avx512_vnni, else its scalar loop) and the
    two C kernels pass the exactness checks, so with the speed race off the path is taken."""
    assert gemm_on(monkeypatch)
    assert int_gemm._gemm_check() is None
    assert int_gemm._kernel_check(int_gemm._load()) is None
    assert int_gemm.why() is None and int_gemm.kernels() is not None


def test_k1_in_the_layers_layout_is_checked_and_kept_on_f_linear(monkeypatch):
    """torch 2.13's oneDNN path gives wrong sums for _int_mm(a[M, 1], w^T) with w [N, 1] (strides (1, 1)): the
    self-check catches it if K = 1 is let through (on an avx512_vnni host; elsewhere the scalar loop is exact),
    and constants() keeps K = 1 on F.linear."""
    assert int_gemm.constants(torch.ones(64, 1, dtype=I8), None, 0) is None
    monkeypatch.setattr(int_gemm, "K_MIN", 1)
    why = int_gemm._gemm_check()
    if _onednn_here() and not onednn_capped():
        assert "x1 @ 1x" in (why or ""), why
    elif not onednn_capped():                                   # torch's scalar loop: exact at K = 1 too
        assert why is None, why


def test_k_max_keeps_the_int32_sum_from_wrapping():
    assert int_gemm.K_MAX * 128 * 128 < 2 ** 31
    assert int_gemm.constants(torch.ones(1, int_gemm.K_MAX + 1, dtype=I8), None, 0) is None


def test_opkit_int_gemm_off_and_the_speed_race(monkeypatch):
    """OPKIT_INT_GEMM=off keeps F.linear; the speed race asks for MARGIN over F.linear."""
    monkeypatch.setenv("OPKIT_INT_GEMM", "off")
    monkeypatch.setattr(int_gemm, "_state", {})
    assert int_gemm.kernels() is None and int_gemm.why() == "OPKIT_INT_GEMM=off"
    monkeypatch.setenv("OPKIT_INT_GEMM", "auto")
    monkeypatch.setattr(int_gemm, "_gemm_check", lambda: None)  # the race alone decides (also under a oneDNN cap)
    monkeypatch.setattr(int_gemm, "MARGIN", 1e9)              # no GEMM is a billion times faster
    assert "not 1000000000.0x faster" in (int_gemm.why() or "")


def _layer(k: int, n: int, offset: int, seed: int, bias: bool = True) -> QuantLayer:
    g = torch.Generator().manual_seed(seed)
    lin = torch.nn.Linear(k, n, bias=bias)
    codes = torch.randint(-128, 128, (n, k), generator=g).to(I8)
    return QuantLayer(name="fc", geometry=ConvGeometry.of(lin), codes=codes,
                      scale_w=torch.rand(n, generator=g) * 1e-2, scale_d=0.05, offset_d=offset,
                      bias_codes=torch.randint(-5000, 5000, (n,), generator=g) if bias else None,
                      bias=(torch.randn(n, generator=g) if bias else None)), lin


def _both(layer, lin, x, monkeypatch):
    outs = []
    for on in (False, True):
        monkeypatch.setattr(int_gemm, "ENABLED", on)
        outs.append(layer.run(_Sim(), lin, lin.forward, (x,), {}))
    return outs


def test_small_sums_take_the_gemm_with_the_same_bits(monkeypatch):
    """A Linear whose every sum stays below 2^24 (the exact one-matmul path), on 2-D and 3-D input, with and
    without bias, offsets of both signs, and K = 1 (kept on F.linear): the int8 GEMM's output bits equal the
    float32 F.linear's. The GEMM is on (no speed race), so every K > 1 case goes through it."""
    on = gemm_on(monkeypatch)           # the self-check (its own GEMMs) before counting
    calls = []
    real = int_gemm.int_mm
    monkeypatch.setattr(int_gemm, "int_mm", lambda a, b: calls.append(1) or real(a, b))
    for k, n, offset, bias, shape in ((48, 40, -128, True, (64, 48)), (48, 40, 0, True, (4, 16, 48)),
                                      (48, 40, 77, False, (4, 16, 48)), (48, 40, -3, True, (300, 48)),
                                      (1, 64, -3, True, (1024, 1)), (1, 256, 5, False, (512, 1)),
                                      (2, 64, 0, True, (1024, 2))):
        layer, lin = _layer(k, n, offset, seed=offset + 200, bias=bias)
        x = torch.randn(shape) * 4
        x.view(-1)[:3] = torch.tensor([float("nan"), float("inf"), -float("inf")])
        calls.clear()
        (y0, *m0), (y1, *m1) = _both(layer, lin, x, monkeypatch)
        assert m0 == m1 and torch.equal(y0.view(torch.int32), y1.view(torch.int32)), (k, offset, bias, shape)
        assert calls == ([1] if on and k > 1 else []), (k, offset, bias, shape)


def test_sums_past_2_24_do_not_take_the_gemm(monkeypatch):
    """K = 1200 codes at +-127 with the input range [0, 255] (offset -128): partial sums past 2^24, so the layer
    keeps its chunked float32 / float64 path and never calls the int8 GEMM (this checks that the GEMM is NOT
    taken there; the output equals the float64 product, every integer below 2^53)."""
    calls = []
    real = int_gemm.int_mm
    monkeypatch.setattr(int_gemm, "int_mm", lambda a, b: calls.append(1) or real(a, b))
    layer, lin = _layer(1200, 16, -128, seed=5)
    codes = torch.where(layer.codes >= 0, 127, -128).to(I8)
    codes[:4] = 127                                    # these outputs' sums reach 1200 * 254 * 127 > 2^24
    layer.codes = codes
    assert layer._planned()[1] is False               # not the one-float32-matmul case
    x = (torch.rand(64, 1200) * 12.7).sign() * 12.7    # codes at 255 / 0 -> q - offset up to 255
    gemm_on(monkeypatch)
    calls.clear()
    (y0, *m0), (y1, *m1) = _both(layer, lin, x, monkeypatch)
    assert calls == []
    assert m0 == m1 and torch.equal(y0.view(torch.int32), y1.view(torch.int32))
    q = M.amct_fake_quant(x, 0.05, -128, 8).double() + 128
    acc = q @ layer.codes.double().t() + layer.bias_codes.double()
    assert float(acc.abs().max()) >= 2 ** 24
    want = acc.float() * layer.deq_scale
    assert torch.equal(y1.view(torch.int32), want.view(torch.int32))


@pytest.mark.skipif("avx512_vnni" not in _cpu_flags(), reason="without avx512_vnni torch's _int_mm never runs "
                    "oneDNN (its exact scalar loop instead), so ONEDNN_MAX_CPU_ISA changes nothing to test")
def test_oneDNN_capped_at_avx2_is_refused_by_the_exactness_check():
    """ONEDNN_MAX_CPU_ISA=AVX2 on an avx512_vnni host reaches oneDNN's int16-saturating u8 x s8 kernel
    (vpmaddubsw; no real host runs it: torch needs avx512_vnni to call oneDNN at all). With the speed race off,
    the exactness check refuses it, and the layer's bits equal F.linear's."""
    code = (
        "import torch; from opkit.quant import int_gemm, modes as M\n"
        "import tests.test_quant_int_gemm as T\n"
        "layer, lin = T._layer(64, 32, -128, seed=9)\n"
        "x = torch.randn(64, 64) * 6\n"
        "outs = []\n"
        "for on in (False, True):\n"
        "    int_gemm.ENABLED = on\n"
        "    outs.append(layer.run(T._Sim(), lin, lin.forward, (x,), {})[0])\n"
        "int_gemm.ENABLED = True\n"
        "print('why', int_gemm.why())\n"
        "print('equal', torch.equal(outs[0].view(torch.int32), outs[1].view(torch.int32)))\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2", OPKIT_INT_GEMM="on", PYTHONPATH=os.pathsep.join(
        [root, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "equal True" in r.stdout and "not the exact product" in r.stdout, r.stdout
