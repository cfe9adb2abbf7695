"""Autograd of opkit ops (opkit.autograd, registered by opkit.load()).

For every bundled op with a ``backward:`` section, the gradients autograd produces through
torch.ops.opkit.<op> in fp32 match the reference's autograd in fp64 within the op's fp32 standard, on
shapes whose last dim is not a multiple of 16. The error scale for elements that cancel comes from the
backward op's reference.py (its error_scale(), else the harness's perturbation estimate).
"""
from __future__ import annotations

import copy
import zlib

import pytest
import torch
import torch.nn as nn

import opkit
from opkit import registration
from opkit.errors import OpkitError
from opkit.harness import golden
from opkit.harness.metrics import compare
from opkit.opspec.standard import thresholds
from opkit.opspec import OpSpec
from opkit.workspace import bundled_entries

SHAPES = [(7, 77), (2, 3, 1000), (1, 33)]          # last dims not multiples of 16


def _specs() -> dict[str, OpSpec]:
    return {e.snake: e.spec for e in bundled_entries() if e.spec is not None}


SPECS = _specs()
WITH_BACKWARD = sorted(s for s, spec in SPECS.items() if spec.backward is not None)
# attr variants worth differentiating separately
ATTR_CASES = {"gelu_fp32": [{"approximate": "none"}, {"approximate": "tanh"}], "softmax_fp32": [{"dim": -1},
                                                                                               {"dim": 0}]}


@pytest.fixture(scope="module", autouse=True)
def _loaded(bundled_ops):
    return bundled_ops


