"""Issue 32: one naive-kernel decision for every command. Under cann-force-fp16 GELU and SiLU compute in fp16; eval
(SimVariant), quant (a QuantVariant's float ops, the per-layer rows), diagnose and experiment all run them on opkit's
naive kernels and give bitwise the same output for the same model, policy and input."""
from __future__ import annotations

import contextlib

import pytest
import torch
import torch.nn as nn

import opkit
from opkit.accuracy.diagnose import NAIVE_OPS, diagnose
from opkit.accuracy.policy import load_policy
from opkit.accuracy.simulate import Simulator
from opkit.evaluate import SimVariant, evaluate
from opkit.quant.config import default_config
from opkit.quant.variant import QuantVariant

POLICY = "cann-force-fp16"


@pytest.fixture(scope="module")
def naive_ops(tmp_path_factory):
    with contextlib.chdir(tmp_path_factory.mktemp("outside-workspace")):
        return opkit.load(ops=list(NAIVE_OPS))


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.Linear(32, 32), nn.SiLU(), nn.Linear(32, 5)).eval()


def test_every_command_runs_gelu_and_silu_on_the_same_kernel(naive_ops):
    m, x = _model(), torch.randn(16, 12) * 3
    outs, kernels = {}, {}

    outs["eval"] = SimVariant("fp16", policy=POLICY).prepare(m)(x)
    qsim = QuantVariant(default_config(m), {}, name="fp16").simulator(POLICY)     # quant's float variant and rows
    outs["quant"], recs = qsim.run(m, (x,))
    kernels["quant"] = {r.name: r.kernel for r in recs}
    rep = diagnose(m, x, policy=POLICY, rescue=False, patch=False)
    kernels["diagnose"] = {r.name: r.kernel for r in rep.layers}
    outs["experiment"], recs = Simulator(load_policy(POLICY), {}).run(m, (x,))    # experiment/run.py _min_cosine
    kernels["experiment"] = {r.name: r.kernel for r in recs}

    for cmd, k in kernels.items():
        assert k["1"] == "opkit_naive.gelu_fp32" and k["3"] == "opkit_naive.silu_fp32", (cmd, k)
    for cmd, out in outs.items():
        assert torch.equal(out, outs["eval"]), cmd

    y = torch.arange(16) % 5
    from opkit.data import TensorSet
    res = evaluate(m, TensorSet(x, y), [SimVariant("fp16", policy=POLICY)], workers=1, batch_size=16)
    assert res.predictions["fp16"][:, 0].tolist() == outs["quant"].float().topk(5, 1).indices[:, 0].tolist()
