"""DropOut (lib/filter/dropout.h) against PyTorch: the byte mask multiplies src, a bit mask (LSB first) keeps or
zeroes it, kept values scaled by 1 / keepProb rounded to T (asc-devkit 82b89a15 impl/adv_api/detail/filter/dropout/;
page docs/zh/api/SIMD-API/高阶API/数据过滤/DropOut.md). The misaligned modes pack the used mask bytes in place."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError

SRC = Path(__file__).resolve().parent / "test_dropout.cpp"
KEEP = 0.8


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load  # one module, built on its own (cached)
    return load(compile_pybind("dropout", headers_digest()), "dropout")


def call(mod, rows, cols, mcols, x, mask, mode=0, half=0, with_tmp=1, tmp=512, keep=KEEP):
    out = np.zeros(max(rows, 1) * cols, np.float32)
    m = mask.copy()
    t = np.frombuffer(np.array([rows, cols, mcols], np.uint32).tobytes() +
                      np.array([mode, half, with_tmp], np.int32).tobytes() + np.array([tmp], np.uint32).tobytes() +
                      np.array([keep], np.float32).tobytes(), np.uint8).copy()
    mod.drop_call([x, m, out, t], block_dim=1)
    return out.reshape(max(rows, 1), cols), m


def expected(x, keep_rows, half):
    dt = torch.float16 if half else torch.float32
    xt = torch.from_numpy(x).to(dt)
    div = torch.tensor(1 / np.float32(KEEP), dtype=torch.float32).to(dt)
    return (torch.where(torch.from_numpy(keep_rows), xt * div, torch.zeros((), dtype=dt))).float().numpy()


# (rows, cols, mask cols, bit mask?, the mode 0 picks)
SHAPES = [(4, 32, 32, False, 2), (4, 32, 64, False, 1), (4, 64, 8, True, 3), (4, 64, 32, True, 4)]


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("rows,cols,mcols,bits,picked", SHAPES)
def test_dropout_matches_torch(mod, rows, cols, mcols, bits, picked, half):
    rng = np.random.default_rng(0)
    x = rng.uniform(-100, 100, (rows, cols)).astype(np.float32)
    mask = (rng.integers(0, 256, (rows, mcols)) if bits else rng.integers(0, 2, (rows, mcols))).astype(np.uint8)
    keep = np.unpackbits(mask, axis=1, bitorder="little")[:, :cols] == 1 if bits else mask[:, :cols] == 1
    want = expected(x, keep, half)
    for mode in (0, picked):
        for with_tmp in (1, 0):
            got, m_after = call(mod, rows, cols, mcols, x.ravel(), mask.ravel(), mode, half, with_tmp)
            np.testing.assert_array_equal(got, want, err_msg=f"mode {mode} tmp {with_tmp}")
            if picked in (1, 4):  # GatherMask packs each row's used bytes to the front
                used = cols if picked == 1 else cols // 8
                np.testing.assert_array_equal(m_after[:rows * used], mask[:, :used].ravel())
            else:
                np.testing.assert_array_equal(m_after, mask.ravel())


def test_byte_mask_multiplies(mod):
    """A byte of 2 doubles (CANN casts the byte to T and multiplies): a mask is meant to hold 0 / 1."""
    x = np.ones(32, np.float32)
    mask = np.full(32, 2, np.uint8)
    got, _ = call(mod, 1, 32, 32, x, mask)
    np.testing.assert_array_equal(got, np.float32(2) * np.float32(1 / np.float32(KEEP)))


@pytest.mark.parametrize("keep,rows,mcols,mode,what", [
    (1.0, 4, 32, 0, "keepProb is 1"), (0.0, 4, 32, 0, "keepProb is 0"), (KEEP, 0, 32, 0, "firstAxis is 0"),
    (KEEP, 32, 33, 1, "maskLastAxis 33 / srcLastAxis 32"), (KEEP, 4, 48, 1, "must be a multiple of 32 bytes"),
    (KEEP, 4, 16, 2, "does not fit"), (KEEP, 4, 64, 2, "reads the mask flat"), (KEEP, 4, 8, 3, "8 x maskLastAxis")])
def test_bad_arguments_are_named(mod, keep, rows, mcols, mode, what):
    x = np.ones(max(rows, 1) * 32, np.float32)  # 32 rows of 33 mask bytes: a whole number of 32-byte blocks
    with pytest.raises(EmulatorError) as e:
        call(mod, rows, 32, mcols, x, np.ones(max(rows, 1) * mcols, np.uint8), mode=mode, keep=keep)
    assert e.value.rule == "api-argument" and e.value.call == "DropOut" and what in e.value.detail


def test_tmp_below_minimum(mod):
    x, mask = np.ones(4 * 32, np.float32), np.ones(4 * 32, np.uint8)
    with pytest.raises(EmulatorError) as e:
        call(mod, 4, 32, 32, x, mask, tmp=480)
    assert e.value.rule == "tensor-bounds" and "GetDropOutMaxMinTmpSize" in e.value.detail and "512" in e.value.detail
    call(mod, 4, 32, 32, x, mask, tmp=512)
