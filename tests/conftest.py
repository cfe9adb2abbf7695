"""Fixtures shared by the kit's own tests."""
from __future__ import annotations

import contextlib

import pytest

import opkit


@pytest.fixture(scope="session")
def bundled_ops(tmp_path_factory):
    """opkit's bundled ops, registered once per test session.

    Loaded from a folder outside any workspace: the repository itself is a workspace (its ops/ are the
    bundled ops), so opkit.load() there would ask for `opkit build` in the checkout. Outside it, the
    bundled ops come from the per-user cache build that every user gets on first load.
    """
    from opkit.loader import build_failures
    from opkit.workspace import bundled_entries

    with contextlib.chdir(tmp_path_factory.mktemp("outside-workspace")):
        loaded = opkit.load()
    # A user gets a warning and the other ops; the kit's own tests get an error: a bundled op that does
    # not build must never turn its tests into skips.
    missing = sorted(e.snake for e in bundled_entries() if e.spec is not None and e.snake not in loaded)
    if missing:
        why = "\n".join(f"--- {op}:\n{build_failures().get(op, 'not loaded (no build failure recorded)')[:3000]}"
                        for op in missing)
        pytest.fail(f"bundled ops not loaded: {', '.join(missing)}\n{why}", pytrace=False)
    return loaded


@pytest.fixture(autouse=True)
def perturbed_16bit_kernels():
    """OPKIT_TEST_PERTURB16=1: every float16/bfloat16 matmul and convolution in the test's own process comes out
    one ulp off at random (tests/arith.py), as on a CPU whose 16-bit kernels round differently. The tests that
    compare with results recorded on another machine must pass under it; see docs/ci.md."""
    import os
    if os.environ.get("OPKIT_TEST_PERTURB16", "") in ("", "0"):
        yield
        return
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent))
    from arith import PerturbLowPrecision
    with PerturbLowPrecision(seed=int(os.environ["OPKIT_TEST_PERTURB16"])):
        yield
