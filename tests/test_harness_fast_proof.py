"""The harness proves, on every case of an emulator op, that a fast launch (rules skipped, docs/emulator.md
"Checked once, then fast") gives the checked launch's bytes: the op runs with OPKIT_EMU_CHECKS=always, then
with OPKIT_EMU_CHECKS=fast, and any differing byte fails the case."""
import os

import pytest
import torch

from harness_standins import layer_norm_fp32_compute, write_op
from opkit.harness.cases import build_matrix
from opkit.harness.execute import OpHandle, fast_differs, run_case
from opkit.harness.golden import load_reference
from opkit.opspec import load_spec


@pytest.fixture(scope="module")
def ln(tmp_path_factory):
    d = write_op(tmp_path_factory.mktemp("ws"))
    spec = load_spec(d)
    return spec, load_reference(d / "reference.py"), build_matrix(spec, "quick")[0]


def test_fast_differs_compares_bytes_not_values():
    a = torch.tensor([1.0, float("nan"), 0.0])
    assert fast_differs((a,), (a.clone(),)) == ""
    b = a.clone()
    b.view(torch.int32)[1] += 1                        # another NaN: equal as values, not as bytes
    assert "1 of 3 elements differ (first at flat index 1" in fast_differs((a,), (b,))
    c = a.clone()
    c[2] = -0.0
    assert "first at flat index 2" in fast_differs((a,), (c,))
    assert "output 0: torch.float16" in fast_differs((a,), (a.half(),))
    assert "2 output(s), checked launch 1" in fast_differs((a,), (a, a))


def test_a_fast_launch_that_differs_fails_the_case(ln):
    spec, ref, case = ln
    seen = []

    def op(*args, **kw):                               # an op whose fast launch gives other bytes
        mode = os.environ.get("OPKIT_EMU_CHECKS")
        seen.append(mode)
        y = layer_norm_fp32_compute(*args, **kw)
        return y if mode == "always" else y + y.abs().max() * 1e-3 + 1e-3

    rec = run_case(spec, case, OpHandle(op, fast_proof=True), ref)
    assert seen == ["always", "fast"]
    assert rec["verdict"] == "fail" and "the fast launch (rules skipped" in rec["reason"]
    good = run_case(spec, case, OpHandle(layer_norm_fp32_compute, fast_proof=True), ref)
    assert good["verdict"] == "pass" and good["fast_differs"] == ""
    assert "fast_differs" not in run_case(spec, case, OpHandle(layer_norm_fp32_compute), ref)
