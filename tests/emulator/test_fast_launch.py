"""Checked once, then fast (tests/emulator/test_fast_launch.cpp; docs/emulator.md "Checked once, then fast"):
a launch with OPKIT_LAUNCH_FAST skips the per-call rules but gives the checked launch's bytes and still
checks GM bounds; the torch binding checks the first launch of a key and runs the same key fast after it."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from conftest import CACHE
from opkit.emulator.abi import KernelModule
from opkit.emulator.modules import compile_module
from opkit.errors import EmulatorError

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def mods():
    src = HERE / "test_fast_launch.cpp"
    return {e: KernelModule(compile_module(src, e, 3, CACHE / "modules", opt="-O1"))
            for e in ("emu_fast_leak", "emu_fast_race", "emu_fast_oob")}


def flag(v: int) -> np.ndarray:
    return np.frombuffer(struct.pack("I", v), np.uint8).copy()


def test_fast_launch_skips_rules_keeps_data(mods):
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    mods["emu_fast_leak"].launch([x, y, flag(0)], 1)                 # clean: checked and fast agree
    y_fast = np.zeros(64, np.float32)
    mods["emu_fast_leak"].launch([x, y_fast, flag(0)], 1, fast=True)
    assert np.array_equal(y, x) and np.array_equal(y_fast, x)
    with pytest.raises(EmulatorError) as e:
        mods["emu_fast_leak"].launch([x, y, flag(1)], 1)
    assert e.value.rule == "ub-uninitialized"
    with pytest.raises(EmulatorError) as e:
        mods["emu_fast_race"].launch([x, y, flag(0)], 1)
    assert e.value.rule == "pipe-race"
    mods["emu_fast_race"].launch([x, y, flag(0)], 1, fast=True)      # rules skipped: no error
    assert np.array_equal(y, x + 1)


def test_fast_launch_alt_fill_exposes_uninitialised_ub(mods):
    """The harness's proof runs fast with another fill byte: an output made of uninitialised UB changes."""
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    mods["emu_fast_leak"].launch([x, y, flag(1)], 1, fast=True, alt_fill=True)
    assert (y.view(np.uint8) == 0x5A).all()


def test_fast_launch_still_checks_gm_bounds(mods):
    x, y = np.zeros(64, np.float32), np.zeros(64, np.float32)
    for fast in (False, True):
        with pytest.raises(EmulatorError) as e:
            mods["emu_fast_oob"].launch([x, y, flag(0)], 1, fast=fast)
        assert e.value.rule == "gm-bounds"


def test_binding_checks_the_first_launch_of_a_key(monkeypatch, tmp_path):
    """csrc/kernels.cpp: OPKIT_EMU_CHECKS=once (default) checks the first launch of (module, blocks, tiling key,
    GM sizes, tiling bytes) and runs that key fast after it; always checks every launch; a bad value is an error."""
    import torch

    import opkit
    from opkit.registration import last_launch

    monkeypatch.chdir(tmp_path)                        # outside any workspace: the bundled op
    opkit.load(ops=["reduce_sum_fp32"], quiet=True)
    op = torch.ops.opkit.reduce_sum_fp32
    monkeypatch.delenv("OPKIT_EMU_CHECKS", raising=False)
    x = torch.randn(37, 301, generator=torch.Generator().manual_seed(3))   # a shape no other test launches
    first = op(x, -1, False)
    assert last_launch()["checked"] is True
    again = op(x * 2, -1, False)                       # same key, other data: fast
    assert last_launch()["checked"] is False
    assert torch.equal(again, op(x * 2, -1, False))
    assert torch.allclose(first, x.sum(-1), rtol=1e-5, atol=1e-4)
    op(x[:36], -1, False)                              # another shape: a new key, checked
    assert last_launch()["checked"] is True
    monkeypatch.setenv("OPKIT_EMU_CHECKS", "always")
    assert torch.equal(op(x * 2, -1, False), again) and last_launch()["checked"] is True
    monkeypatch.setenv("OPKIT_EMU_CHECKS", "fast")
    assert torch.equal(op(x * 2, -1, False), again) and last_launch()["checked"] is False
    monkeypatch.setenv("OPKIT_EMU_CHECKS", "sometimes")
    with pytest.raises(RuntimeError, match="OPKIT_EMU_CHECKS is 'sometimes'; expected once, always or fast"):
        op(x, -1, False)
