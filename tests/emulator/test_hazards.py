"""Pipe hazards (issue 10 item 4): MTE2, V, MTE3 and S run in parallel on the NPU; a UB range written on
one pipe and read or overwritten on another with nothing ordering them (queue EnQue/DeQue and
FreeTensor/AllocTensor, SetFlag/WaitFlag, PipeBarrier<PIPE_ALL>) is a `pipe-race` naming both calls and
lines and the event that would order them. Kernels that order everything pass."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from opkit.errors import EmulatorError

SRC = Path(__file__).resolve().parent / "test_hazards.cpp"
TEXT = SRC.read_text()
SCENARIOS = [s.strip() for s in re.search(r"enum Scenario : int32_t \{(.*?)\};", TEXT, re.S)[1].split(",")]


def marker(kind: str, name: str) -> int:
    for i, line in enumerate(TEXT.splitlines(), 1):
        if line.rstrip().endswith(f"// {kind}:{name}"):
            return i
    raise AssertionError(f"no {kind} marker for {name}")


def run(emu, scenario: str, n: int = 0):
    x = np.arange(1024, dtype=np.float32) / 1024
    y = np.zeros(1024, np.float32)
    tiling = np.array([SCENARIOS.index(scenario), n], np.int32).view(np.uint8)
    emu("hazards").hazards([x, y, tiling], block_dim=1)
    return x, y


# scenario -> (racing call, earlier call, event that orders them)
RACES = {
    "kNoVS": ("LocalTensor::GetValue", "ReduceSum", "V_S"),
    "kNoSV": ("Adds", "LocalTensor::SetValue", "S_V"),
    "kNoMte2V": ("Exp", "DataCopy", "MTE2_V"),
    "kNoVMte3": ("DataCopy", "Duplicate", "V_MTE3"),
    "kWarVMte2": ("DataCopy", "Exp", "V_MTE2"),
    "kVecinUsedForOutput": ("DataCopy", "Duplicate", "V_MTE3"),
    "kNoMte3Mte2": ("DataCopy", "DataCopy", "MTE3_MTE2"),
    "kDoubleBufferedNoFree": ("Duplicate", "DataCopy", "MTE3_V"),
}


@pytest.mark.parametrize("scenario", sorted(RACES))
def test_missing_sync_is_a_pipe_race(emu, scenario):
    call, earlier, event = RACES[scenario]
    with pytest.raises(EmulatorError) as e:
        run(emu, scenario)
    err = e.value
    assert (err.rule, err.call, err.line) == ("pipe-race", call, marker("RACE", scenario)), str(err)
    assert f"{earlier} at {SRC}:{marker('EARLIER', scenario)}" in err.detail, str(err)
    assert f"SetFlag<HardEvent::{event}>" in err.detail, str(err)
    src_pipe, dst_pipe = event.split("_", 1)
    assert f"on pipe {dst_pipe}" in err.detail and f"on pipe {src_pipe}" in err.detail, str(err)


@pytest.mark.parametrize("scenario", ["kCleanQueues", "kCleanFlags", "kCleanBarrier", "kCleanTransitive",
                                      "kCleanTbufRegions"])
def test_ordered_kernels_pass(emu, scenario):
    x, y = run(emu, scenario)
    if scenario == "kCleanQueues":
        np.testing.assert_array_equal(y, x * 2)
    elif scenario == "kCleanFlags":
        want = x[:256] + 1
        want[0] = x[:256].sum() + 1  # the scalar unit stored the ReduceSum result into element 0
        np.testing.assert_allclose(y[:256], want, rtol=1e-6)
        np.testing.assert_array_equal(y[256:512], x[256:512])
    elif scenario == "kCleanBarrier":
        np.testing.assert_allclose(y[:256], np.exp(x[:256]), rtol=1e-6)
        assert y[300] == y[5]  # the scalar unit read Exp's own result after the barrier (not numpy's exp: host-dependent)
    elif scenario == "kCleanTransitive":
        np.testing.assert_array_equal(y[:256], x[:256])
    else:
        np.testing.assert_array_equal(y[:256], x[:256] + 1)


def test_scalar_loops_stay_cheap(emu):
    # 1024 SetValue + 1024 GetValue calls: the hazard records of neighbouring scalar accesses merge, so
    # the record count stays constant and the run linear (a record per element would make it quadratic).
    # Counted, not timed: a wall-clock bound fails on a loaded machine.
    x, y = run(emu, "kCleanScalarLoops", 1024)
    assert y[0] == np.float32(2 * sum(range(1024)))
    assert y[1] <= 8, f"{int(y[1])} hazard records after 2048 scalar accesses to 1024 neighbouring elements"
