"""Precision policy files (opkit/accuracy/policy.py, policies/*.yaml) and the CPU simulation of them."""
import importlib
import json

import pytest
import torch
import torch.nn as nn

from opkit.accuracy.layers import compare_runs, metrics, msprobe_verdict
from opkit.accuracy.policy import builtin_names, load_policy
from opkit.accuracy.simulate import Simulator, hf32, module_op_type, op_name
from opkit.errors import OpkitError

BUILTIN = ["amct-fake-quant", "cann-allow-fp32-to-fp16", "cann-allow-mix-precision", "cann-force-fp16",
           "fp16-compute", "torch-npu-autocast"]


def test_builtin_policies_load_and_say_what_is_uncertain():
    assert builtin_names() == BUILTIN
    for name in BUILTIN:
        p = load_policy(name)
        assert p.name == name and p.summary and p.sources
        if p.fake_quant:        # AMCT's fake-quant model: FP32 around the INT8 layers
            assert (p.entry("linear").io, p.entry("layer_norm").io) == ("float32", "float32")
            continue
        assert p.entry("linear").io in ("float16", "keep") and p.entry("linear").compute == "float32"


def test_policy_quant_field_is_checked(tmp_path):
    assert load_policy("amct-fake-quant").fake_quant and not load_policy("cann-force-fp16").fake_quant
    bad = tmp_path / "p.yaml"
    bad.write_text("policy: x\ndefault: {io: float32, compute: float32}\nquant: fake\n")
    with pytest.raises(OpkitError, match="quant must be one of device, amct-fake-quant"):
        load_policy(bad)
    with pytest.raises(OpkitError, match="use amct-fake-quant"):      # what AMCT users first try
        load_policy("fp32")


def test_autocast_lists_keep_norm_softmax_sum_in_fp32():
    p = load_policy("torch-npu-autocast")
    for t in ("layer_norm", "softmax", "sum", "log_softmax", "group_norm"):
        assert (p.entry(t).io, p.entry(t).compute) == ("float32", "float32"), t
    for t in ("linear", "conv2d", "matmul", "bmm"):
        assert p.entry(t).io == "float16", t
    assert p.entry("gelu").io == "keep"          # unlisted: follows its input
    assert p.entry("addcmul").io == "keep"       # promote


def test_force_fp16_keeps_fp32_internals_of_layernorm_softmax_reducesum():
    p = load_policy("cann-force-fp16")
    for t in ("layer_norm", "softmax", "sum"):
        assert (p.entry(t).io, p.entry(t).compute) == ("float16", "float32")
    assert (p.entry("gelu").io, p.entry("gelu").compute) == ("float16", "io")
    f = load_policy("fp16-compute")
    assert (f.entry("layer_norm").io, f.entry("layer_norm").compute) == ("float16", "io")
    assert f.entry("conv2d").compute == "float32"    # the cube accumulates in FP32 whatever the policy


def test_mix_precision_lists_and_modify_mixlist(tmp_path):
    p = load_policy("cann-allow-mix-precision")
    assert p.entry("linear").io == "float16" and p.entry("layer_norm").io == "float16"
    assert p.entry("gelu").io == "keep"              # gray
    ml = tmp_path / "mixlist.json"
    ml.write_text(json.dumps({"black-list": {"to-add": ["LayerNormV4", "LayerNorm"]},
                              "white-list": {"to-remove": ["Add"]}}))
    q = load_policy("cann-allow-mix-precision", mixlist=ml)
    assert q.entry("layer_norm").io == "float32" and q.entry("layer_norm").source == "mix:black"
    assert q.entry("add").io == "keep"
    assert p.entry("layer_norm").io == "float16"     # the original policy is untouched
    ml.write_text(json.dumps({"grey-list": {}}))
    with pytest.raises(OpkitError, match="white-list / black-list"):
        load_policy("cann-allow-mix-precision", mixlist=ml)
    with pytest.raises(OpkitError, match="no mixed-precision lists"):
        load_policy("fp16-compute", mixlist=ml)


def test_user_policy_file_errors_name_the_field(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("policy: mine\ndefault: {io: float16, compute: io}\nops:\n  - {types: [linear], io: fp8, compute: io}\n")
    with pytest.raises(OpkitError, match=r"mine.yaml: ops\[0\]: io must be one of"):
        load_policy(f)
    f.write_text("policy: mine\ndefault: {io: float32, compute: float32}\nops:\n  - {types: [layer_norm], io: float16, compute: io}\n")
    p = load_policy(f)
    assert p.entry("layer_norm").io == "float16" and p.entry("linear").io == "float32"
    with pytest.raises(OpkitError, match="unknown policy 'nope'"):
        load_policy("nope")


def test_op_names_and_module_types():
    assert op_name(torch.Tensor.__add__) == "add" and op_name(torch.Tensor.__rtruediv__) == "div"
    assert op_name(torch.nn.functional.layer_norm) == "layer_norm"
    assert module_op_type(nn.Linear(2, 2)) == "linear" and module_op_type(nn.Sequential()) is None

    class CF(nn.Module):          # ConvNeXt's channels-first LayerNorm: one layer_norm op
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(3))
            self.data_format = "channels_first"
    assert module_op_type(CF()) == "layer_norm"


