"""quant/fused.py: the fake-quant codes, the dequant and IFMR's squared errors in one pass each, bit for bit the
torch ops they replace (near-ties, NaN/inf, zero and huge scales), and every INT8 layer's output unchanged."""
import os
import subprocess
import sys

import pytest
import torch
import torch.nn as nn

from opkit.quant import algorithms as A
from opkit.quant import fused
from opkit.quant import modes as M
from opkit.quant.algorithms import arq, scale_offset
from opkit.quant.modes import ConvGeometry, QuantLayer, amct_fake_quant, reciprocal_scale

I32 = torch.int32


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.view(I32), b.view(I32))


def test_kernels_pass_their_self_check():
    assert fused.kernels() is not None, fused.why()


def _hard_inputs(r: torch.Tensor, n: int, seed: int) -> torch.Tensor:
    """Exact .5 ties of x * r where r allows, values just either side of them, NaN, +-inf, -0.0, denormals,
    values far past the integer range."""
    g = torch.Generator().manual_seed(seed)
    ties = (torch.randint(-400, 400, (n,), generator=g) + 0.5) / r
    near = torch.cat([torch.nextafter(ties, torch.full_like(ties, 1e30)),
                      torch.nextafter(ties, torch.full_like(ties, -1e30))])
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-45, -1e-45, 3e38, -3e38,
                            1e-40, -1e-40])
    return torch.cat([ties, near, special, torch.randn(n, generator=g) * 200 / r]).float()


@pytest.mark.parametrize("scale", [0.25, 0.037, 1 / 3, 1e-3, 2.0, 1e-30, 1e30])
@pytest.mark.parametrize("offset, bits", [(0, 8), (-3, 8), (77, 8), (-128, 8), (127, 8), (2, 4), (-5, 16)])
def test_codes_equal_amct_fake_quant_minus_offset(scale, offset, bits):
    """The kernel's codes are amct_fake_quant's codes with the offset taken off (what QuantLayer ran before)."""
    r = reciprocal_scale(scale)
    lo, hi = A.int_range(bits)
    x = _hard_inputs(r, 3000, bits + offset)
    want = amct_fake_quant(x, scale, offset, bits).sub_(offset)
    assert same_bits(fused.codes(x, r, offset, lo, hi), want)
    assert fused.kernels() is not None


def test_codes_with_infinite_and_zero_reciprocal():
    """A scale so small its reciprocal overflows (x * inf: +-inf, 0 * inf = NaN -> 0) or so large it is 0."""
    lo, hi = A.int_range(8)
    x = _hard_inputs(torch.tensor(1.0), 2000, 1)
    for r in (torch.tensor(float("inf")), torch.tensor(0.0), torch.tensor(-0.0)):
        want = fused.codes_torch(x, r, -7, lo, hi)
        assert same_bits(fused.codes(x, r, -7, lo, hi), want), float(r)


@pytest.mark.parametrize("shape, axis", [((64, 16, 32), 2), ((300, 10), 1), ((8, 6, 7, 5), 1),
                                         ((2, 4, 3, 5, 6), 1), ((3, 40, 100), 1)])
def test_dequant_equals_mul_then_add(shape, axis):
    g = torch.Generator().manual_seed(len(shape))
    acc = torch.randint(-2 ** 23, 2 ** 23, shape, generator=g).float()
    flat = acc.view(-1)
    flat[:5] = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0])
    C = shape[axis]
    deq = torch.rand(C, generator=g) * 1e-3
    deq[0], deq[-1] = 0.0, float("inf")
    bias = torch.randn(C, generator=g)
    bias[1 % C] = -0.0
    view = [1] * len(shape)
    view[axis] = C
    for d in (deq, torch.tensor([3.7e-4])):            # per channel, per tensor
        for b in (None, bias):
            want = acc.clone().mul_(d.reshape(view) if d.numel() > 1 else d)
            if b is not None:
                want = want + b.reshape(view)
            assert same_bits(fused.dequant(acc.clone(), d, b, axis), want), (d.numel(), b is not None)


