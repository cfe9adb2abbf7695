"""`opkit test --target npu` plumbing, on a machine without torch_npu: the run refuses with the reason,
and with the CPU standing in for the device (OPKIT_NPU_DEVICE_STANDIN=cpu) the whole matrix runs through
the npu target: its build state, inputs moved to the device, the golden on the CPU, the naive column from
the emulator."""
from __future__ import annotations

import json
import shutil

import pytest
import torch

from opkit.errors import OpkitError
from opkit.harness import binding, runner
from test_build import built_ws  # noqa: F401 (session fixture: ScaleMul and RowSum built for the emulator)

SCALE_REFERENCE = """\
import torch
def reference(x, w, alpha=2.0, mode="plain"):
    y = x.float() * w.float() * alpha
    return (-y if mode == "neg" else y).to(x.dtype)
"""


def test_npu_target_without_torch_npu_is_a_clear_error(tmp_path):
    with pytest.raises(OpkitError, match="torch_npu is not installed"):
        runner.run(target="npu", workspace=tmp_path)


def test_device_wrapper_moves_inputs_and_brings_outputs_back():
    seen = []

    def op(x, w, eps=1e-5):
        seen.append((x.device, w.device, eps))
        return x * w, x + w

    call = binding._on_device(op, torch.device("meta"))
    with pytest.raises(NotImplementedError):       # meta tensors cannot come back to the CPU ...
        call(torch.ones(2), torch.ones(2), eps=0.5)
    assert seen == [(torch.device("meta"), torch.device("meta"), 0.5)]   # ... but they did go there
    cpu = binding._on_device(op, torch.device("cpu"))
    a, b = cpu(torch.full((2,), 3.0), torch.full((2,), 2.0))
    assert a.device.type == "cpu" and a.tolist() == [6.0, 6.0] and b.tolist() == [5.0, 5.0]


@pytest.mark.slow
def test_npu_target_runs_the_matrix_with_the_cpu_standing_in(built_ws, tmp_path, monkeypatch):  # noqa: F811
    ws = tmp_path / "ws"
    shutil.copytree(built_ws, ws)
    (ws / "ops" / "scale_mul" / "reference.py").write_text(SCALE_REFERENCE)
    monkeypatch.setenv("OPKIT_NPU_DEVICE_STANDIN", "cpu")
    with pytest.raises(OpkitError, match=r"not built for target npu .*opkit build scale_mul --target npu"):
        runner.run(["scale_mul"], target="npu", workspace=ws, quick=True)
    # The npu build state: its library and the manifest of the ops it holds. A placeholder here: with the
    # CPU standing in, nothing loads the device library (the CPU library computes).
    npu = ws / "build" / "opkit" / "npu"
    npu.mkdir(parents=True)
    (npu / "libopkit_npu.so").write_bytes(b"")
    (npu / "npu_ops.txt").write_text("row_sum\n")
    with pytest.raises(OpkitError, match="not built for target npu"):       # the manifest lacks scale_mul
        runner.run(["scale_mul"], target="npu", workspace=ws, quick=True)
    (npu / "npu_ops.txt").write_text("row_sum\nscale_mul\n")
    code = runner.run(["scale_mul"], target="npu", workspace=ws, quick=True, jobs=1,
                      report_json=tmp_path / "report.json")
    data = json.loads((tmp_path / "report.json").read_text())
    assert code == 0 and data["summary"]["cases"] > 0 and data["summary"]["failed"] == 0, data["summary"]
    half = [c for c in data["cases"] if c["dtype"] in ("float16", "fp16")]
    assert half and all(c.get("naive_metrics") for c in half)     # the naive column: the emulator's
