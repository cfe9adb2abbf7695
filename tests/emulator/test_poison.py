"""Uninitialised UB as poison (issue 10 item 3): hardware-legal patterns that compute on unwritten lanes
and then discard them pass; poison that reaches GM or a scalar GetValue is `ub-uninitialized`, naming
the first poisoned element."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from opkit.errors import EmulatorError

SRC = Path(__file__).resolve().parent / "test_poison.cpp"
TEXT = SRC.read_text()
SCENARIOS = [s.strip() for s in re.search(r"enum Scenario : int32_t \{(.*?)\};", TEXT, re.S)[1].split(",")]
RNG = np.random.default_rng(5)


def leak_line(name: str) -> int:
    for i, line in enumerate(TEXT.splitlines(), 1):
        if line.rstrip().endswith(f"// LEAK:{name}"):
            return i
    raise AssertionError(name)


def run(emu, scenario: str, n: int):
    x = RNG.standard_normal(256).astype(np.float32)
    y = np.full(256, -7.0, np.float32)
    emu("poison").poison([x, y, np.array([SCENARIOS.index(scenario), n], np.int32).view(np.uint8)], block_dim=1)
    return x, y


@pytest.mark.parametrize("n", [100, 97, 64])
def test_compare_over_padded_lanes_passes(emu, n):
    x, y = run(emu, "kComparePadded", n)
    np.testing.assert_array_equal(y[:n], np.maximum(x[:n], 0))
    assert (y[n:] == -7).all()


# The survey's Heaviside kernel (docs/cann.md) compares a 256-byte multiple past its data with CompareScalar.
@pytest.mark.parametrize("scenario", ["kComparesPadded", "kL0ComparePadded", "kL0ComparesPadded"])
@pytest.mark.parametrize("n", [100, 97, 64])
def test_compares_and_level0_forms_over_padded_lanes_pass(emu, scenario, n):
    x, y = run(emu, scenario, n)
    np.testing.assert_array_equal(y[:n], np.maximum(x[:n], 0))
    assert (y[n:] == -7).all()


@pytest.mark.parametrize("n", [100, 97, 61])
def test_partly_defined_bitmask_bytes_pass(emu, n):
    x, y = run(emu, "kBitmaskPartial", n)
    np.testing.assert_array_equal(y[:n], np.maximum(x[:n], 0))


def test_unused_reduction_over_poison_passes(emu):
    x, y = run(emu, "kReduceUnused", 40)
    np.testing.assert_allclose(y[0], x[:40].sum(), rtol=1e-5)


def test_overwritten_poison_is_gone(emu):
    _, y = run(emu, "kOverwriteCures", 8)
    assert (y[:64] == 3).all()


# scenario, n -> (call, first poisoned element)
LEAKS = {
    ("kComparePaddedLeak", 100): ("DataCopy", "element 104"),  # DataCopyPad's dummy fill defines 100..103
    ("kBitmaskPartialLeak", 61): ("DataCopyPad", "element 61"),
    ("kReduceUsed", 40): ("LocalTensor::GetValue", "undefined"),
    ("kCastLeak", 0): ("DataCopy", "element 16"),
    ("kUbToUbCopy", 0): ("DataCopy", "element 0"),
    ("kComparesPaddedLeak", 100): ("DataCopy", "element 104"),
    ("kL0ComparePaddedLeak", 100): ("DataCopy", "element 104"),
    ("kL0ComparesPaddedLeak", 97): ("DataCopy", "element 104"),
}


@pytest.mark.parametrize("scenario,n", sorted(LEAKS))
def test_poison_reaching_gm_or_scalar_fails(emu, scenario, n):
    call, words = LEAKS[(scenario, n)]
    with pytest.raises(EmulatorError) as e:
        run(emu, scenario, n)
    err = e.value
    assert (err.rule, err.call, err.line) == ("ub-uninitialized", call, leak_line(scenario)), str(err)
    assert words in err.detail, str(err)
