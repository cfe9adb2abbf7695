"""`opkit test --target npu` plumbing, on a machine without torch_npu: the run refuses with the reason,
and the harness's device path (inputs to the device, outputs back for the CPU golden, no naive column, no
emulator counters) works when the device is stood in by the CPU."""
from __future__ import annotations

import pytest
import torch

from opkit.errors import OpkitError
from opkit.harness import binding, runner


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
