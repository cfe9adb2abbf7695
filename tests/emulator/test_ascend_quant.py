"""AscendQuant (lib/quantization/ascend_quant.h), against PyTorch.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/量化操作/AscendQuant.md; signatures
include/adv_api/quantization/ascend_quant.h:20-136; the A2 computation impl/adv_api/detail/quantization/quant/
ascend_quant_pre_impl.h:101-164,320-348 (in half: x cast to half, times the half scale, plus the half offset, each
rounded to half, then to int8 nearest-even, saturating); minimum sharedTmpBuffer
impl/adv_api/tiling/quantization/ascend_quant_tiling_impl.cpp:35 (2 x 256 bytes). The reference reproduces those
half roundings in PyTorch and must match bit for bit; it also stays within one step of the float formula
round(x * scale + offset)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("ascend_quant", headers_digest()), "ascend_quant")


def run(mod, n, channels, mode, half, tmp, scale=0.0, offset=0.0, seed=0, x=None, sc=None, of=None):
    rng = np.random.default_rng(seed + n + 3 * channels + mode)
    x = rng.uniform(-6, 6, n).astype(np.float32) if x is None else x
    ch = max(channels, 1)
    cb4 = -(-ch * 4 // 32) * 32 // 4
    sc = rng.uniform(5, 25, ch).astype(np.float32) if sc is None else sc
    of = rng.uniform(-3, 3, ch).astype(np.float32) if of is None else of
    so = np.zeros(2 * cb4, np.float32)
    so[:ch], so[cb4:cb4 + ch] = sc, of
    ob = -(-n // 32) * 32 + cb4 * 4
    out = np.zeros(ob, np.uint8)
    t = np.concatenate([np.array([n, channels, mode, half, tmp], np.uint32).view(np.uint8),
                        np.array([scale, offset], np.float32).view(np.uint8)])
    mod.quant_call([x, so, out, t.copy()], block_dim=1)
    return x, sc, of, out[:n].view(np.int8), out[ob - cb4 * 4:]


def reference(x, scale, offset):
    """the A2 sequence in half (torch's half arithmetic rounds each op to nearest even, as the vector unit does)"""
    h = lambda a: torch.as_tensor(np.asarray(a, np.float32)).half()  # noqa: E731
    q = h(x) * h(scale) + h(offset)
    return torch.clamp(torch.round(q.float()), -128, 127).to(torch.int8).numpy()


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("mode,n,channels", [(0, 64, 0), (0, 1000, 0), (1, 256, 32), (1, 192, 64), (2, 256, 32),
                                             (2, 512, 128)])
def test_ascend_quant_matches_torch(mod, mode, n, channels, half):
    for tmp in (512, 0):
        x, sc, of, got, scale_after = run(mod, n, channels, mode, half, tmp, scale=17.5, offset=-1.25)
        if mode == 0:
            s, o = np.float32(17.5), np.float32(-1.25)
        else:
            s = np.tile(sc, n // channels)
            o = np.tile(of, n // channels) if mode == 2 else np.float32(-1.25)
        np.testing.assert_array_equal(got, reference(x, s, o))
        exact = np.clip(np.rint(x.astype(np.float64) * s + o), -128, 127)
        assert np.abs(got - exact).max() <= 1     # the half roundings move a result by one step at most
        if mode and not half:   # the float scale tensor now holds the half scales (CANN reuses it)
            np.testing.assert_array_equal(scale_after[:2 * channels].view(np.float16), sc.astype(np.float16))


def test_saturates_to_int8(mod):
    x = np.array([300.0, -300.0, 127.4, -128.6] * 8, np.float32)
    _, _, _, got, _ = run(mod, 32, 0, 0, 0, 512, scale=1.0, offset=0.0, x=x)
    np.testing.assert_array_equal(got[:4], [127, -128, 127, -128])


def test_tmp_below_cann_minimum_is_a_rule_violation(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 64, 0, 0, 1, 480, scale=2.0)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "AscendQuant")
    assert "GetAscendQuantMaxMinTmpSize" in e.value.detail and "512" in e.value.detail
    assert e.value.file.endswith("test_ascend_quant.cpp")


def test_scale_count_must_divide_cal_count(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 96, 64, 1, 1, 512)
    assert (e.value.rule, e.value.call) == ("api-argument", "AscendQuant") and "divide calCount" in e.value.detail
