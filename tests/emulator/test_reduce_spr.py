"""The count-form reductions' result registers (opkit_emu/reduce.h), against ReduceSum's own result and PyTorch.

asc-devkit 82b89a15 include/basic_api/kernel_operator_vec_reduce_intf.h:186-205 (GetReduceRepeatSumSpr,
GetAccVal, GetReduceRepeatMaxMinSpr, GetReduceMaxMinCount); page 基础API/Memory矢量计算/归约计算辅助配置接口/
GetReduceRepeatSumSpr(ISASI).md ("the result of the tensor-first-n ReduceSum"); the max/min value and index
layout: impl/basic_api/dav_c220/kernel_operator_vec_reduce_impl.h:963-981."""
from __future__ import annotations

import numpy as np
import pytest
import torch


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("reduce_spr", headers_digest()), "reduce_spr")


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("n", [64, 200, 1000])
def test_registers_hold_the_last_reduction(mod, n, half):
    x = np.random.default_rng(n).uniform(-4, 4, n).astype(np.float32)
    x[n // 3] = 9.0    # a unique max and min at known places
    x[n // 2] = -9.0
    out = np.zeros(8, np.float32)
    mod.spr_call([x, out, np.array([n, half], np.uint32).view(np.uint8).copy()], block_dim=1)
    assert out[1] == out[0] and out[2] == out[0]      # the register is ReduceSum's result, bit for bit
    assert out[7] == 1                                # the untyped GetAccVal() holds the same bits
    xt = torch.from_numpy(x).to(torch.float16 if half else torch.float32).float()
    np.testing.assert_allclose(out[0], xt.sum().item(), rtol=2e-3 if half else 1e-5, atol=0.1 if half else 1e-4)
    assert (out[3], out[4]) == (9.0, n // 3)
    assert (out[5], out[6]) == (-9.0, n // 2)


def test_value_only_form_is_a_compile_error_naming_it(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                   'void f() { float v; GetReduceMaxMinCount<float>(v); }\n')
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0 and "not supported on the emulator: GetReduceMaxMinCount" in r.stderr
