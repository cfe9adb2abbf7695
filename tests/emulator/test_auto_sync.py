"""--cce-auto-sync=on, CANN's default for kernel-launch and custom-op projects (asc-devkit 同步控制/核内同步/
关键特性说明.md, table 3: the compiler inserts PIPE_S <-> V / MTE2 / MTE3 syncs; 技术附录/.../Scalar读写数据.md):
scalar GetValue / SetValue need no flags; MTE2 -> V still does. test_hazards models --cce-auto-sync=off."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from opkit.errors import EmulatorError

SRC = Path(__file__).resolve().parent / "test_auto_sync.cpp"


def run(emu, mode):
    x = np.arange(256, dtype=np.float32)
    y = np.zeros(256, np.float32)
    emu("auto_sync").auto_sync([x, y, np.array([mode], np.int32)])
    return x, y


def test_scalar_accesses_need_no_flags(emu):
    x, y = run(emu, 0)
    assert y[0] == x.sum()
    x, y = run(emu, 1)
    assert y[0] == 101 and (y[1:] == x[1:] + 1).all()
    x, y = run(emu, 2)
    assert y[0] == 7


def test_copy_then_vector_still_needs_its_flag(emu):
    with pytest.raises(EmulatorError) as e:
        run(emu, 3)
    line = next(i for i, t in enumerate(SRC.read_text().splitlines(), 1) if t.rstrip().endswith("// RACE:kCopyThenVector"))
    assert (e.value.rule, e.value.call, e.value.line) == ("pipe-race", "Exp", line) and "MTE2_V" in e.value.detail
