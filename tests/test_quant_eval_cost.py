"""Issue 37, round 9: an evaluation's cost cut without changing a result -- an equal deployment's score reused
(scoring.REUSE_EQUAL) and the all-float32 policy's ops called without execute's lookups
(simulate.F32_POLICY_FAST). Each against the path it skips; tests/test_quant_search_speed.py and the benchmarks
compare whole reports with every switch off and on, tests/test_eval_engine_shortcuts.py outputs, records and
counters."""
import copy
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from opkit.accuracy import simulate as S
from opkit.accuracy.policy import load_policy
from opkit.evaluate import SimVariant
from opkit.quant import scoring
from opkit.quant.builder import Deploy, VariantBuilder
from opkit.quant.config import default_config
from opkit.quant.inputs import labelled as as_labelled

sys.path.insert(0, str(Path(__file__).parent))
from quantdata import encoder as E  # noqa: E402
from quantdata.models import inputs, labelled, with_dead_channel  # noqa: E402


@pytest.fixture
def ran(monkeypatch):
    """The names of the variants evaluate() was asked to run."""
    got = []
    real = scoring.evaluate

    def spy(model, data, variants, **kw):
        got.extend(v.name for v in variants)
        return real(model, data, variants, **kw)
    monkeypatch.setattr(scoring, "evaluate", spy)
    return got


def _scorer(model: nn.Module):
    x, y = labelled(model, 64, seed=1)
    b = VariantBuilder(model, inputs(16, seed=2), Deploy(load_policy("amct-fake-quant")), lambda s: None)
    return b, scoring.Scorer(model, as_labelled((x, y)), x[:16], scoring.Run(prefix_mb=0), lambda s: None)


def _renamed(v, name: str):
    w = copy.copy(v)
    w.name = name
    return w


def test_an_equal_deployment_gets_the_earlier_score(ran, monkeypatch):
    b, sc = _scorer(with_dead_channel())
    cfg = default_config(b.model)
    first = sc.score([b.variant(cfg, "int8")])["int8"]
    # built again from the same config (its own mode objects, every field equal) and a renamed copy: not run
    again = sc.score([b.variant(cfg, "int8-again"), _renamed(b.variant(cfg, "x"), "int8-copy")])
    assert "int8-again" not in ran and "int8-copy" not in ran
    assert sc.equal == 2 and sc.evals == 3 and "2 evaluations equal to one already run" in sc.prefix_status()
    monkeypatch.setattr(scoring, "REUSE_EQUAL", False)
    rerun = sc.score([b.variant(cfg, "int8-rerun")])["int8-rerun"]
    assert "int8-rerun" in ran
    for s in (again["int8-again"], again["int8-copy"], rerun):
        assert (s.top1, s.top5, s.predictions) == (first.top1, first.top5, first.predictions)


def test_a_changed_deployment_or_model_runs(ran):
    b, sc = _scorer(with_dead_channel())
    cfg = default_config(b.model)
    v = b.variant(cfg, "int8")
    sc.score([v])
    floated = cfg.copy()
    first = next(iter(floated.layers))
    floated.layers[first].quant_enable = False
    sc.score([b.variant(floated, "one-float")])              # a layer in float: another deployment
    assert "one-float" in ran
    with torch.no_grad():
        next(b.model.parameters()).mul_(1.0)                  # the same values, but written: the model changed
    sc.score([_renamed(v, "after-write")])
    assert "after-write" in ran and sc.equal == 0


class _Draws(nn.Module):
    """A net that draws a random number in its forward (a rerun would see another draw)."""

    def __init__(self):
        super().__init__()
        self.net = with_dead_channel()

    def forward(self, x):
        torch.rand(1)
        return self.net(x)


def test_a_model_drawing_random_numbers_is_rerun(ran):
    b, sc = _scorer(_Draws().eval())
    v = b.variant(default_config(b.model), "int8")
    sc.score([v])
    sc.score([_renamed(v, "int8-again")])
    assert "int8-again" in ran and sc.equal == 0


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
