"""NaN/inf semantics in the harness: `special` cases catch a kernel that drops the NaN or inf of any input
(not only the lead one), and the expected non-finite values are those of PyTorch's FP32 op."""
import pytest
import torch
import torch.nn.functional as F

from harness_standins import layer_norm_fp32_compute, write_op
from opkit.harness import golden as G
from opkit.harness.cases import build_matrix
from opkit.harness.execute import OpHandle, run_case
from opkit.harness.golden import load_reference
from opkit.opspec import load_spec


@pytest.fixture(scope="module")
def ln(tmp_path_factory):
    d = write_op(tmp_path_factory.mktemp("ws"))
    return load_spec(d), load_reference(d / "reference.py")


def special_cases(spec):
    return [c for c in build_matrix(spec, "quick") if c.distribution == "special"]


def _run(spec, ref, fn):
    return {c.id: run_case(spec, c, OpHandle(fn), ref) for c in special_cases(spec)}


def test_every_dtype_has_special_cases_and_a_correct_op_passes_them(ln):
    spec, ref = ln
    recs = _run(spec, ref, layer_norm_fp32_compute)
    assert {r["dtype"] for r in recs.values()} == {"float16", "bfloat16", "float32"}
    bad = {i: r["reason"] for i, r in recs.items() if r["verdict"] != "pass"}
    assert not bad, bad


@pytest.mark.parametrize("drop", ["x", "weight", "bias"])
def test_dropping_the_nan_or_inf_of_any_input_fails(ln, drop):
    spec, ref = ln

    def kernel(x, weight, bias, eps=1e-5):
        args = {"x": x, "weight": weight, "bias": bias}
        args[drop] = args[drop].nan_to_num(nan=0.0, posinf=1.0, neginf=-1.0)    # this input's specials lost
        return layer_norm_fp32_compute(args["x"], args["weight"], args["bias"], eps)

    recs = _run(spec, ref, kernel)
    carrying = {i: r for i, r in recs.items() if (r["planted"] or "x") == drop}
    others = {i: r for i, r in recs.items() if i not in carrying}
    assert len(carrying) == 9 and all(r["verdict"] == "pass" for r in others.values())
    # every case whose input carries the specials catches it; a one-element one too, but for the bias
    # (its NaN or inf meets x's normalised value 0 there: y = 0 * w + b is b)
    failed = [r for r in carrying.values() if r["verdict"] != "pass"]
    assert len(failed) >= 6 and all("NaN/Inf mismatch" in r["reason"] for r in failed), failed[0]["reason"]


def test_fp32_cases_take_nan_and_inf_from_pytorchs_fp32_op(tmp_path):
    """A reference whose FP32 run overflows to inf where fp64 stays finite: the fp32 golden says inf."""
    ref_src = "def reference(x):\n    return (x * 1e30) * 1e30 / 1e30\n"
    d = write_op(tmp_path, reference=ref_src)
    ref = load_reference(d / "reference.py")
    x = torch.tensor([1.0, 2.0, float("nan")])
    gold = G.golden(ref, [x], {})[0]
    assert torch.isfinite(gold[:2]).all()                                # fp64: 1e30 * 1e30 fits
    sem = G.fp32_nonfinite(ref, [x], {}, (gold,))[0]
    assert torch.isinf(sem[:2]).all() and torch.isnan(sem[2])            # float32: it does not


def test_gelu_golden_is_inf_at_inf_whatever_path_pytorch_takes():
    """PyTorch's float32 CPU GELU gives NaN at +inf through oneDNN (pytorch/pytorch#185770) and +inf on
    its scalar path; the bundled reference pins +inf, so the golden does not depend on the machine."""
    from opkit.workspace import bundled_ops_dir
    ref = load_reference(bundled_ops_dir() / "gelu_fp32" / "reference.py")
    x = torch.tensor([float("inf"), float("-inf"), float("nan"), 1.0] * 8)
    for approximate in ("none", "tanh"):
        y = ref.reference(x, approximate=approximate)
        assert (y[0::4] == float("inf")).all() and torch.isnan(y[2::4]).all()
        assert torch.equal(y[1::4].isnan(), F.gelu(x, approximate=approximate)[1::4].isnan())  # -inf as PyTorch


@pytest.mark.parametrize("out, gold, passes", [
    (65504.0, 65520.5, True),          # exact value rounds to inf in fp16; a correct FP32 result just below
    (float("inf"), 65519.0, True),     # ... or just above the rounding point: either is right at the edge
    (65504.0, 70000.0, False),         # well beyond the edge: must be inf
    (60000.0, 65521.0, False),         # not the largest finite value
    (float("-inf"), 65519.0, False),   # wrong sign
    (65440.0, 65567.0, False),         # finite, but further from the golden than its bound T*|gold|
])
def test_overflow_edge_may_round_either_way(out, gold, passes):
    from opkit.harness.metrics import compare
    from opkit.opspec.standard import thresholds
    o = torch.tensor([out, 1.0], dtype=torch.float16)
    g = torch.tensor([gold, 1.0], dtype=torch.float64)
    r = compare(o, g, thresholds("float16"))
    assert r["passed"] == passes, r["reason"]


def test_overflow_edge_of_a_cancelled_element_uses_its_error_scale():
    """A softmax-backward fp16 element (--full): golden -65567.5 rounds to -inf, the kernel's -65440 is 127.5
    off, within its cancellation bound (error scale 1e10): either result is right there."""
    from opkit.harness.metrics import compare
    from opkit.opspec.standard import thresholds
    o = torch.tensor([-65440.0, 1.0], dtype=torch.float16)
    g = torch.tensor([-65567.5078125, 1.0], dtype=torch.float64)
    assert not compare(o, g, thresholds("float16"))["passed"]
    assert compare(o, g, thresholds("float16"), torch.tensor([1.014e10, 1.0], dtype=torch.float64))["passed"]