def test_ifmr_squared_errors_and_result_equal_the_torch_ops(monkeypatch):
    """IFMR's losses through the kernel equal the one-at-a-time torch ops (the reference of
    tests/test_quant_fixed_cost.py) exactly, and so does the chosen scale/offset, on near-tie data too."""
    g = torch.Generator().manual_seed(3)
    for n, with_offset in ((300, True), (8192, False), (40000, True), (5000, False)):
        x = torch.randn(n, generator=g) * 2
        x[: n // 10] = (torch.randint(-60, 60, (n // 10,), generator=g) + 0.5) / 32     # ties on a 1/32 grid
        fast = A.ifmr(x, 8, with_offset)
        monkeypatch.setattr(A, "IFMR_FUSED", False)
        slow = A.ifmr(x, 8, with_offset)
        monkeypatch.setattr(A, "IFMR_ROWS_ELEMENTS", 0)
        slowest = A.ifmr(x, 8, with_offset)
        monkeypatch.undo()
        assert fast == slow == slowest, n
        cands = torch.arange(0.7, 1.3, 0.01, dtype=torch.float32) * float(x.abs().max())
        lows = (-cands).tolist()
        scales = cands / 127
        want = []
        for low, cand, s in zip(lows, cands.tolist(), scales.tolist()):
            err = torch.round(x.clamp(low, cand) / s) * s - x
            want.append(A.numerics.mean(err * err))
        assert A._mse_losses(x, lows, cands, scales) == want


def _layer(kind: str, offset: int, channel_wise: bool):
    if kind == "conv":
        m = nn.Conv2d(6, 10, 3, padding=1)
    else:
        m = nn.Linear(40, 24)
    wq = arq(m.weight, 8, channel_wise)
    s_d, _ = scale_offset(torch.tensor(3.0), torch.tensor(-1.0), True, 8)
    deq = float(s_d) * wq.scale
    bias_codes = torch.round(m.bias.detach() / deq).to(torch.int64)
    layer = QuantLayer("l", ConvGeometry.of(m), wq.codes.to(torch.int8), wq.scale, float(s_d), offset,
                       bias_codes=bias_codes, bias=m.bias.detach() if kind == "linear" else None)
    return m, layer


class _Sim:
    policy = None
    notes: list = []


@pytest.mark.parametrize("kind, shape", [("linear", (300, 40)), ("linear", (64, 16, 40)), ("conv", (4, 6, 9, 9))])
@pytest.mark.parametrize("offset", [-128, -20, 0])
@pytest.mark.parametrize("channel_wise", [True, False])
def test_int8_layer_output_unchanged(kind, shape, offset, channel_wise, monkeypatch):
    """QuantLayer.run under fake quant (no policy) gives the same bits with the kernels and with the torch ops
    -- a 3-D Linear's float bias (AMCT's MatMul + Add) and inputs with NaN/inf included."""
    g = torch.Generator().manual_seed(abs(offset) + len(shape))
    m, layer = _layer(kind, offset, channel_wise)
    x = torch.randn(shape, generator=g) * 2
    x.view(-1)[:3] = torch.tensor([float("nan"), float("inf"), -float("inf")])
    assert fused.kernels() is not None, fused.why()          # loaded (and self-checked) before counting calls
    monkeypatch.setattr(M.int_gemm, "ENABLED", False)    # these kernels, not a Linear's int8 GEMM (test_quant_int_gemm)
    calls = []
    for fn in ("_codes", "_dequant"):
        real = getattr(fused, fn)
        monkeypatch.setattr(fused, fn, lambda *a, real=real, fn=fn: calls.append(fn) or real(*a))
    got = layer.run(_Sim(), m, m.forward, (x,), {})
    assert calls == ["_codes", "_dequant"]            # the kernels ran (not the torch fallback)
    monkeypatch.setattr(fused, "ENABLED", False)
    want = layer.run(_Sim(), m, m.forward, (x,), {})
    assert got[1:] == want[1:]
    assert same_bits(got[0], want[0])


def test_self_check_refuses_another_rounding(monkeypatch, tmp_path):
    """A kernel rounding half away from zero (roundf, not the half-to-even rintf) is refused by the self-check."""
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path))          # not into the user's cache
    monkeypatch.setattr(fused, "_SOURCE", fused._SOURCE.replace("rintf(x[i] * r)", "roundf(x[i] * r)"))
    lib = fused._load()
    assert "codes differ" in fused._self_check(lib)


@pytest.mark.parametrize("shape", [(64, 16, 40), (1024, 40)])
@pytest.mark.parametrize("lean", [False, True])
@pytest.mark.parametrize("change", ["scale_w", "codes", "bias_codes", "scale_d", "offset_d", "bias", "act_bits",
                                    "codes_replaced"])
