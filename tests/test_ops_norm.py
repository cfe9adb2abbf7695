"""Bundled norm and fused ops (issue 6) against PyTorch in fp64, after ``opkit.load()``.

Shapes here are ones the harness never draws: 3-D and 4-D leads, a 1-element row, rows long enough for
the multi-pass path of every dtype, odd lengths; inputs far from N(0,1) (offset, large scale). Verdicts
use the harness's own accuracy standard (opkit.opspec.standard / metrics) against the fp64 PyTorch
result, with the op's reference.py error scale for outputs that cancel to ~0. Gradients go through
autograd (the backward ops are opkit kernels) and are compared with fp64 autograd of F.layer_norm /
F.rms_norm. Also ``torch.library.opcheck`` on every op.
"""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import opkit
from opkit.harness import golden as golden_mod
from opkit.harness.metrics import compare
from opkit.opspec.standard import thresholds
from opkit.workspace import bundled_ops_dir

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
OPS = torch.ops.opkit
# Leading dims x row length: 3-D/4-D leads, one element, rows not a multiple of 8/16, a 9001-long row
# (multi-pass for every dtype: longer than one UB tile) and rows that do not split evenly over 48 cores.
SHAPES = [(3, 5, 777), (2, 1, 3, 33), (1, 1), (2, 9001), (97, 24)]
DISTS = {"normal": (1.0, 0.0), "offset": (1.0, 200.0), "scale": (50.0, 0.0)}


@pytest.fixture(scope="module", autouse=True)
def _loaded(bundled_ops):
    return bundled_ops


def _name(dt: torch.dtype) -> str:
    return str(dt).replace("torch.", "")


def _randn(shape, dt, seed=0, scale=1.0, offset=0.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale + offset).to(dt)


def _params(c, dt, seed):
    return _randn((c,), dt, seed, 0.5, 1.0), _randn((c,), dt, seed + 1, 0.5, 0.0)


def _scales(op: str, inputs, attrs, golds):
    """Error scales from the op's reference.py (for elements that cancel to ~0)."""
    mod = golden_mod.load_reference(bundled_ops_dir() / op / "reference.py")
    return golden_mod.error_scale(mod, inputs, attrs, golds)


def _check(op, outs, golds, inputs, attrs):
    """The harness verdict for every output, judged against an fp64 golden; fails with the metrics."""
    scales = _scales(op, inputs, attrs, golds)
    for k, (out, gold, scale) in enumerate(zip(outs, golds, scales)):
        assert out.shape == gold.shape, (op, k, out.shape, gold.shape)
        res = compare(out, gold.to(torch.float64), thresholds(_name(out.dtype)), scale)
        assert res["passed"], (op, k, res)


def _ids(v):
    return "x".join(map(str, v)) if isinstance(v, tuple) else str(v)


# -- forward ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", DTYPES, ids=_name)
@pytest.mark.parametrize("dist", list(DISTS))
@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_layer_norm(shape, dist, dt):
    x = _randn(shape, dt, 1, *DISTS[dist])
    w, b = _params(shape[-1], dt, 2)
    y = OPS.layer_norm_fp32(x, w, b, eps=1e-5)
    assert y.dtype == dt and y.shape == x.shape
    gold = F.layer_norm(x.double(), (shape[-1],), w.double(), b.double(), 1e-5)
    _check("layer_norm_fp32", (y,), (gold,), (x.double(), w.double(), b.double()), {"eps": 1e-5})


@pytest.mark.parametrize("dt", DTYPES, ids=_name)
@pytest.mark.parametrize("dist", list(DISTS))
@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_rms_norm(shape, dist, dt):
    x = _randn(shape, dt, 3, *DISTS[dist])
    w, _ = _params(shape[-1], dt, 4)
    y = OPS.rms_norm_fp32(x, w, eps=1e-6)
    assert y.dtype == dt and y.shape == x.shape
    gold = F.rms_norm(x.double(), (shape[-1],), w.double(), 1e-6)
    _check("rms_norm_fp32", (y,), (gold,), (x.double(), w.double()), {"eps": 1e-6})


@pytest.mark.parametrize("dt", DTYPES, ids=_name)
@pytest.mark.parametrize("dist", list(DISTS))
@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_add_layer_norm(shape, dist, dt):
    x = _randn(shape, dt, 5, *DISTS[dist])
    r = _randn(shape, dt, 6, *DISTS[dist])
    w, b = _params(shape[-1], dt, 7)
    s, y = OPS.add_layer_norm_fp32(x, r, w, b, eps=1e-5)
    assert s.dtype == y.dtype == dt and s.shape == y.shape == x.shape
    s64 = x.double() + r.double()
    gold = F.layer_norm(s64, (shape[-1],), w.double(), b.double(), 1e-5)
    _check("add_layer_norm_fp32", (s, y), (s64, gold), (x.double(), r.double(), w.double(), b.double()),
           {"eps": 1e-5})


@pytest.mark.parametrize("dt", DTYPES, ids=_name)
@pytest.mark.parametrize("dist", list(DISTS))
@pytest.mark.parametrize("shape", SHAPES, ids=_ids)
def test_add_rms_norm(shape, dist, dt):
    x = _randn(shape, dt, 8, *DISTS[dist])
    r = _randn(shape, dt, 9, *DISTS[dist])
    w, _ = _params(shape[-1], dt, 10)
    s, y = OPS.add_rms_norm_fp32(x, r, w, eps=1e-6)
    assert s.dtype == y.dtype == dt and s.shape == y.shape == x.shape
    s64 = x.double() + r.double()
    gold = F.rms_norm(s64, (shape[-1],), w.double(), 1e-6)
    _check("add_rms_norm_fp32", (s, y), (s64, gold), (x.double(), r.double(), w.double()), {"eps": 1e-6})


