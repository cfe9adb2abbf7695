"""AdjustSoftMaxRes (lib/activation/softmax.h; page asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口/
AdjustSoftMaxRes.md; A2 code impl/adv_api/detail/activation/softmax/membase/common/softmax_common_impl.h:66-124): each
row whose max (element r x 8 for float, r with stepSizeMode 1) has the bits `from` is overwritten with `to` over its
srcK elements, and the call returns whether any row was. Bitwise, checked with numpy."""
from __future__ import annotations

import numpy as np
import pytest



@pytest.fixture(scope="module")
def emu():
    from conftest import compile_pybind, headers_digest, load
    mod = load(compile_pybind("softmax", headers_digest()), "softmax")
    return lambda name: mod


def run(emu, mode, m, k, maxes, frm, to, seed=0):
    rng = np.random.default_rng(seed)
    res = rng.random((m, k)).astype(np.float32)
    mx = np.repeat(np.asarray(maxes, np.float32)[:, None], 8, axis=1)
    if mode == 1:  # stepSizeMode 1 reads the max at element r: the kernel casts the first m values
        mx = np.concatenate([np.asarray(maxes, np.float32), np.zeros(7 * m, np.float32)])
        res = res.astype(np.float16).astype(np.float32)
    case = np.concatenate([np.array([mode, m, k, frm, 8 * m], np.uint32),
                           np.array([to], np.float32).view(np.uint32)]).view(np.uint8)
    out = np.zeros(m * k + 8, np.float32)
    emu("softmax").adjust([np.concatenate([res.ravel(), mx.ravel()]), out, case.copy()], block_dim=1)
    return res, out[:m * k].reshape(m, k), bool(out[m * k])


def bits32(v):
    return int(np.array([v], np.float32).view(np.uint32)[0])


def bits16(v):
    return int(np.array([v], np.float16).view(np.uint16)[0])


def test_float_rows_whose_max_has_the_bits_become_to(emu):
    maxes = [1.5, -np.inf, 2.0, -np.inf, 0.25]
    res, got, hit = run(emu, 0, 5, 16, maxes, bits32(-np.inf), 7.0)
    want = res.copy()
    want[[1, 3]] = 7.0
    np.testing.assert_array_equal(got, want)
    assert hit


def test_no_match_leaves_the_result_and_returns_false(emu):
    res, got, hit = run(emu, 0, 3, 8, [1.0, 2.0, 3.0], bits32(4.0), 0.0)
    np.testing.assert_array_equal(got, res)
    assert not hit


def test_half_with_step_size_mode_1_compares_16_bits(emu):
    maxes = [0.5, 3.0, 0.5, 1.0]
    res, got, hit = run(emu, 1, 4, 16, maxes, bits16(0.5) | 0xABCD0000, -1.0)  # only the low 16 bits count
    want = res.copy()
    want[[0, 2]] = -1.0
    np.testing.assert_array_equal(got, want)
    assert hit


def test_the_nz_format_is_a_compile_error_naming_it(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "lib/activation/softmax.h"\nusing namespace AscendC;\n'
                   "void f() { LocalTensor<float> t; SoftMaxShapeInfo s{}; AdjustSoftMaxRes<float, float, true>(t, t, 0u, 0.0f, s); }\n")
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0 and "not supported on the emulator: AdjustSoftMaxRes with isDataFormatNZ" in r.stderr
