"""Tensor-list (ParamType DYNAMIC) inputs and outputs and list attrs through `opkit import-cann` (issue 39 item 2),
on tests/cann_projects/list_scale (written here, no mirror needed): y[i] = x[i] * scales[i] + bias, one block per
tensor, the kernel reading both lists with ListTensorDesc as ops-nn's foreach kernels do."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from opkit.cannproject import layout
from opkit.cannproject.op import CannOp, list_buffer
from opkit.errors import OpkitError
from opkit.opspec import load_spec

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "tests" / "cann_projects" / "list_scale"
OPKIT = [sys.executable, "-m", "opkit"]


def _run(args, cwd):
    return subprocess.run(OPKIT + args, cwd=cwd, env=dict(os.environ, PYTHONUNBUFFERED="1"), capture_output=True,
                          text=True, timeout=900)


@pytest.fixture(scope="module")
def list_scale(tmp_path_factory):
    op = CannOp(layout.find(PROJECT), "ListScale", tmp_path_factory.mktemp("ls"))
    yield op
    op.close()


def test_cann_list_buffer_layout():
    """The words ListTensorDesc reads: the pointer array's offset, (index << 32 | dim) and the shape per tensor,
    the pointers, each into the same buffer at a 32-byte-aligned offset with the data there."""
    a, b = torch.arange(6, dtype=torch.float32).reshape(2, 3), torch.full((4, 1), 7.0)
    buf, offs = list_buffer([a, b])
    w = buf[:8 * 9].view(np.uint64)
    assert list(w[:7]) == [56, 2, 2, 3, (1 << 32) | 2, 4, 1]
    assert [int(p) - buf.ctypes.data for p in w[7:9]] == offs and all(o % 32 == 0 for o in offs)
    assert buf[offs[0]:offs[0] + 24].view(np.float32).tolist() == [0, 1, 2, 3, 4, 5]
    assert buf[offs[1]:offs[1] + 16].view(np.float32).tolist() == [7, 7, 7, 7]
    with pytest.raises(OpkitError, match="one rank"):
        list_buffer([a, torch.zeros(3)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_cann_tensor_list_and_list_attr_run_on_the_emulator(list_scale, dtype):
    g = torch.Generator().manual_seed(0)
    xs = [torch.randn(s, generator=g).to(dtype) for s in ((8, 64), (3, 77), (1, 5))]   # ragged lengths
    attrs = {"scales": [2.0, -0.5, 3.0], "bias": 0.25}
    ys, = list_scale([xs], attrs)
    assert isinstance(ys, list) and [y.shape for y in ys] == [x.shape for x in xs]
    for x, y, s in zip(xs, ys, attrs["scales"]):
        torch.testing.assert_close(y, (x.float() * s + 0.25).to(dtype), rtol=1e-3, atol=1e-3)
    r = list_scale.tiling([xs], attrs)
    assert r["block_dim"] == 3 and r["list_sizes"] == [3]


def test_cann_tensor_list_errors_name_the_param(list_scale):
    with pytest.raises(OpkitError, match="input x is DYNAMIC"):
        list_scale([torch.zeros(4)], {"scales": [1.0]})
    with pytest.raises(OpkitError, match="TilingFunc returned GRAPH_FAILED"):   # one scale per tensor
        list_scale([[torch.zeros(4), torch.zeros(4)]], {"scales": [1.0]})


def test_cann_import_takes_lists(tmp_path):
    """import writes x_0, x_1 / y_0, y_1 and cann.lists for the DYNAMIC params and a float[] attr with its OpDef
    default; the import's own check runs the op; then build and the quick matrix pass against the reference."""
    r = _run(["import-cann", str(PROJECT), "--reference", "(x_0 * scales[0] + bias, x_1 * scales[1] + bias)"],
             tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "runs on the emulator (" in r.stdout and "DYNAMIC (tensor-list) params x, y" in r.stdout
    dest = tmp_path / "ops" / "list_scale"
    data = yaml.safe_load((dest / "op.yaml").read_text())
    assert data["cann"]["lists"] == {"x": 2, "y": 2}
    assert [i["name"] for i in data["inputs"]] == ["x_0", "x_1"]
    assert [o["name"] for o in data["outputs"]] == ["y_0", "y_1"]
    assert data["attrs"][0] == {"name": "scales", "type": "float[]", "default": [2.0, 0.5]}
    spec = load_spec(dest / "op.yaml")
    assert "float[] scales=[2.0, 0.5]" in spec.schema()
    for cmd in (["build"], ["test", "--quick"]):
        r = _run(cmd, tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
    assert "verdict: PASS" in r.stdout and " 0 failed" in r.stdout


def test_list_attr_types_are_for_cann_ops_only(tmp_path):
    from opkit.errors import SpecError
    d = tmp_path / "ops" / "plain_op"
    d.mkdir(parents=True)
    (d / "op.yaml").write_text(yaml.safe_dump({
        "op": "PlainOp", "family": "custom", "summary": "s",
        "inputs": [{"name": "x", "shape": ["..."], "dtypes": ["float32"]}],
        "outputs": [{"name": "y", "dtype": "x", "shape": "x"}],
        "attrs": [{"name": "dims", "type": "int[]", "default": [1, 2]},
                  {"name": "bad", "type": "float[]", "default": [1.0, "a"]}]}))
    with pytest.raises(SpecError) as e:
        load_spec(d / "op.yaml")
    assert "expected a float[]" in str(e.value) and "list attrs are taken for `lang: cann` ops only" in str(e.value)