def test_hf32_keeps_ten_mantissa_bits():
    x = torch.tensor([1.0 + 2 ** -10, 1.0 + 2 ** -11, 1.0 + 2 ** -11 + 2 ** -12, 3.0e38])
    y = hf32(x)
    assert y[0] == 1.0 + 2 ** -10                       # representable
    assert y[1] == 1.0                                  # tie -> even
    assert y[2] == 1.0 + 2 ** -10                       # above the tie -> up
    assert torch.isfinite(y[3])


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        return self.norm(self.fc(x) + 1000.0).sum(-1, keepdim=True) + x


def test_simulation_follows_the_policy_per_layer():
    torch.manual_seed(0)
    m, x = Tiny().eval(), torch.randn(4, 8)
    _, ref = Simulator(None).run(m, (x,))
    sim = Simulator(load_policy("torch-npu-autocast"), naive=False)
    out, recs = sim.run(m, (x,))
    by = {r.name: r for r in recs}
    assert (by["fc"].io_dtype, by["fc"].compute_dtype) == ("float16", "float32")
    assert (by["norm"].io_dtype, by["norm"].compute_dtype) == ("float32", "float32")
    assert out.dtype == torch.float32                   # sum is fp32_set_opt_dtype; + x promotes
    assert sim.lowered["linear"] == 1 and sim.seen["add"] == 2 and sim.lowered["sum"] == 0
    # fp16-compute: the LayerNorm computes in fp16 (PyTorch CPU here: naive=False) and its output is fp16
    sim = Simulator(load_policy("fp16-compute"), naive=False)
    out, recs = sim.run(m, (x,))
    by = {r.name: r for r in recs}
    assert (by["norm"].io_dtype, by["norm"].compute_dtype) == ("float16", "float16")
    assert out.dtype == torch.float16
    rows = compare_runs(ref, recs, 0.999)
    assert [r.name for r in rows] == ["fc", "norm", ""]
    assert rows[0].cosine > 0.9999                      # fp16 rounding of a linear layer
    # the model itself is unchanged afterwards
    assert "forward" not in m.fc.__dict__ and m.fc.weight.dtype == torch.float32


def test_naive_kernels_are_looked_up_only_when_used_and_a_failure_once(monkeypatch):
    """Inside a workspace whose ops are not built (the opkit checkout), every lookup of a naive kernel re-read
    every op.yaml and failed again: seconds per simulator run. The lookup happens only for a module the policy
    runs in fp16, never with naive=False, and a failed load is asked once per process (the note stays)."""
    from opkit import loader, patching
    diagnose = importlib.import_module("opkit.accuracy.diagnose")
    from opkit.errors import OpkitError
    calls = []

    def fail(*a, ops=None, **k):
        calls.append(tuple(ops or ()))
        raise OpkitError("op gelu_fp32 in workspace /w is not built for target cpu: run `opkit build`")
    monkeypatch.setattr(loader, "load", fail)
    monkeypatch.setattr(loader, "loaded", dict)      # as in a fresh process: earlier tests may have loaded them
    monkeypatch.setattr(patching, "_unavailable", {}, raising=False)
    monkeypatch.setattr(diagnose, "_naive_unavailable", [])   # an earlier test may have failed a load
    monkeypatch.setattr(patching.Ops, "has", lambda self, op: False)
    m, x = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.LayerNorm(8)).eval(), torch.randn(2, 8)
    Simulator(load_policy("fp16-compute"), naive=False).run(m, (x,))
    Simulator(load_policy("torch-npu-autocast")).run(m, (x,))     # GELU keeps fp32 input, LayerNorm is fp32
    assert calls == []
    for _ in range(3):
        _, recs = Simulator(load_policy("fp16-compute")).run(m, (x,))
        assert {r.name: r.kernel for r in recs}["1"] == "cpu"       # fell back to PyTorch's fp16 kernel
    assert calls == [("gelu_fp32",), ("layer_norm_fp32",)]
    notes = []
    assert not diagnose.naive_available(notes) and not diagnose.naive_available(notes)
    assert len(calls) == 3 and len(notes) == 1 and "naive kernels are unavailable" in notes[0]