def test_kept_constants_follow_a_changed_layer(change, lean, shape, monkeypatch):
    """QuantLayer._kept (and, lean, the lean call's _lean) checks the plan, float32 codes and deq_scale with one
    key: a layer whose scale_w, codes or bias codes change in place, whose codes or float bias are replaced, or
    whose scale_d / offset_d / act_bits are reassigned, computes from the new values (the same bits as a layer
    built fresh with them). Both input ranks: a 3-D Linear adds the float bias after dequant, a 2-D one keeps the
    int32 bias inside the matmul -- so the bias codes are read only on the 2-D input."""
    import copy
    monkeypatch.setattr(M, "LEAN_CALL", lean)
    m, layer = _layer("linear", -20, True)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(9))
    layer.run(_Sim(), m, m.forward, (x,), {})                 # constants kept
    fresh = copy.deepcopy(layer)
    for lay in (layer, fresh):
        if change == "scale_w":
            lay.scale_w.mul_(2)
        elif change == "codes":
            lay.codes[0].neg_()
        elif change == "bias_codes":
            lay.bias_codes.add_(7)
        elif change == "scale_d":
            lay.scale_d = lay.scale_d * 1.5
        elif change == "bias":
            lay.bias = lay.bias * 3
        elif change == "act_bits":
            lay.act_bits = 6
        elif change == "codes_replaced":
            lay.codes = lay.codes.flip(0)
        else:
            lay.offset_d = -3
    kept = "_lean_state" if lean else "_kept_state"
    assert kept in layer.__dict__ and kept not in fresh.__dict__    # a copy keeps none
    got = layer.run(_Sim(), m, m.forward, (x,), {})[0]
    assert same_bits(got, fresh.run(_Sim(), m, m.forward, (x,), {})[0])


@pytest.mark.parametrize("n", [1, 2, 8, 9, 128, 129, 1000, 8192, 8193, 41000, 70001])
def test_row_means_equal_numerics_mean_row_by_row(n):
    """IFMR's losses: one NumPy reduce over a block's rows gives each row's numerics.mean exactly (wide and
    narrow magnitudes, so the pairwise order shows in the last bits); the check behind it says so here too."""
    g = torch.Generator().manual_seed(n)
    e = (torch.randn(4, n, generator=g) * torch.tensor([1e-4, 1.0, 1e4, 3.0])[:, None]) ** 2
    assert A._row_reduce_agrees()
    assert A._row_means(e) == [A.numerics.mean(e[r]) for r in range(4)]


def test_self_check_passes_under_another_default_dtype():
    """The self-check builds float32 data whatever torch's default dtype is (float64 made it fail: kernels off)."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert fused._self_check(fused._load()) is None
    finally:
        torch.set_default_dtype(old)


def test_neg_view_takes_the_torch_ops():
    """A neg-bit view's storage holds the values un-negated: the kernel would read the wrong sign."""
    x = torch._neg_view(torch.linspace(-400, 400, 1000))
    r = torch.tensor(1 / 0.37)
    assert same_bits(fused.codes(x, r, 3, -128, 127), fused.codes_torch(x.clone(), r, 3, -128, 127))


def _load_in_subprocess(cache) -> subprocess.Popen:
    """A fresh process (dlopen keeps a library per path for the life of a process) loading and checking."""
    code = ("from opkit.quant import fused; import sys; lib = fused._load(); "
            "sys.exit(0 if fused._self_check(lib) is None else 1)")
    return subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "OPKIT_CACHE_DIR": str(cache)},
                            stderr=subprocess.PIPE, text=True)


def test_a_broken_cached_library_is_rebuilt(tmp_path, monkeypatch):
    """A library file without the kernels' symbols (e.g. built from a truncated source by a racing process) is
    removed when it fails to load, and the next process rebuilds it instead of every later run failing."""
    from opkit.quant import native
    p = _load_in_subprocess(tmp_path)
    assert p.wait(timeout=300) == 0, p.stderr.read()
    so = next((tmp_path / "fused_quant").glob("fused-*.so"))
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path))
    native.load("int opkit_unrelated(void) { return 0; }", "scratch", "other", ("opkit_unrelated",))
    other = next((tmp_path / "scratch").glob("other-*.so"))
    so.unlink()
    so.write_bytes(other.read_bytes())                           # the right name, the wrong content
    with pytest.raises(native.BuildError, match="opkit_codes"):
        fused._load()
    assert not so.exists()
    p = _load_in_subprocess(tmp_path)
    assert p.wait(timeout=300) == 0, p.stderr.read()
    assert so.exists()


def test_concurrent_builds_never_share_a_file(tmp_path):
    """Four processes building the same kernel into an empty cache at once all load a complete library."""
    procs = [_load_in_subprocess(tmp_path) for _ in range(4)]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    assert len(list((tmp_path / "fused_quant").glob("*.so"))) == 1
    assert not list((tmp_path / "fused_quant").glob("*.tmp"))
