"""The engine's reused cast buffers (accuracy/simulate.py, Simulator._cast_input): every output and every layer's
record bit for bit as with a fresh tensor per cast, under the policies opkit eval runs."""
import sys
from pathlib import Path

import pytest
import torch

from opkit.accuracy import simulate as S
from opkit.evaluate import SimVariant

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import _models  # noqa: E402


def bits(t: torch.Tensor) -> torch.Tensor:
    t = t.detach().float().contiguous()
    return t.view(torch.int32)


@pytest.mark.parametrize("policy", ["torch-npu-autocast", "cann-force-fp16"])
def test_reused_buffers_change_no_bit(policy, monkeypatch):
    torch.manual_seed(0)
    model = _models.MODELS["convnext_t"]().eval()
    x = torch.randn(2, 3, 64, 64)
    runs = []
    for reuse in (False, True, True):           # the second reuse run takes buffers the first one kept
        monkeypatch.setattr(S, "REUSE_CAST_BUFFERS", reuse)
        sim = SimVariant(policy, policy=policy).simulator()
        out, recs = sim.run(model, (x,))
        out2, _ = sim.run(model, (x,), record=False)
        runs.append((out, out2, recs, len(sim._bufs)))
    (o0, o0b, r0, n0), (o1, o1b, r1, n1), (o2, o2b, r2, _) = runs
    assert n0 == 0 and n1 > 0                   # the buffers were used
    for o in (o0b, o1, o1b, o2, o2b):
        assert torch.equal(bits(o0), bits(o))
    assert [r.name for r in r0] == [r.name for r in r1]
    for a, b in zip(r0, r1):
        assert a.tensor.shape == b.tensor.shape and torch.equal(bits(a.tensor), bits(b.tensor)), a.name
