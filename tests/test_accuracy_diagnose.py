"""Acceptance of `opkit.diagnose` (issue 13) on the example models, with opkit's naive fp16-compute kernels
on the emulator: the ConvNeXt-style model (LayerNorm inputs |x| ~ 10^3) breaks at a LayerNorm under
fp16-compute, layer_norm leads the rescue table and is recommended, the patched run is clean; autocast keeps
LayerNorm in FP32; a random-init ResNet-18 shows no divergence under any built-in policy."""
import sys
from pathlib import Path

import pytest
import torch

import opkit
from opkit.accuracy import builtin_names

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _factory(folder: str, name: str):
    sys.path.insert(0, str(EXAMPLES / folder))
    try:
        sys.modules.pop("model", None)
        import model
        return getattr(model, name)
    finally:
        sys.path.pop(0)
        sys.modules.pop("model", None)


@pytest.fixture(scope="module")
def naive_ops(tmp_path_factory):
    """The ops whose naive variant the simulation runs (and opkit.patch swaps in), built on first use into
    the cache; loaded outside any workspace (the checkout's ops/ would ask for `opkit build`)."""
    import contextlib

    from opkit.accuracy.diagnose import NAIVE_OPS
    with contextlib.chdir(tmp_path_factory.mktemp("outside-workspace")):
        return opkit.load(ops=list(NAIVE_OPS))


@pytest.fixture(scope="module")
def convnext():
    return _factory("convnext", "convnext_realistic")()


def _x(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def test_convnext_fp16_compute_names_layernorm_and_the_patch_fixes_it(naive_ops, convnext):
    data = _x(4, 3, 32, 32, seed=1)
    rep = opkit.diagnose(convnext, _x(2, 3, 64, 64), policy="fp16-compute", data=data)
    fd = rep.first_divergence
    assert fd is not None and fd.op_type == "layer_norm", str(rep)
    assert (fd.io_dtype, fd.compute_dtype) == ("float16", "float16") and fd.kernel == "opkit_naive.layer_norm_fp32"
    assert list(rep.rescue)[0] == "layer_norm", str(rep)
    assert rep.rescue["layer_norm"]["below"] == 0 and rep.rescue["layer_norm"]["top1"] == 1.0
    assert rep.result["top1"] < 1.0 and rep.result["below"] > 0
    assert rep.recommend == ["layer_norm"] and rep.recommend_ok
    assert rep.patched_layers and all(r.cosine >= rep.threshold for r in rep.patched_layers), str(rep)
    assert any(k.startswith("layer_norm: opkit_naive") for k in rep.kernels)
    d = rep.to_dict()
    assert d["first_divergence"]["name"] == fd.name and d["patched"]["result"]["below"] == 0
    # the model is untouched (no patched modules left behind, parameters still FP32)
    assert not any(hasattr(m, "opkit_original") for m in convnext.modules())
    assert all(p.dtype == torch.float32 for p in convnext.parameters())


def test_convnext_under_torch_npu_autocast_keeps_layernorm_fp32(convnext):
    rep = opkit.diagnose(convnext, _x(2, 3, 64, 64), policy="torch-npu-autocast", rescue=False, patch=False)
    ln = [r for r in rep.layers if r.op_type == "layer_norm"]
    assert len(ln) == 10 and all((r.io_dtype, r.compute_dtype) == ("float32", "float32") for r in ln)
    lin = [r for r in rep.layers if r.op_type == "linear"]
    assert lin and all(r.io_dtype == "float16" for r in lin)
    assert rep.first_divergence is None, str(rep)


@pytest.mark.parametrize("policy", builtin_names())
def test_resnet18_shows_no_divergence_under_any_policy(naive_ops, policy):
    model = _factory("resnet", "resnet18")()
    rep = opkit.diagnose(model, _x(2, 3, 64, 64), policy=policy, rescue=False, patch=False)
    assert rep.first_divergence is None, str(rep)
    assert len([r for r in rep.layers if r.op_type == "conv2d"]) == 20
    assert all(r.msprobe == "Yes" for r in rep.layers if r.op_type != "block")