def _inputs(spec: OpSpec, shape, seed: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    c = shape[-1]
    out = []
    for inp in spec.inputs:
        if inp.values == "weight":
            out.append(1 + 0.3 * torch.randn(c, generator=g))
        elif inp.values == "bias":
            out.append(0.3 * torch.randn(c, generator=g))
        else:
            # data: offset rows, as activations have. Clamped at -5: below about -6.8 gelu_tanh's gradient is
            # exactly 0 in fp64 (tanh saturates to -1) while fp32 keeps a ~1e-33 tail, which the
            # cancellation rule (scale ~0) counts as an error -- a rounding artefact, not a wrong gradient.
            out.append((torch.randn(shape, generator=g) * 3 + 2).clamp(min=-5))
    return out


def _backward_args(spec: OpSpec, xs, attrs, gold_out, dy):
    """The backward op's (tensor inputs, attrs) for the fp64 golden, following op.yaml backward.args."""
    bspec = SPECS[spec.backward.op]
    names = [i.name for i in spec.inputs]
    vals = []
    for a in spec.backward.args:
        kind, _, name = a.partition(".")
        if kind == "grad":
            vals.append(dy)
        elif kind == "out":
            vals.append(gold_out)
        elif kind == "attr":
            vals.append(attrs[name])
        else:
            vals.append(xs[names.index(a)])
    n = len(bspec.inputs)
    return vals[:n], dict(zip([at.name for at in bspec.attrs], vals[n:]))


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("op", WITH_BACKWARD)
def test_gradients_match_fp64_reference(op, shape):
    spec = SPECS[op]
    assert registration.autograd_kind(f"opkit::{op}") == "kernel"
    ref = golden.load_reference(spec.reference_file)
    bref = golden.load_reference(SPECS[spec.backward.op].reference_file)
    for attrs in ATTR_CASES.get(op, [{}]):
        xs = _inputs(spec, shape, seed=zlib.crc32(f"{op}{shape}".encode()))
        dy = torch.randn(shape, generator=torch.Generator().manual_seed(7))
        # opkit, fp32
        leaves = [x.clone().requires_grad_() for x in xs]
        out = getattr(torch.ops.opkit, op)(*leaves, **attrs)
        out.backward(dy)
        # reference autograd, fp64
        leaves64 = [x.double().requires_grad_() for x in xs]
        gold_out = ref.reference(*leaves64, **attrs)
        gold = torch.autograd.grad(gold_out, leaves64, dy.double(), allow_unused=True)
        # error scales of the backward op's outputs (cancellation in dx / reductions in dweight)
        full = {a.name: a.default for a in spec.attrs} | attrs
        b_in, b_attrs = _backward_args(spec, [x.double() for x in xs], full, gold_out.detach(), dy.double())
        b_gold = golden.golden(bref, b_in, b_attrs)
        b_scale = golden.error_scale(bref, b_in, b_attrs, b_gold)
        b_outs = [o.name for o in SPECS[spec.backward.op].outputs]
        names = [i.name for i in spec.inputs]
        for inp, bout in spec.backward.grads.items():
            k = names.index(inp)
            got = leaves[k].grad
            assert got is not None and got.dtype == torch.float32, f"{op}: no fp32 grad for {inp}"
            res = compare(got, gold[k], thresholds("float32"), b_scale[b_outs.index(bout)])
            assert res["passed"], f"{op}{attrs} d{inp} {list(shape)}: {res['reason']}"
        for k, x in enumerate(leaves):              # inputs without a gradient get none
            if names[k] not in spec.backward.grads:
                assert x.grad is None


@pytest.mark.parametrize("op", WITH_BACKWARD)
def test_opcheck_autograd_registration(op):
    spec = SPECS[op]
    xs = _inputs(spec, (3, 21), seed=1)
    xs[0].requires_grad_()
    torch.library.opcheck(getattr(torch.ops.opkit, op).default, tuple(xs),
                          test_utils=("test_schema", "test_autograd_registration", "test_faketensor",
                                      "test_aot_dispatch_dynamic"))


def test_registration_kinds():
    assert len(SPECS) >= 16
    for snake, spec in SPECS.items():
        assert hasattr(torch.ops.opkit, snake), f"bundled op {snake} is not loaded"
        kind = registration.autograd_kind(f"opkit::{snake}")
        if spec.backward is not None:
            assert kind == "kernel", snake
        elif snake.endswith("_backward"):
            assert kind == "none", snake
        else:
            assert kind == "reference", snake


def test_backward_op_is_not_differentiable_with_clear_error():
    dy = torch.randn(4, 19)
    x = torch.randn(4, 19, requires_grad=True)
    w = torch.ones(19)
    dx, _, _ = torch.ops.opkit.layer_norm_fp32_backward(dy, x, w)
    with pytest.raises(OpkitError, match="layer_norm_fp32_backward is not differentiable"):
        dx.sum().backward()


def test_reference_fallback_gradient():
    """log_softmax_fp32 has no backward kernel: its gradient is autograd of the FP32 reference."""
    op = "log_softmax_fp32"
    assert registration.autograd_kind(f"opkit::{op}") == "reference"
    x = torch.randn(5, 45) * 4
    dy = torch.randn(5, 45)
    leaf = x.clone().requires_grad_()
    torch.ops.opkit.log_softmax_fp32(leaf, -1).backward(dy)
    x64 = x.double().requires_grad_()
    torch.log_softmax(x64, -1).backward(dy.double())
    res = compare(leaf.grad, x64.grad, thresholds("float32"))
    assert res["passed"], res["reason"]


def test_fp16_input_fp32_weight_grad_dtypes():
    """Gradients take each leaf's dtype (the binding casts weight to the lead dtype; autograd casts back)."""
    x = (torch.randn(6, 50) * 100 + 500).half().requires_grad_()
    w = torch.ones(50, requires_grad=True)
    b = torch.zeros(50, requires_grad=True)
    y = torch.ops.opkit.layer_norm_fp32(x, w, b, 1e-5)
    assert y.dtype == torch.float16
    y.float().square().sum().backward()
    assert x.grad.dtype == torch.float16 and w.grad.dtype == torch.float32 and b.grad.dtype == torch.float32
    assert torch.isfinite(x.grad).all() and torch.isfinite(w.grad).all()


def test_patched_model_gradients_match_unpatched_fp32():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(24, 40), nn.LayerNorm(40), nn.GELU(), nn.Linear(40, 40), nn.SiLU(),
                          nn.RMSNorm(40), nn.GELU("tanh"), nn.Linear(40, 33), nn.Softmax(-1))
    x = torch.randn(9, 24) * 3
    target = torch.rand(9, 33)

    def grads(m, dtype):
        m = copy.deepcopy(m).to(dtype)
        loss = ((m(x.to(dtype)) - target.to(dtype)) ** 2).sum()
        loss.backward()
        return {k: p.grad for k, p in m.named_parameters()}

    gold = grads(model, torch.float64)
    plain = grads(model, torch.float32)
    patched_model = copy.deepcopy(model)
    rep = opkit.patch(patched_model)
    assert len(rep.swapped) == 6
    patched = grads(patched_model, torch.float32)
    assert list(patched) == list(gold)
    for k in gold:
        # whole-model gradients accumulate error over layers: hold the patched model to the
        # unpatched fp32 model's own distance from fp64 (x4), and to a cosine of 1 - 1e-6
        err_p = (patched[k].double() - gold[k]).abs().max().item()
        err_u = (plain[k].double() - gold[k]).abs().max().item()
        cos = torch.nn.functional.cosine_similarity(patched[k].double().flatten(), gold[k].flatten(), 0)
        assert err_p <= 4 * err_u + 1e-7, f"{k}: patched err {err_p:.3g} vs unpatched {err_u:.3g}"
        assert cos > 1 - 1e-6, k