def test_layer_norm_eps_is_used():
    # Rows with variance 1e-4, comparable to eps: the outputs for eps=1e-5 and eps=0.1 differ ~30x,
    # and each must match PyTorch.
    x = _randn((4, 40), torch.float32, 30, 0.01, 3.0)
    w, b = torch.ones(40), torch.zeros(40)
    ys = []
    for eps in (1e-5, 1e-1):
        y = OPS.layer_norm_fp32(x, w, b, eps=eps)
        gold = F.layer_norm(x.double(), (40,), w.double(), b.double(), eps)
        torch.testing.assert_close(y.double(), gold, rtol=1e-4, atol=1e-5)
        ys.append(y)
    assert (ys[0].abs().mean() / ys[1].abs().mean()) > 10


def test_layer_norm_fp16_huge_values():
    # |x| up to 60000 in fp16: sums and squares overflow fp16 but not the FP32 statistics.
    x = (torch.rand(16, 1000, generator=torch.Generator().manual_seed(0)) * 120000 - 60000).half()
    w, b = torch.ones(1000, dtype=torch.half), torch.zeros(1000, dtype=torch.half)
    y = OPS.layer_norm_fp32(x, w, b)
    assert torch.isfinite(y).all()
    gold = F.layer_norm(x.double(), (1000,), w.double(), b.double(), 1e-5)
    assert F.cosine_similarity(y.double().flatten(), gold.flatten(), dim=0) > 0.9999


# -- backward (autograd through the *_backward opkit kernels) ---------------------------------------

GRAD_SHAPES = [(3, 5, 777), (2, 1, 3, 33), (2, 9001), (97, 24)]


def _grads(fn, inputs, dy):
    leaves = [t.detach().requires_grad_(True) for t in inputs]
    out = fn(*leaves)
    return torch.autograd.grad(out, leaves, dy)


@pytest.mark.parametrize("dt", DTYPES, ids=_name)
@pytest.mark.parametrize("shape", GRAD_SHAPES, ids=_ids)
def test_layer_norm_backward(shape, dt):
    c = shape[-1]
    x = _randn(shape, dt, 11, 2.0, 3.0)
    w, b = _params(c, dt, 12)
    dy = _randn(shape, dt, 13)
    got = _grads(lambda x_, w_, b_: OPS.layer_norm_fp32(x_, w_, b_, eps=1e-5), (x, w, b), dy)
    assert [g.dtype for g in got] == [dt] * 3
    gold = _grads(lambda x_, w_, b_: F.layer_norm(x_, (c,), w_, b_, 1e-5), (x.double(), w.double(), b.double()),
                  dy.double())
    _check("layer_norm_fp32_backward", got, gold, (dy.double(), x.double(), w.double()), {"eps": 1e-5})


@pytest.mark.parametrize("dt", DTYPES, ids=_name)
@pytest.mark.parametrize("shape", GRAD_SHAPES, ids=_ids)
def test_rms_norm_backward(shape, dt):
    c = shape[-1]
    x = _randn(shape, dt, 14, 2.0, 1.0)
    w, _ = _params(c, dt, 15)
    dy = _randn(shape, dt, 16)
    got = _grads(lambda x_, w_: OPS.rms_norm_fp32(x_, w_, eps=1e-6), (x, w), dy)
    assert [g.dtype for g in got] == [dt] * 2
    gold = _grads(lambda x_, w_: F.rms_norm(x_, (c,), w_, 1e-6), (x.double(), w.double()), dy.double())
    _check("rms_norm_fp32_backward", got, gold, (dy.double(), x.double(), w.double()), {"eps": 1e-6})


# -- registration -------------------------------------------------------------------------------------

def _opcheck_args(op, dt, grad):
    x = _randn((3, 5, 40), dt, 20)
    r = _randn((3, 5, 40), dt, 21)
    w, b = _params(40, dt, 22)
    dy = _randn((3, 5, 40), dt, 23)
    if grad:
        x, w, b = (t.requires_grad_(True) for t in (x, w, b))
    return {
        "layer_norm_fp32": ((x, w, b), {"eps": 1e-5}),
        "rms_norm_fp32": ((x, w), {"eps": 1e-6}),
        "add_layer_norm_fp32": ((x.detach(), r, w.detach(), b.detach()), {"eps": 1e-5}),
        "add_rms_norm_fp32": ((x.detach(), r, w.detach()), {"eps": 1e-6}),
        "layer_norm_fp32_backward": ((dy, x.detach(), w.detach()), {"eps": 1e-5}),
        "rms_norm_fp32_backward": ((dy, x.detach(), w.detach()), {"eps": 1e-6}),
    }[op]


@pytest.mark.parametrize("dt", DTYPES, ids=_name)
@pytest.mark.parametrize("op", ["layer_norm_fp32", "rms_norm_fp32", "add_layer_norm_fp32", "add_rms_norm_fp32",
                                "layer_norm_fp32_backward", "rms_norm_fp32_backward"])
def test_opcheck(op, dt):
    grad = op in ("layer_norm_fp32", "rms_norm_fp32")   # also checks the autograd registration
    args, kwargs = _opcheck_args(op, dt, grad)
    torch.library.opcheck(getattr(OPS, op).default, args, kwargs)
