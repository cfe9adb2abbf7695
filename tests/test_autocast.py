"""opkit ops under autocast (policy: docs/architecture.md, "Autocast policy"): floating inputs are cast to
the lead input's dtype, compute is FP32 inside, outputs take the spec's dtype; fp16 I/O stays fp16 and
fp32 is never downcast. The C++ library registers the same kernel for AutocastPrivateUse1 (the NPU's
autocast key), checked here through the dispatcher without torch_npu."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn

import opkit
from opkit.harness import golden
from opkit.harness.metrics import compare
from opkit.opspec.standard import thresholds
from opkit.workspace import bundled_entries

LOW = [torch.float16, torch.bfloat16]
DTYPE_NAME = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32"}


@pytest.fixture(scope="module", autouse=True)
def _loaded(bundled_ops):
    return bundled_ops


def _ln_ref():
    spec = next(e.spec for e in bundled_entries() if e.snake == "layer_norm_fp32")
    return golden.load_reference(spec.reference_file)


@pytest.mark.parametrize("dtype", LOW, ids=["fp16", "bf16"])
def test_patched_layer_norm_under_autocast_magnitude_1000(dtype):
    """A Linear's low-precision output of magnitude ~1000 feeds a patched LayerNorm (fp32 params): the
    output is low precision and within that dtype's standard of an FP32 LayerNorm on the same input."""
    torch.manual_seed(0)
    c = 333
    model = nn.Sequential(nn.Linear(64, c), nn.LayerNorm(c))
    with torch.no_grad():
        model[0].bias.copy_(1000 + 50 * torch.randn(c))          # rows: mean ~1000, spread ~50
        model[1].weight.normal_(1, 0.1)
        model[1].bias.normal_(0, 0.1)
    x = torch.randn(16, 64)
    opkit.patch(model)
    with torch.autocast("cpu", dtype=dtype):
        h = model[0](x)
        y = model(x)
    assert h.dtype == dtype and y.dtype == dtype
    assert h.abs().max() > 900
    ln = model[1]
    args = (h, ln.weight.detach().to(dtype), ln.bias.detach().to(dtype))   # what the op computes on
    gold = golden.golden(_ln_ref(), list(args), {"eps": ln.eps})[0]      # fp32 LayerNorm of the same input
    scale = golden.error_scale(_ln_ref(), list(args), {"eps": ln.eps}, (gold,))[0]
    res = compare(y, gold, thresholds(DTYPE_NAME[dtype]), scale)
    assert res["passed"], res["reason"]


def test_naive_layer_norm_loses_what_opkit_keeps():
    """The same check on the naive variant (fp16 compute) fails: the test above can tell them apart."""
    torch.manual_seed(0)
    x = (1000 + 50 * torch.randn(16, 333)).half()
    w, b = torch.ones(333, dtype=torch.float16), torch.zeros(333, dtype=torch.float16)
    gold = golden.golden(_ln_ref(), [x, w, b], {"eps": 1e-5})[0]
    ours = torch.ops.opkit.layer_norm_fp32(x, w, b, 1e-5)
    naive = torch.ops.opkit_naive.layer_norm_fp32(x, w, b, 1e-5)
    assert compare(ours, gold, thresholds("float16"))["passed"]
    assert not compare(naive, gold, thresholds("float16"))["passed"]


@pytest.mark.parametrize("dtype", LOW, ids=["fp16", "bf16"])
def test_output_dtypes_follow_policy(dtype):
    x32 = torch.randn(4, 40)
    w, b = torch.randn(40), torch.randn(40)
    with torch.autocast("cpu", dtype=dtype):
        # fp32 activations are never downcast
        assert torch.ops.opkit.layer_norm_fp32(x32, w, b).dtype == torch.float32
        assert torch.ops.opkit.softmax_fp32(x32, -1).dtype == torch.float32
        # low-precision lead input: other floating inputs follow it, output is the lead dtype
        xl = x32.to(dtype)
        for out in (torch.ops.opkit.layer_norm_fp32(xl, w, b), torch.ops.opkit.rms_norm_fp32(xl, w),
                    torch.ops.opkit.softmax_fp32(xl, -1), torch.ops.opkit.gelu_fp32(xl, "tanh"),
                    torch.ops.opkit.silu_fp32(xl)):
            assert out.dtype == dtype
        # an fp32 lead with low-precision weights: weights go up to fp32
        assert torch.ops.opkit.layer_norm_fp32(x32, w.to(dtype), b.to(dtype)).dtype == torch.float32


@pytest.mark.parametrize("op", ["softmax_fp32", "gelu_fp32", "silu_fp32", "rms_norm_fp32"])
def test_other_ops_fp32_compute_under_autocast(op):
    """Large-magnitude fp16 inputs: results within the fp16 standard of the FP32 reference."""
    spec = next(e.spec for e in bundled_entries() if e.snake == op)
    ref = golden.load_reference(spec.reference_file)
    torch.manual_seed(1)
    x = (torch.randn(8, 301) * 8 + (200 if op == "rms_norm_fp32" else 0)).half()
    inputs = [x] + [(torch.ones(301) + 0.1 * torch.randn(301)).half() for _ in spec.inputs[1:]]
    with torch.autocast("cpu", dtype=torch.float16):
        out = getattr(torch.ops.opkit, op)(*inputs)
    assert out.dtype == torch.float16
    gold = golden.golden(ref, inputs, {})[0]
    scale = golden.error_scale(ref, inputs, {}, (gold,))[0]
    res = compare(out, gold, thresholds("float16"), scale)
    assert res["passed"], f"{op}: {res['reason']}"


def test_autocast_backward_reaches_fp32_params():
    model = nn.Sequential(nn.Linear(32, 48), nn.LayerNorm(48), nn.GELU(), nn.Linear(48, 8), nn.Softmax(-1))
    opkit.patch(model)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(torch.randn(5, 32))
    assert out.dtype == torch.bfloat16
    out.float().log().sum().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and p.grad.dtype == torch.float32 and torch.isfinite(p.grad).all(), name


def test_autocast_kernels_registered_for_cpu_and_npu_keys():
    """Every loaded op with FP32 compute has AutocastCPU and AutocastPrivateUse1 kernels (the NPU's
    autocast key), without torch_npu: read from the dispatcher's registration table."""
    checked = 0
    for e in bundled_entries():
        assert e.spec is not None and hasattr(torch.ops.opkit, e.snake), f"bundled op {e.dir.name} is not loaded"
        if e.spec.compute_dtype != "float32":
            continue
        qualname = f"opkit::{e.snake}"
        for key in ("AutocastCPU", "AutocastPrivateUse1"):
            assert torch._C._dispatch_has_kernel_for_dispatch_key(qualname, key), f"{qualname}: no {key} kernel"
        dump = torch._C._dispatch_dump(qualname)
        assert "AutocastPrivateUse1" in dump, dump
        checked += 1
    assert checked == len([e for e in bundled_entries() if e.spec.compute_dtype == "float32"]) >= 16
