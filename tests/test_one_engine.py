"""The same model, policy and data give the same predictions in every model-level command: eval, quant (its
fp16 row), experiment (its deployed variant) and diagnose (its top-1 agreement with FP32) all build the engine
in one place (SimVariant.simulator -> accuracy.diagnose.simulator_for). The naive-kernel decision shifts outputs
by fp16 ulps here, rarely a prediction, so the engine's outputs are compared bit for bit too."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch

import opkit
from opkit.accuracy.diagnose import NAIVE_OPS, diagnose
from opkit.accuracy.policy import load_policy
from opkit.data import TensorSet
from opkit.evaluate import SimVariant, evaluate
from opkit.experiment import experiment

SPEC = "evaldata.models:gelu_net"
POLICY = "fp16-compute"        # every op computes in fp16: GELU and LayerNorm run on the naive kernels


@pytest.fixture(scope="module")
def naive_ops(tmp_path_factory):
    """opkit's naive kernels (what the engine runs fp16-internal GELU/LayerNorm on), built on first use."""
    with contextlib.chdir(tmp_path_factory.mktemp("outside-workspace")):
        return opkit.load(ops=list(NAIVE_OPS))


def _data(n=48):
    from evaldata.models import gelu_net
    g = torch.Generator().manual_seed(3)
    x = torch.randn(n, 3, 8, 8, generator=g) * 3
    with torch.no_grad():
        y = gelu_net()(x).argmax(1)
    y[::5] = (y[::5] + 1) % 4          # some wrong labels: top-1 is not trivially 100 %
    return x, y


def test_eval_quant_experiment_diagnose_predict_alike(naive_ops):
    from evaldata.models import gelu_net
    x, y = _data()
    ds = TensorSet(x, y)
    ev = evaluate(SPEC, ds, [SimVariant("policy", policy=POLICY)], batch_size=16, workers=1)
    pred = ev.top1_predictions("policy")

    # the decision matters for this model: PyTorch's fp16 kernels give other outputs than opkit's naive ones
    m = gelu_net()
    on = SimVariant("a", policy=POLICY).simulator().run(m, (x[:16],), record=False)[0]
    off = SimVariant("b", policy=POLICY, naive=False).simulator().run(m, (x[:16],), record=False)[0]
    assert not torch.equal(on, off)

    rep = opkit.quantize(gelu_net(), x[:16], (x, y), policy=POLICY, search=False, batch_size=16)
    assert rep.predictions["fp16"] == pred
    # and quant's deployments run on the very engine eval builds (bit for bit, not just the same argmax)
    q = rep.variants["fp16"].simulator().run(m, (x[:16],), record=False)[0]
    assert torch.equal(q, on)
    assert rep.predictions["fp32"] == ev.top1_predictions("fp32")

    r = experiment(SPEC, ds, "1x3x8x8", policy=POLICY, batch_size=16, workers=1)
    assert r.predictions["deployed"] == pred and r.predictions["fp32"] == ev.top1_predictions("fp32")

    d = diagnose(gelu_net(), x[:16], policy=load_policy(POLICY), data=[x[i:i + 16] for i in range(0, len(x), 16)],
                 rescue=False, patch=False)
    agree = float(np.mean(np.array(pred) == np.array(ev.top1_predictions("fp32"))))
    assert d.result["top1"] == pytest.approx(agree, abs=1e-12)


def test_quant_scoring_runs_on_worker_processes_with_the_same_predictions():
    """quantize(workers=N, model_spec=MODEL): the labelled evaluations run on N processes that reload the model
    from its spec (the `workers` argument takes effect), and predict as in process."""
    from evaldata.models import gelu_net

    from opkit.evaluate import FP32
    from opkit.quant.scoring import Run, Scorer
    x, y = _data()
    ds = TensorSet(x, y)
    v = SimVariant("fp16", policy="cann-force-fp16")
    scores = {}
    for workers in (1, 2):
        sc = Scorer(gelu_net(), ds, x[:8], Run(batch_size=16, workers=workers, model_spec=SPEC), lambda s: None)
        got = sc.score([FP32, v])
        scores[workers] = {n: s.predictions for n, s in got.items()}
        assert sc.backends == ({"in-process"} if workers == 1 else {"local (2 processes)"})
    assert scores[1] == scores[2]
