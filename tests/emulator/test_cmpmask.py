"""The CmpMask register forms (opkit_emu/compare_select.h), against PyTorch.

Signatures: asc-devkit 82b89a15 include/basic_api/kernel_operator_vec_cmpsel_intf.h:66-75 (Compare without dst),
96-99 (GetCmpMask / SetCmpMask), 201-206 (Select<T, selMode> without selMask); pages docs/zh/api/SIMD-API/基础API/
Memory矢量计算/比较与选择/Compare（结果存入寄存器）.md (one repeat, 128-bit register), GetCmpMask(ISASI).md,
SetCmpMask(ISASI).md (mode 0: the selMask bits), Select.md (mode 0: the first 256/sizeof(T) bits in every repeat).
Exact: a comparison and a choice, no arithmetic."""
from __future__ import annotations

import numpy as np
import pytest
import torch


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("cmpmask", headers_digest()), "cmpmask")


def run(mod, x0, x1, bits, set_from_tensor, lanes):
    out = np.zeros(72, np.float32)
    mod.cmpmask([x0, x1, bits, out, np.array([set_from_tensor, lanes], np.uint32)], block_dim=1)
    return out[:64], out[64:68].view(np.uint8)


@pytest.mark.parametrize("lanes", [64, 40])
def test_compare_into_register_then_select(mod, lanes):
    rng = np.random.default_rng(lanes)
    x0, x1 = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    x1[::7] = x0[::7]  # ties: LT false, Select takes x1
    bits = rng.integers(0, 256, 32, dtype=np.uint8)
    sel, reg = run(mod, x0, x1, bits, 0, lanes)
    a, b = torch.from_numpy(x0), torch.from_numpy(x1)
    want = torch.full((64,), -7.0)
    want[:lanes] = torch.where(a < b, a, b)[:lanes]
    np.testing.assert_array_equal(sel, want.numpy())
    lt = (a < b).numpy()
    got_bits = np.unpackbits(reg, bitorder="little").astype(bool)
    np.testing.assert_array_equal(got_bits[:lanes], lt[:lanes])
    # lanes outside Compare's mask keep what SetCmpMask loaded
    np.testing.assert_array_equal(got_bits[lanes:], np.unpackbits(bits[:16], bitorder="little").astype(bool)[lanes:])


def test_set_cmp_mask_feeds_select(mod):
    rng = np.random.default_rng(5)
    x0, x1 = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    bits = rng.integers(0, 256, 32, dtype=np.uint8)
    sel, reg = run(mod, x0, x1, bits, 1, 64)
    take0 = torch.from_numpy(np.unpackbits(bits[:8], bitorder="little").astype(bool))
    np.testing.assert_array_equal(sel, torch.where(take0, torch.from_numpy(x0), torch.from_numpy(x1)).numpy())
    np.testing.assert_array_equal(reg, bits[:16])  # GetCmpMask stores what SetCmpMask loaded


@pytest.mark.parametrize("op", range(6))
def test_comparison_operators(mod, op):
    """dst = a OP b (asc-devkit 82b89a15 impl/basic_api/kernel_tensor_impl.h:1154-1230): the count-form Compare over
    a.GetSize() elements."""
    rng = np.random.default_rng(op)
    x0, x1 = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    x1[::5] = x0[::5]
    out = np.zeros(32, np.uint8)
    mod.cmp_operator([x0, x1, out, np.array([op], np.uint32)], block_dim=1)
    a, b = torch.from_numpy(x0), torch.from_numpy(x1)
    want = [a < b, a > b, a <= b, a >= b, a == b, a != b][op].numpy()
    np.testing.assert_array_equal(np.unpackbits(out[:8], bitorder="little").astype(bool), want)
