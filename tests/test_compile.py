"""A model patched with opkit ops under torch.compile: fullgraph (no graph breaks from opkit ops), dynamic
shapes without a recompile per shape, training through the compiled graph.

The model is a cut-down version of examples/convnext (stem + channels-first LayerNorm, one block with
LayerNorm + GELU, downsampling, LayerNorm, softmax attention pooling): every opkit op the example uses,
few enough layers that compiling stays quick on 2 cores.
"""
from __future__ import annotations

import copy
import importlib.util
import sys
from pathlib import Path

import pytest
import torch
import torch._dynamo
import torch.nn as nn
from torch._dynamo.utils import counters

import opkit

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "convnext" / "model.py"


def _example():
    name = "opkit_example_convnext_model"       # dynamo re-imports traced code by module name
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLE)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        ex = _example()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 4, 4), ex.LayerNorm(16, data_format="channels_first"))
        self.block = ex.Block(16, layer_scale=0.5)
        self.down = nn.Sequential(ex.LayerNorm(16, data_format="channels_first"), nn.Conv2d(16, 24, 2, 2))
        self.norm = nn.LayerNorm(24)
        self.pool = ex.AttentionPool(24, heads=2)
        self.head = nn.Linear(24, 10)

    def forward(self, x):
        x = self.down(self.block(self.stem(x)))
        return self.head(self.pool(self.norm(x.flatten(2).transpose(1, 2))))




@pytest.fixture(scope="module")
def patched(bundled_ops):
    torch.manual_seed(0)
    model = Tiny().eval()
    rep = opkit.patch(model)
    assert sorted(op for _, _, op in rep.swapped) == sorted(
        ["layer_norm_fp32"] * 4 + ["gelu_fp32", "softmax_fp32"]), rep
    return model


class CountingBackend:
    """Counts the graphs dynamo hands over, then runs them with aot_eager (AOT autograd: forward and
    backward graphs, shapes propagated through opkit's Meta kernels with symbolic sizes)."""

    def __init__(self):
        self.graphs = 0
        self.ops: list[str] = []

    def __call__(self, gm, example_inputs):
        from torch._dynamo.backends.debugging import aot_eager
        self.graphs += 1
        self.ops = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]   # latest graph
        return aot_eager(gm, example_inputs)


def test_fullgraph_inductor_two_sizes(patched):
    torch._dynamo.reset()
    compiled = torch.compile(patched, fullgraph=True)          # default backend: inductor
    for shape in ((2, 3, 64, 64), (3, 3, 96, 128)):
        x = torch.randn(shape)
        with torch.no_grad():
            got, want = compiled(x), patched(x)
        assert got.shape == (shape[0], 10)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_dynamic_training_one_graph_no_breaks(patched):
    torch._dynamo.reset()
    counters.clear()
    model = copy.deepcopy(patched).train()
    backend = CountingBackend()
    compiled = torch.compile(model, fullgraph=True, dynamic=True, backend=backend)
    # batch and spatial size change together; the first shape has distinct sizes (dynamo's duck sizing
    # would otherwise tie equal dims together) and no size 1 (dynamo specialises 0/1 by design)
    calls_after_first = None
    for shape in ((2, 3, 64, 96), (3, 3, 96, 96), (4, 3, 128, 160), (2, 3, 72, 40)):
        x = torch.randn(shape)
        model.zero_grad()
        out = compiled(x)
        out.square().sum().backward()
        got = {k: p.grad.clone() for k, p in model.named_parameters()}
        model.zero_grad()
        want = model(x)
        want.square().sum().backward()
        torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-4)
        for k, p in model.named_parameters():
            torch.testing.assert_close(got[k], p.grad, rtol=1e-3, atol=1e-3, msg=k)
        if calls_after_first is None:
            calls_after_first = backend.graphs
    # one graph for all shapes. (Dynamo may hand the first graph over twice: under dynamic=True it traces
    # float module attributes such as eps symbolically, then restarts analysis to specialise them --
    # stock nn.LayerNorm does the same. That is a restart, not a recompile: unique_graphs stays 1.)
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])
    assert backend.graphs == calls_after_first, f"recompiled: {backend.graphs} backend calls"
    assert not counters["graph_break"], dict(counters["graph_break"])
    opkit_ops = sorted(op for op in backend.ops if op.startswith("opkit."))
    assert opkit_ops == sorted(["opkit.layer_norm_fp32"] * 4 + ["opkit.gelu_fp32", "opkit.softmax_fp32"])
