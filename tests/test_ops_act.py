"""Bundled softmax / elementwise / reduce ops (issue 6) against PyTorch in fp64, after ``opkit.load()``.

The shapes and dims here are ones the harness never draws (it always reduces the last dim and draws
from op.yaml's tests section): other dims, keepdim, odd 4-D shapes, rows long enough for the multi-pass
path, ties and nan for reduce_max, and the backward ops through autograd. Verdicts use the harness's
own accuracy standard (opkit.opspec.standard / metrics), with the fp64 PyTorch result as the golden.
Also ``torch.library.opcheck`` on every op.
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
MY_OPS = ["softmax_fp32", "softmax_fp32_backward", "log_softmax_fp32", "gelu_fp32", "gelu_fp32_backward",
          "silu_fp32", "silu_fp32_backward", "reduce_sum_fp32", "reduce_mean_fp32", "reduce_max_fp32"]


@pytest.fixture(scope="module", autouse=True)
def _loaded(bundled_ops):
    return bundled_ops


def _name(dt: torch.dtype) -> str:
    return str(dt).replace("torch.", "")


def _check(out: torch.Tensor, gold: torch.Tensor, scale: torch.Tensor | None = None, standard="mere_mare"):
    """The harness verdict for one output (metrics.compare, the rule `opkit test` applies); fails with the
    metrics on screen."""
    res = compare(out, gold, thresholds(_name(out.dtype), standard), scale)
    assert res["passed"], (res["reason"], res)


def _scale(op: str, inputs, attrs, gold):
    """Error scale from the op's reference.py (error_scale(), else the harness's fp64 estimate)."""
    mod = golden_mod.load_reference(bundled_ops_dir() / op / "reference.py")
    return golden_mod.error_scale(mod, inputs, attrs, (gold,))[0]


def _randn(shape, dt, seed=0, scale=1.0, offset=0.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale + offset).to(dt)


# -- softmax / log_softmax --------------------------------------------------------------------------

ROW_CASES = [((2, 3, 129, 7), 1), ((5, 1031), 0), ((3, 7, 2500), -1), ((4, 6, 5), -2)]


@pytest.mark.parametrize("dt", DTYPES, ids=_name)
@pytest.mark.parametrize("shape,dim", ROW_CASES, ids=lambda v: str(v))
@pytest.mark.parametrize("op,ref", [("softmax_fp32", F.softmax), ("log_softmax_fp32", F.log_softmax)])
def test_softmax_family_any_dim(op, ref, shape, dim, dt):
    x = _randn(shape, dt, seed=len(shape) + dim, scale=3.0)
    out = getattr(OPS, op)(x, dim)
    assert out.dtype == dt and out.shape == x.shape
    _check(out, ref(x.double(), dim=dim))


@pytest.mark.parametrize("op,ref", [("softmax_fp32", F.softmax), ("log_softmax_fp32", F.log_softmax)])
def test_softmax_family_multi_pass_rows(op, ref):
    # 33000 fp32 columns do not fit UB with double buffering: the column-tiled three-sweep path.
    x = _randn((2, 33000), torch.float32, seed=3, scale=4.0, offset=100.0)
    _check(getattr(OPS, op)(x, -1), ref(x.double(), dim=-1))


def test_log_softmax_dominated_rows_keep_precision():
    # log-sum-exp barely above 0: 1 + 8e-7 in FP32 would keep 3 digits; log1p of the rest keeps them all.
    x = torch.tensor([[0.0, -14.0], [3.0, -20.0], [5.0, 5.0 - 15.5]], dtype=torch.float32)
    _check(OPS.log_softmax_fp32(x, -1), F.log_softmax(x.double(), dim=-1))


def test_softmax_special_rows_match_torch():
    x = torch.tensor([[1.0, float("nan"), 3.0], [1.0, float("inf"), 0.0], [float("-inf")] * 3,
                      [float("-inf"), 0.0, 1.0]], dtype=torch.float32)
    for op, ref in (("softmax_fp32", F.softmax), ("log_softmax_fp32", F.log_softmax)):
        _check(getattr(OPS, op)(x, -1), ref(x.double(), dim=-1))


# -- elementwise -----------------------------------------------------------------------------------

EW_SHAPES = [(2, 3, 129, 7), (1031,), (1,), (64, 4097)]


@pytest.mark.parametrize("dt", DTYPES, ids=_name)
@pytest.mark.parametrize("shape", EW_SHAPES, ids=str)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate, shape, dt):
    x = _randn(shape, dt, seed=1, scale=4.0)
    out = OPS.gelu_fp32(x, approximate)
    assert out.dtype == dt and out.shape == x.shape
    _check(out, F.gelu(x.double(), approximate=approximate))


@pytest.mark.parametrize("dt", DTYPES, ids=_name)
@pytest.mark.parametrize("shape", EW_SHAPES, ids=str)
def test_silu(shape, dt):
    x = _randn(shape, dt, seed=2, scale=6.0)
    out = OPS.silu_fp32(x)
    assert out.dtype == dt and out.shape == x.shape
    _check(out, F.silu(x.double()))


def test_elementwise_tails_and_specials():
    # The erf tail (where 1 + erf(x/sqrt 2) cancels) and +-inf / nan / +-0 / huge values.
    x = torch.cat([torch.linspace(-12, 12, 24001, dtype=torch.float64),
                   torch.tensor([float("inf"), float("-inf"), float("nan"), 0.0, -0.0, 1e30, -1e30, 1e-40])])
    x32 = x.float()
    for approximate in ("none", "tanh"):
        _check(OPS.gelu_fp32(x32, approximate), F.gelu(x32.double(), approximate=approximate))
    _check(OPS.silu_fp32(x32), F.silu(x32.double()))


def test_gelu_rejects_unknown_approximate():
    with pytest.raises(RuntimeError, match="approximate"):
        OPS.gelu_fp32(torch.randn(8), "fast")


# -- reductions ------------------------------------------------------------------------------------

RED_CASES = [((2, 3, 129, 7), 1, False), ((5, 1031), 0, True), ((3, 7, 2500), -1, True), ((4, 6, 5), -3, False),
             ((2, 33000), 1, False)]


@pytest.mark.parametrize("dt", DTYPES, ids=_name)
@pytest.mark.parametrize("shape,dim,keepdim", RED_CASES, ids=lambda v: str(v))
@pytest.mark.parametrize("op,ref", [("reduce_sum_fp32", torch.sum), ("reduce_mean_fp32", torch.mean)])
def test_sum_mean(op, ref, shape, dim, keepdim, dt):
    x = _randn(shape, dt, seed=4, offset=0.5)
    out = getattr(OPS, op)(x, dim, keepdim)
    gold = ref(x.double(), dim=dim, keepdim=keepdim)
    assert out.dtype == dt and out.shape == gold.shape
    _check(out, gold, _scale(op, [x], {"dim": dim, "keepdim": keepdim}, gold))


@pytest.mark.parametrize("dt", DTYPES, ids=_name)
@pytest.mark.parametrize("shape,dim,keepdim", RED_CASES, ids=lambda v: str(v))
def test_max_values_and_indices(shape, dim, keepdim, dt):
    # Rounded values make ties common: the first index must win, as in torch.max.
    x = (_randn(shape, torch.float64, seed=5) * 4).round().to(dt)
    values, indices = OPS.reduce_max_fp32(x, dim, keepdim)
    gv, gi = torch.max(x, dim=dim, keepdim=keepdim)
    assert values.dtype == dt and indices.dtype == torch.int64
    assert torch.equal(values, gv) and torch.equal(indices, gi)


def test_max_nan_and_inf_rows():
    x = torch.tensor([[1.0, float("nan"), 3.0, float("nan")], [2.0, 5.0, 5.0, 1.0], [float("-inf")] * 4,
                      [float("inf"), 1.0, float("inf"), 0.0], [float("nan"), 9.0, 1.0, 2.0]])
    values, indices = OPS.reduce_max_fp32(x, -1, False)
    gv, gi = torch.max(x, dim=-1)
    assert torch.equal(indices, gi)
    assert torch.equal(values.isnan(), gv.isnan()) and torch.equal(values[~gv.isnan()], gv[~gv.isnan()])


def test_max_nan_in_a_later_tile_of_a_long_row():
    x = torch.randn(2, 33000)
    x[0, 20000] = float("nan")
    x[1, 5] = x[1, 32000] = 50.0
    values, indices = OPS.reduce_max_fp32(x, -1, False)
    assert indices.tolist() == [20000, 5] and values[0].isnan() and values[1].item() == 50.0


# -- backward ops through autograd -----------------------------------------------------------------

def _grad(fn, x, dy, dt):
    xr = x.to(dt).detach().requires_grad_(True)
    y = fn(xr)
    y.backward(dy.to(dt))
    return xr.grad


@pytest.mark.parametrize("dt", [torch.float32, torch.float16], ids=_name)
@pytest.mark.parametrize("case", ["gelu-none", "gelu-tanh", "silu", "softmax-dim1"])
def test_backward_through_autograd(case, dt):
    x = _randn((3, 65, 17), torch.float64, seed=6, scale=3.0)
    dy = _randn((3, 65, 17), torch.float64, seed=7)
    if case.startswith("gelu"):
        ap = case.split("-")[1]
        ours = lambda t: OPS.gelu_fp32(t, ap)
        ref = lambda t: F.gelu(t, approximate=ap)
    elif case == "silu":
        ours, ref = OPS.silu_fp32, F.silu
    else:
        ours = lambda t: OPS.softmax_fp32(t, 1)
        ref = lambda t: F.softmax(t, dim=1)
    got = _grad(ours, x, dy, dt)
    assert got.dtype == dt
    xin, dyin = x.to(dt).double().requires_grad_(True), dy.to(dt).double()
    if case.startswith("softmax"):
        # Softmax's backward reads the saved *output*: the golden uses the same (rounded) output the op
        # saved, so an fp16 forward's rounding is not charged to the backward kernel.
        y = OPS.softmax_fp32(x.to(dt), 1).double()
        gold = torch._softmax_backward_data(dyin, y, 1, torch.float64)
        scale = _scale("softmax_fp32_backward", [y, dyin], {"dim": 1}, gold)
    else:
        (gold,) = torch.autograd.grad(ref(xin), xin, dyin)
        # GELU' and SiLU' have roots where their terms cancel: the op's reference.py gives the scale.
        attrs = {"approximate": case.split("-")[1]} if case.startswith("gelu") else {}
        scale = _scale(case.split("-")[0] + "_fp32_backward", [xin.detach(), dyin], attrs, gold)
    _check(got, gold, scale)


# -- torch.library.opcheck -------------------------------------------------------------------------

OPCHECK = [
    ("softmax_fp32", lambda: (torch.randn(3, 5, 7), 1)),
    ("log_softmax_fp32", lambda: (torch.randn(4, 9), -1)),
    ("gelu_fp32", lambda: (torch.randn(3, 17), "tanh")),
    ("silu_fp32", lambda: (torch.randn(2, 3, 5),)),
    ("reduce_sum_fp32", lambda: (torch.randn(3, 5, 7), 1, True)),
    ("reduce_mean_fp32", lambda: (torch.randn(6, 11), 0, False)),
    ("reduce_max_fp32", lambda: (torch.randn(4, 5, 6), -1, False)),
    ("softmax_fp32_backward", lambda: (torch.rand(3, 8), torch.randn(3, 8), -1)),
    ("gelu_fp32_backward", lambda: (torch.randn(20), torch.randn(20), "none")),
    ("silu_fp32_backward", lambda: (torch.randn(4, 5), torch.randn(4, 5))),
]


@pytest.mark.parametrize("op,make", OPCHECK, ids=[o for o, _ in OPCHECK])
def test_opcheck(op, make):
    args = make()
    if op in ("softmax_fp32", "gelu_fp32", "silu_fp32"):   # differentiable: check autograd too
        args = (args[0].requires_grad_(True),) + args[1:]
    torch.library.opcheck(getattr(OPS, op).default, args)