def test_per_layer_metrics_and_msprobe_verdict():
    a = torch.linspace(-1, 1, 100)
    m = metrics(a, a)
    assert m["cosine"] == 1.0 and m["max_abs"] == 0 and msprobe_verdict(m) == "Yes"
    b = a.clone()
    b[3] = float("inf")
    m = metrics(b, a)
    assert m["mismatch"] and m["nonfinite"] == 0.01 and msprobe_verdict(m) == "No"
    m = metrics(a + 2.0, a)                             # max abs err > 1: msprobe says No
    assert msprobe_verdict(m) == "No"
    m = metrics(-a, a)
    assert m["cosine"] == pytest.approx(-1.0) and msprobe_verdict(m) == "No"


def test_fallback_column_from_an_opkit_scan_report(tmp_path):
    """`modules` of an `opkit scan` JSON: a layer is marked when an op in it (or below it) falls back."""
    import opkit
    scan = {"modules": {"": [{"op": "aten::lgamma.out", "status": "fallback", "calls": 1}],
                        "fc": [{"op": "aten::addmm", "status": "supported", "calls": 1}],
                        "norm": [{"op": "aten::native_layer_norm", "status": "fallback", "calls": 1}]}}
    torch.manual_seed(0)
    rep = opkit.diagnose(Tiny().eval(), torch.randn(4, 8), policy="cann-allow-fp32-to-fp16", patch=False, scan=scan)
    by = {r.name: r.fallback for r in rep.layers}
    assert by["fc"] == "" and by["norm"] == "cpu: aten::native_layer_norm"
    assert by[""] == "cpu: aten::lgamma.out, aten::native_layer_norm"
    assert "fallback" in str(rep).splitlines()[1]
    bad = tmp_path / "scan.json"
    bad.write_text(json.dumps({"ops": []}))
    rep = opkit.diagnose(Tiny().eval(), torch.randn(4, 8), policy="cann-allow-fp32-to-fp16", patch=False, scan=bad)
    assert any("not an `opkit scan` JSON report" in n for n in rep.notes)


def test_a_patch_that_swapped_nothing_says_why(monkeypatch):
    """In a workspace with unbuilt ops opkit.patch keeps every module; the note said "found nothing to swap in
    this model" for a model full of LayerNorms and GELUs."""
    from opkit import loader, patching
    from opkit.errors import OpkitError
    from opkit.evaluate import SimVariant
    diagnose = importlib.import_module("opkit.accuracy.diagnose")

    def fail(*a, ops=None, **k):
        raise OpkitError(f"op {ops[0]} in workspace /w is not built for target cpu: run `opkit build`")
    monkeypatch.setattr(loader, "load", fail)
    monkeypatch.setattr(loader, "loaded", dict)      # as in a fresh process: earlier tests may have loaded them
    monkeypatch.setattr(patching, "_unavailable", {}, raising=False)
    monkeypatch.setattr(patching.Ops, "has", lambda self, op: False)
    v = SimVariant("p", patch=True)
    v.prepare(nn.Sequential(nn.Linear(4, 4), nn.GELU(), nn.LayerNorm(4)))
    assert len(v.notes) == 1 and "swapped nothing: 2 candidate module(s) kept" in v.notes[0], v.notes
    assert "gelu_fp32 in workspace /w is not built" in v.notes[0]
    assert diagnose.nothing_swapped(patching.patch(nn.Sequential(nn.Linear(4, 4)))) == \
        "opkit.patch found nothing to swap in this model"


@pytest.mark.parametrize("policy", ["cann-force-fp16", "torch-npu-autocast", "cann-allow-mix-precision"])
def test_batchnorm_parameters_stay_fp32_on_the_device(policy):
    """CANN's BatchNorm/BNInfer take mean/variance/scale/offset in FP32 only and compute in FP32 on an fp16 x;
    autocast leaves the module's FP32 buffers alone. Rounding a running_var of 4e6 to fp16 made it inf and the
    feature 0 (a tabular model's raw-scale features: cosine 0.89 under force_fp16, a 1-point 'fp16 loss')."""
    bn = nn.BatchNorm1d(4).eval()
    bn.running_mean.copy_(torch.tensor([0.0, 1.0, 1000.0, 3000.0]))
    bn.running_var.copy_(torch.tensor([1.0, 4.0, 1.0e6, 4.0e6]))
    m = nn.Sequential(nn.Linear(4, 4), bn).eval()
    with torch.no_grad():
        m[0].weight.copy_(torch.eye(4))
        m[0].bias.zero_()
    x = torch.tensor([[0.5, 2.0, 1500.0, 1000.0], [-0.5, 0.0, 200.0, 5000.0]])
    _, ref = Simulator(None).run(m, (x,))
    _, recs = Simulator(load_policy(policy), naive=False).run(m, (x,))
    by = {r.name: r for r in recs}
    assert by["1"].compute_dtype == "float32"
    assert torch.allclose(by["1"].tensor, ref[1].tensor, rtol=2e-3, atol=2e-3), (by["1"].tensor, ref[1].tensor)
    assert bn.running_var.dtype == torch.float32 and bn.running_var[3] == 4.0e6      # the module is untouched
