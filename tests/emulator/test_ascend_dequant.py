"""AscendDequant (lib/quantization/ascend_dequant.h), against PyTorch.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/量化操作/AscendDequant.md; signatures
include/adv_api/quantization/ascend_dequant.h; the A2 computation impl/adv_api/detail/quantization/dequant/
ascend_dequant_common_impl.h (int32 -> float, times the float scale of the column for the first calCount columns,
one rounding to dstT: half nearest-even, bfloat16 nearest-even; a uint64_t scale is its low 32 bits as a float);
minimum sharedTmpBuffer impl/adv_api/tiling/quantization/ascend_dequant_tiling_impl.cpp ((64 + 2n + 8) x 4 bytes).
The PyTorch reference does the same float32 multiply and one cast, so results match bit for bit."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError

# pair: (dst dtype, scale kind)
PAIRS = {0: (torch.float32, "f32"), 1: (torch.float16, "u64"), 2: (torch.bfloat16, "bf16"),
         3: (torch.float32, "bf16"), 4: (torch.bfloat16, "f32")}


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("ascend_dequant", headers_digest()), "ascend_dequant")


def min_tmp(n):
    return (64 + n + n + 8) * 4


def scale_bytes(sc, kind):
    if kind == "f32":
        raw = sc.astype(np.float32).tobytes()
    elif kind == "bf16":
        raw = torch.from_numpy(sc).bfloat16().view(torch.int16).numpy().tobytes()
    else:   # uint64_t: the float's bits in the low word, junk in the high word (never read)
        raw = ((np.uint64(0xDEAD) << np.uint64(32)) | sc.astype(np.float32).view(np.uint32).astype(np.uint64)).tobytes()
    out = np.zeros(1024, np.uint8)
    out[:len(raw)] = np.frombuffer(raw, np.uint8)
    return out


def run(mod, m, n, cal, pair, form=0, tmp=None, multi=0, scalar=0.0, scale_elems=None, seed=0):
    rng = np.random.default_rng(seed + m * 131 + n + cal + pair)
    x = rng.integers(-(1 << 20), 1 << 20, (m, n)).astype(np.int32)
    dt, kind = PAIRS[pair]
    sc = torch.from_numpy(rng.uniform(1e-4, 1e-2, cal).astype(np.float32))
    if kind == "bf16":
        sc = sc.bfloat16().float()   # representable, so the kernel's scale equals the reference's
    sc = sc.numpy()
    out = np.zeros(m * n * 4 + 256, np.uint8)
    tmp = min_tmp(n) if tmp is None else tmp
    se = cal if scale_elems is None else scale_elems
    t = np.concatenate([np.array([m, n, cal, pair, form, tmp, multi, se], np.uint32).view(np.uint8),
                        np.array([scalar], np.float32).view(np.uint8)])
    mod.deq_call([x.ravel().copy(), scale_bytes(sc, kind), out, t.copy()], block_dim=1)
    return x, sc, out, dt


def decode(out, dt, rows, inner):
    esz = 4 if dt == torch.float32 else 2
    blk = 32 // esz
    dinner = -(-inner // blk) * blk
    raw = torch.from_numpy(out[:rows * dinner * esz].copy())
    vals = raw.view(torch.float32 if esz == 4 else dt).float().reshape(rows, dinner)
    return vals[:, :inner].numpy()


def reference(x, scale, cal, dt):
    f = torch.from_numpy(x).float()
    f[:, :cal] = f[:, :cal] * torch.as_tensor(scale, dtype=torch.float32)
    return f.to(dt).float().numpy()


@pytest.mark.parametrize("pair", list(PAIRS))
@pytest.mark.parametrize("m,n,cal", [(4, 32, 32), (3, 64, 40), (1, 128, 128), (5, 8, 8)])
def test_dequant_params_form_matches_torch(mod, m, n, cal, pair):
    for tmp in (min_tmp(n), 0):
        x, sc, out, dt = run(mod, m, n, cal, pair, tmp=tmp)
        got = decode(out, dt, m, n)
        np.testing.assert_array_equal(got, reference(x, sc, cal, dt))
        want = x[:, :cal].astype(np.float64) * sc
        np.testing.assert_allclose(got[:, :cal], want, rtol=1e-2 if dt != torch.float32 else 1e-6)


@pytest.mark.parametrize("pair", [0, 2, 4])
def test_scalar_form_matches_torch(mod, pair):
    dt, kind = PAIRS[pair]
    s = float(torch.tensor(0.0037).bfloat16().float()) if kind == "bf16" else 0.0037
    x, _, out, dt = run(mod, 3, 64, 64, pair, form=3, scalar=s)
    np.testing.assert_array_equal(decode(out, dt, 3, 64), reference(x, np.float32(s), 64, dt))


@pytest.mark.parametrize("form", [1, 2])
def test_forms_without_params_take_the_scale_size_as_the_row(mod, form):
    """{src size / scale size, scale size, scale size}; the calCount form stops after calCount elements"""
    x, sc, out, dt = run(mod, 4, 32, 32, 0, form=form)
    got = decode(out, dt, 4, 32).ravel()
    want = reference(x, sc, 32, dt).ravel()
    done = 32 if form == 1 else 128      # the calCount form was given calCount 32 of the 128 elements
    np.testing.assert_array_equal(got[:done], want[:done])
    assert not got[done:].any()          # the rest of dst is left as it was (zeros)


def test_single_row_mode_splits_one_long_row(mod):
    """{1, 128, 32} is {4, 32, 32} in DEQUANT_WITH_SINGLE_ROW: every 32 columns scaled; MULTI_ROW keeps one row,
    only its first 32 columns scaled"""
    x, sc, out, dt = run(mod, 1, 128, 32, 0)
    np.testing.assert_array_equal(decode(out, dt, 4, 32), reference(x.reshape(4, 32), sc, 32, dt))
    x, sc, out, dt = run(mod, 1, 128, 32, 0, multi=1)
    np.testing.assert_array_equal(decode(out, dt, 1, 128), reference(x, sc, 32, dt))


def test_tmp_below_cann_minimum_is_a_rule_violation(mod):
    need = min_tmp(64)
    with pytest.raises(EmulatorError) as e:
        run(mod, 3, 64, 64, 0, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "AscendDequant")
    assert "GetAscendDequantMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_ascend_dequant.cpp")


def test_bad_params_are_refused(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 2, 32, 40, 0)   # calCount beyond n
    assert (e.value.rule, e.value.call) == ("api-argument", "AscendDequant") and "calCount 40" in e.value.detail
    with pytest.raises(EmulatorError) as e:
        run(mod, 2, 32, 32, 0, scale_elems=16)   # deqScale shorter than calCount
    assert e.value.rule == "api-argument" and "deqScale" in e.value.detail
