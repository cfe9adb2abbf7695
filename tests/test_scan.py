"""opkit scan: tracing what torch_npu would see, classifying against the torch-npu 2.13.0 wheel's op list,
and the report (docs/scan.md). The op list comes from the published wheel, fetched once into the cache."""
from __future__ import annotations

import json

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from opkit.scanner import ScanReport, oplist, scan
from opkit.scanner.classify import FALLBACK, SUPPORTED


@pytest.fixture(scope="module")
def npu_ops():
    return oplist.for_version("2.13.0")


class FallbackModel(nn.Module):
    """Convolution and LayerNorm (NPU kernels) next to lgamma, logcumsumexp and hypot (none in 2.13.0)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        y = self.norm(self.conv(x).permute(0, 2, 3, 1))
        return torch.hypot(torch.lgamma(y.abs() + 1), torch.logcumsumexp(y, dim=-1))


def _ops(report, status):
    return {r.op for r in report.records if r.status == status}


def test_wheel_op_list_has_the_documented_entries(npu_ops):
    assert npu_ops.version == "2.13.0" and npu_ops.source.endswith(".whl")
    assert len(npu_ops.aten) > 1000
    for listed in ("native_layer_norm", "convolution", "gelu.out", "scaled_dot_product_attention", "add.Tensor"):
        assert listed in npu_ops.aten, listed
    for unlisted in ("gelu", "lgamma", "lgamma.out", "hypot.out", "_logcumsumexp", "layer_norm"):
        assert unlisted not in npu_ops.aten, unlisted


def test_fallbacks_are_exactly_the_three_with_shapes_per_input(npu_ops):
    report = scan(FallbackModel(), [torch.randn(1, 3, 16, 16), torch.randn(2, 3, 12, 20)], torch_npu=npu_ops)
    assert _ops(report, FALLBACK) == {"aten::lgamma.out", "aten::_logcumsumexp", "aten::hypot.out"}
    assert {r.entry for r in report.fallbacks} == {"aten::lgamma", "aten::logcumsumexp", "aten::hypot"}
    assert {"aten::convolution", "aten::native_layer_norm"} <= _ops(report, SUPPORTED)
    assert report.inputs == ["1x3x16x16", "2x3x12x20"]
    lg = next(r for r in report.fallbacks if r.op == "aten::lgamma.out")
    assert lg.shapes == {"1x3x16x16": [[[1, 16, 16, 8]]], "2x3x12x20": [[[2, 12, 20, 8]]]}
    hy = next(r for r in report.fallbacks if r.op == "aten::hypot.out")
    assert hy.shapes["2x3x12x20"] == [[[2, 12, 20, 8], [2, 12, 20, 8]]]
    assert hy.calls == 2 and hy.dtypes == ["float32"] and hy.covered_by is None


def test_attention_reaches_the_npu_whole_not_as_the_cpu_pieces(npu_ops):
    """Trap 1: on the CPU sdpa decomposes to _scaled_dot_product_flash_attention_for_cpu (no NPU kernel);
    torch_npu registers scaled_dot_product_attention itself, so nothing falls back."""
    q = torch.randn(2, 4, 16, 8)

    def attn(q):
        return F.scaled_dot_product_attention(q, q, q)
    report = scan(attn, [q], torch_npu=npu_ops)
    assert report.fallbacks == []
    assert "aten::scaled_dot_product_attention" in _ops(report, SUPPORTED)
    # what a naive CPU trace sees instead: the CPU-only op, which would be a false fallback
    from torch.utils._python_dispatch import TorchDispatchMode

    class Seen(TorchDispatchMode):
        names: list = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Seen.names.append(str(func))
            return func(*args, **(kwargs or {}))
    with Seen():
        attn(q)
    assert any("_for_cpu" in n for n in Seen.names)
    assert not any("_for_cpu" in r.op for r in report.records)


def test_functional_gelu_is_unlisted_yet_does_not_fall_back(npu_ops):
    """Trap 2: functional gelu is not in the yaml; its default kernel runs the listed gelu.out."""
    assert "gelu" not in npu_ops.aten
    report = scan(lambda x: F.gelu(x) * 2, [torch.randn(4, 32)], torch_npu=npu_ops)
    assert report.fallbacks == []
    g = next(r for r in report.records if r.op == "aten::gelu.out")
    assert g.status == SUPPORTED and g.via == ["aten::gelu"]


def test_an_op_without_any_kernel_is_a_fallback_and_its_module_is_named(npu_ops):
    class Inner(nn.Module):
        def forward(self, x):
            return torch.mode(x, dim=-1).values
    model = nn.Sequential(nn.Linear(8, 8), Inner())
    report = scan(model, [torch.randn(3, 8)], torch_npu=npu_ops)
    assert _ops(report, FALLBACK) == {"aten::mode"}
    assert report.fallbacks[0].modules == ["1"]
    assert {"op": "aten::mode", "status": FALLBACK, "calls": 1} in report.by_module()["1"]


def test_amp_o1_marks_fp16_norms_and_the_logits_matmul(npu_ops):
    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm, self.fc = nn.LayerNorm(16), nn.Linear(16, 100)

        def forward(self, x):
            return self.fc(self.norm(x))
    x = torch.randn(4, 16)
    fp32 = scan(Head(), [x], torch_npu=npu_ops, amp="npu-o1")
    ln = next(r for r in fp32.records if r.op == "aten::native_layer_norm")
    assert ln.amp["dtypes"] == ["float32"] and not ln.precision_sensitive    # on torch_npu's fp32 list
    logits = [r for r in fp32.records if r.amp and r.amp["logits"]]
    assert [r.op for r in logits] == ["aten::addmm"] and logits[0].amp["dtypes"] == ["float16"]
    half = scan(Head().half(), [x.half()], torch_npu=npu_ops, amp="npu-o1")
    ln = next(r for r in half.records if r.op == "aten::native_layer_norm")
    assert ln.amp["dtypes"] == ["float32"]                                      # autocast still lifts it
    plain = scan(Head().half(), [x.half()], torch_npu=npu_ops, amp=None)
    assert all(r.amp is None for r in plain.records)
    assert half.precision_sensitive and all(r.amp["fp16"] for r in half.precision_sensitive)


def test_unlisted_reduction_in_fp16_is_precision_sensitive_and_covered(npu_ops):
    # mean is not on torch_npu's autocast lists: it runs in the dtype it gets (fp16 here)
    report = scan(lambda x: (x * 2).mean(-1) + x.softmax(-1).mean(-1), [torch.randn(4, 16).half()],
                  torch_npu=npu_ops, amp="npu-o1")
    mean = next(r for r in report.records if r.op == "aten::mean.dim" and "float16" in r.amp["dtypes"])
    assert mean.precision_sensitive and mean.covered_by == "reduce_mean_fp32"
    sm = next(r for r in report.records if r.op == "aten::softmax.int")
    assert sm.amp["dtypes"] == ["float32"] and not sm.precision_sensitive     # softmax.int: fp32 list


def test_backward_is_traced(npu_ops):
    model = nn.Sequential(nn.Linear(8, 8), nn.LayerNorm(8))
    report = scan(model, [torch.randn(2, 8)], torch_npu=npu_ops, backward=True)
    bw = {r.op for r in report.records if "backward" in r.phases}
    assert "aten::native_layer_norm_backward" in bw and report.fallbacks == []


def test_op_list_file_offline(tmp_path):
    f = tmp_path / "ops.txt"
    f.write_text("# my list\naten::convolution\nadd.Tensor\n")
    ops = oplist.from_file(f)
    report = scan(lambda x: x + 1, [torch.randn(3)], torch_npu=ops)
    assert report.fallbacks == [] and report.op_list == str(f)
    y = tmp_path / "npu_native_functions.yaml"
    y.write_text("backend: NPU\nsupported:\n  - func: abs\n  - add.Tensor\n  - empty.memory_format\n")
    ops = oplist.from_file(y)
    assert ops.aten == {"abs", "add.Tensor", "empty.memory_format"}
    report = scan(lambda x: torch.lgamma(x), [torch.randn(3)], torch_npu=ops)
    assert [r.op for r in report.fallbacks] == ["aten::lgamma.out"]
    bad = tmp_path / "x.yaml"
    bad.write_text("a: 1\n")
    with pytest.raises(Exception, match="not an npu_native_functions yaml"):
        oplist.from_file(bad)


def test_report_json_and_html(npu_ops, tmp_path):
    report = scan(FallbackModel(), [torch.randn(1, 3, 8, 8)], torch_npu=npu_ops)
    d = json.loads(report.write_json(tmp_path / "scan.json").read_text())
    assert d["summary"]["fallback"] == 3 and d["ops"][0]["status"] == FALLBACK and "device shows" in d["note"]
    assert set(d["modules"]) >= {"", "conv", "norm"}
    back = ScanReport.from_json(tmp_path / "scan.json")
    assert back.to_json()["ops"] == d["ops"] and back.by_module() == report.by_module()
    html = report.write_html(tmp_path / "scan.html").read_text()
    assert "aten::hypot.out" in html and "FALLBACKS" in html


def test_fake_tensors_give_the_same_answer_without_computing(npu_ops):
    big = torch.randn(1, 3, 512, 512)
    real = scan(FallbackModel(), [torch.randn(1, 3, 8, 8)], torch_npu=npu_ops)
    fake = scan(FallbackModel(), [torch.randn(1, 3, 8, 8), big], torch_npu=npu_ops, fake=True)
    assert {(r.op, r.status) for r in fake.records} == {(r.op, r.status) for r in real.records}
    assert next(r for r in fake.fallbacks if r.op == "aten::lgamma.out").shapes["1x3x512x512"] == [[[1, 512, 512, 8]]]
    with pytest.raises(ValueError, match="forward pass only"):
        scan(FallbackModel(), [big], torch_npu=npu_ops, fake=True, backward=True)
