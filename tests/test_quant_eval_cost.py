"""Issue 37, round 9: an evaluation's cost cut without changing a result -- the all-float32 policy's ops called
without execute's lookups (simulate.F32_POLICY_FAST), against execute's path. tests/test_quant_search_speed.py and
the benchmarks compare whole reports with every switch off and on, tests/test_eval_engine_shortcuts.py outputs,
records and counters."""
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from opkit.accuracy import simulate as S
from opkit.evaluate import SimVariant

sys.path.insert(0, str(Path(__file__).parent))
from quantdata import encoder as E  # noqa: E402


@pytest.fixture
def executed(monkeypatch):
    calls = []
    real = S.Simulator.execute

    def spy(self, op_type, *a, **kw):
        calls.append(op_type)
        return real(self, op_type, *a, **kw)
    monkeypatch.setattr(S.Simulator, "execute", spy)
    return calls


def _counters(sim):
    return dict(sim.kernels), dict(sim.seen), dict(sim.lowered), dict(sim.fn_calls)


def test_float32_ops_skip_execute_under_an_all_float32_policy(executed, monkeypatch):
    model, x = E.encoder().float().eval(), E.patches(8, 1).float()
    got = {}
    for on in (False, True):
        monkeypatch.setattr(S, "F32_POLICY_FAST", on)
        executed.clear()
        sim = SimVariant("fq", policy="amct-fake-quant").simulator()
        out = sim.run(model, (x,), record=False)[0]
        got[on] = (out, _counters(sim), len(executed))
    assert got[False][2] > 0 and got[True][2] == 0           # every op took the short path
    assert torch.equal(got[False][0], got[True][0]) and got[False][1] == got[True][1]


class _Half(nn.Module):
    """Float16 tensors made inside the forward: the policy's float32 casts must still apply."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        z = y.half()
        w = torch.softmax(y, -1, dtype=torch.float16)        # float32 in, float16 out
        return z + z * 3.0 + w


@pytest.mark.parametrize("policy", ["amct-fake-quant", "cann-force-fp16"])
def test_other_dtypes_and_policies_keep_executes_path(policy, executed, monkeypatch):
    model, x = _Half().eval(), torch.randn(4, 8) * 300
    got = {}
    for on in (False, True):
        monkeypatch.setattr(S, "F32_POLICY_FAST", on)
        executed.clear()
        sim = SimVariant("p", policy=policy).simulator()
        out, recs = sim.run(model, (x,))
        got[on] = (out, _counters(sim), [(r.name, r.kernel, r.tensor) for r in recs], list(executed))
    (o0, c0, r0, e0), (o1, c1, r1, e1) = got[False], got[True]
    assert o0.dtype == o1.dtype and torch.equal(o0.view(torch.int32 if o0.dtype == torch.float32 else torch.int16),
                                                o1.view(torch.int32 if o1.dtype == torch.float32 else torch.int16))
    assert c0 == c1 and [r[:2] for r in r0] == [r[:2] for r in r1]
    assert all(torch.equal(a[2], b[2]) for a, b in zip(r0, r1))
    if policy == "amct-fake-quant":
        # float16 operands (add, mul) still go through execute's casts; softmax (float32 in) takes the short path,
        # its float16 result cast to float32 as execute casts it (the outputs above are equal)
        assert o1.dtype == torch.float32 and {"add", "mul"} <= set(e1) and not {"linear", "softmax"} & set(e1)
    else:
        assert e1 == e0                                       # not an all-float32 policy: every op as before
