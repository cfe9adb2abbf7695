"""The INT8 Linear's integer accumulation as an int8 GEMM (quant/int_gemm.py, q16): the self-check refuses an
inexact GEMM (a planted int16-saturating one, and oneDNN's AVX2 kernel without VNNI in a subprocess), and a layer
whose sums reach 2^24 gives the same bits with the int8 GEMM allowed or not. The bits on every INT8 layer of the
zoo nets: tests/test_quant_lean_call.py (the lean call, now the int8 GEMM, against the general path)."""
import os
import subprocess
import sys

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
    without bias, offsets of both signs: the int8 GEMM's output bits equal the float32 F.linear's."""
    int_gemm.kernels()                  # the self-check (its own GEMMs) before counting
    calls = []
    real = int_gemm.int_mm
    monkeypatch.setattr(int_gemm, "int_mm", lambda a, b: calls.append(1) or real(a, b))
    for offset, bias, shape in ((-128, True, (64, 48)), (0, True, (4, 16, 48)), (77, False, (4, 16, 48)),
                                (-3, True, (300, 48))):
        layer, lin = _layer(48, 40, offset, seed=offset + 200, bias=bias)
        x = torch.randn(shape) * 4
        x.view(-1)[:3] = torch.tensor([float("nan"), float("inf"), -float("inf")])
        calls.clear()
        (y0, *m0), (y1, *m1) = _both(layer, lin, x, monkeypatch)
        assert m0 == m1 and torch.equal(y0.view(torch.int32), y1.view(torch.int32)), (offset, bias, shape)
        assert calls == ([1] if int_gemm.why() is None else []), (offset, bias, shape)


def test_sums_past_2_24_give_the_same_bits(monkeypatch):
    """K = 1200 codes at +-127 with the input range [0, 255] (offset -128): partial sums past 2^24, so the layer
    keeps its chunked float32 / float64 path -- the same bits whether the int8 GEMM is allowed or not, and equal
    to the float64 product (every integer below 2^53)."""
    layer, lin = _layer(1200, 16, -128, seed=5)
    codes = torch.where(layer.codes >= 0, 127, -128).to(I8)
    codes[:4] = 127                                    # these outputs' sums reach 1200 * 254 * 127 > 2^24
    layer.codes = codes
    assert layer._planned()[1] is False               # not the one-float32-matmul case
    x = (torch.rand(64, 1200) * 12.7).sign() * 12.7    # codes at 255 / 0 -> q - offset up to 255
    (y0, *m0), (y1, *m1) = _both(layer, lin, x, monkeypatch)
    assert m0 == m1 and torch.equal(y0.view(torch.int32), y1.view(torch.int32))
    q = M.amct_fake_quant(x, 0.05, -128, 8).double() + 128
    acc = q @ layer.codes.double().t() + layer.bias_codes.double()
    assert float(acc.abs().max()) >= 2 ** 24
    want = acc.float() * layer.deq_scale
    assert torch.equal(y1.view(torch.int32), want.view(torch.int32))


def test_oneDNN_avx2_without_vnni_is_refused_or_exact():
    """ONEDNN_MAX_CPU_ISA=AVX2 (no VNNI: int16-saturating pairs, inexact on an AVX-512 VNNI host as measured):
    either the self-check refuses the GEMM, or it is exact there -- the layer's bits equal F.linear's either way."""
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
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2", PYTHONPATH=os.pathsep.join(
        [root, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "equal True" in r.stdout, r.stdout
