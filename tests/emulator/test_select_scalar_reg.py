"""Select mode 1 in its register form (opkit_emu/compare_select.h), against PyTorch.

Signature: asc-devkit 82b89a15 include/basic_api/kernel_operator_vec_cmpsel_intf.h:208-213 (Select(dst, selMask,
src0, repeatTime, repeatParams)); impl/basic_api/kernel_operator_vec_cmpsel_intf_impl.h:525-539 and
dav_c220/kernel_operator_vec_cmpsel_impl.h:144-154 (vsel, VSEL_TENSOR_SCALAR_MODE); pages docs/zh/api/SIMD-API/
基础API/Memory矢量计算/比较与选择/Select.md (mode 1 consumes selMask continuously across repeats; no mask argument:
with SetVectorMask and SetCmpMask) and SetCmpMask(ISASI).md (mode 1: SetCmpMask takes the src1 tensor).
Exact: a choice, no arithmetic."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("select_scalar_reg", headers_digest()), "select_scalar_reg")


def run(mod, x0, bits, scalar, lanes, set_reg=1):
    out = np.zeros(128, np.float32)
    scal = np.full(8, scalar, np.float32)
    mod.sel_scalar([x0, bits, scal, out, np.array([lanes, set_reg], np.uint32)], block_dim=1)
    return out


@pytest.mark.parametrize("lanes", [64, 23])
def test_select_takes_the_register_scalar(mod, lanes):
    rng = np.random.default_rng(lanes)
    x0 = rng.standard_normal(128).astype(np.float32)
    bits = rng.integers(0, 256, 32, dtype=np.uint8)
    got = run(mod, x0, bits, 2.5, lanes)
    take0 = torch.from_numpy(np.unpackbits(bits, bitorder="little")[:128].astype(bool))  # repeat 1: bits 64..127
    want = torch.where(take0, torch.from_numpy(x0), torch.tensor(2.5))
    on = torch.zeros(128, dtype=torch.bool)
    on[:lanes] = True
    on[64:64 + lanes] = True
    want = torch.where(on, want, torch.tensor(-7.0))
    np.testing.assert_array_equal(got, want.numpy())


def test_select_without_set_cmp_mask_is_poison(mod):
    x0 = np.ones(128, np.float32)
    bits = np.zeros(32, np.uint8)  # every lane takes the (never set) register scalar
    with pytest.raises(EmulatorError) as e:
        run(mod, x0, bits, 2.5, 64, set_reg=0)
    assert e.value.rule == "ub-uninitialized" and e.value.call == "DataCopy"
