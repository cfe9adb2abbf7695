"""`opkit dump` / `opkit compare` (opkit/accuracy/dump.py) and the diagnose CLI on a tiny model."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

from opkit.accuracy.dump import Dump, compare, dump, make_inputs
from opkit.errors import OpkitError
from opkit.toolchain.user_code import load_model as load_model_and_inputs

REPO = Path(__file__).resolve().parent.parent


def load_model(text):
    """The model of MODEL (the one loader returns (model, inputs))."""
    return load_model_and_inputs(text)[0]


MODEL_PY = '''
import torch, torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(32, 4)
    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * 2.0
def net():
    torch.manual_seed(0)
    return Net().eval()
def broken():
    m = net()
    with torch.no_grad():
        m.fc2.weight[0] += 0.5     # a "device" whose fc2 differs
    return m
'''


@pytest.fixture()
def model_file(tmp_path):
    f = tmp_path / "tinynet.py"
    f.write_text(MODEL_PY)
    return f


def test_dump_writes_index_inputs_and_layers(tmp_path, model_file):
    m = load_model(f"{model_file}:net")
    x = make_inputs(["3x16"], seed=1)
    out = dump(m, x, tmp_path / "d", model_spec="tinynet")
    idx = json.loads((out / "index.json").read_text())
    assert [e["name"] for e in idx["layers"]] == ["fc1", "act", "fc2", ""]
    assert idx["layers"][0]["shape"] == [3, 32] and idx["inputs"][0]["shape"] == [3, 16]
    assert np.array_equal(np.load(out / "input_0.npy"), x[0].numpy())
    # the same input from the file gives the same hash
    again = make_inputs([str(out / "input_0.npy")])
    assert torch.equal(again[0], x[0])
    res = compare(out, dump(m, again, tmp_path / "e"))
    assert res["first_divergence"] is None and all(r["cosine"] == 1.0 for r in res["layers"])
    assert res["notes"] == []


def test_compare_finds_the_first_divergence(tmp_path, model_file):
    x = make_inputs(["3x16"])
    a = dump(load_model(f"{model_file}:net"), x, tmp_path / "a")
    b = dump(load_model(f"{model_file}:broken"), x, tmp_path / "b")
    res = compare(a, b)
    assert res["first_divergence"]["name"] == "fc2"
    assert [r["below"] for r in res["layers"]] == [False, False, True, True]


def test_compare_reads_an_msprobe_dump(tmp_path, model_file):
    """msprobe's PyTorch layout: step0/rank/dump.json + dump_tensor_data/*.pt, module-level names."""
    x = make_inputs(["3x16"])
    a = dump(load_model(f"{model_file}:net"), x, tmp_path / "a")
    m = load_model(f"{model_file}:broken")
    rank = tmp_path / "msprobe" / "step0" / "rank"
    (rank / "dump_tensor_data").mkdir(parents=True)
    data = {}
    with torch.no_grad():
        h1 = m.fc1(x[0])
        outs = {"fc1": h1, "act": m.act(h1)}
        outs["fc2"] = m.fc2(outs["act"])
    for path, t in outs.items():
        cls = type(getattr(m, path)).__name__
        key = f"Module.{path}.{cls}.forward.0"
        name = f"{key}.output.0.pt"
        torch.save(t.clone(), rank / "dump_tensor_data" / name)
        data[key] = {"input_args": [], "output": [{"type": "torch.Tensor", "dtype": "torch.float32",
                                                   "shape": list(t.shape), "data_name": name}]}
    (rank / "dump.json").write_text(json.dumps({"task": "tensor", "level": "L0", "framework": "pytorch",
                                                "dump_data_dir": str(rank / "dump_tensor_data"), "data": data}))
    assert Dump(tmp_path / "msprobe").names() == ["fc1", "act", "fc2"]
    res = compare(a, tmp_path / "msprobe")
    assert [r["name"] for r in res["layers"]] == ["fc1", "act", "fc2"]
    assert res["first_divergence"]["name"] == "fc2" and res["kinds"] == ["opkit", "msprobe"]


def test_bad_model_and_input_specs(tmp_path, model_file):
    with pytest.raises(OpkitError, match="expected pkg.module:factory"):
        load_model("nocolon")
    with pytest.raises(OpkitError, match="has no attribute nothere"):
        load_model(f"{model_file}:nothere")
    with pytest.raises(OpkitError, match="neither a shape"):
        make_inputs(["3y16"])
    with pytest.raises(OpkitError, match="not a dump folder"):
        Dump(tmp_path)
    (tmp_path / "keep.txt").write_text("user data")
    with pytest.raises(OpkitError, match="refusing to write"):
        dump(load_model(f"{model_file}:net"), make_inputs(["2x16"]), tmp_path)
    assert (tmp_path / "keep.txt").read_text() == "user data"


def _opkit(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "opkit", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_cli_dump_compare_and_diagnose_baseline(tmp_path, model_file):
    r = _opkit("dump", f"{model_file}:net", "--input", "3x16", "--out", "a", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _opkit("dump", f"{model_file}:broken", "--input", "a/input_0.npy", "--out", "b", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _opkit("compare", "a", "b", "--fail-on-divergence", "--json", "cmp.json", cwd=tmp_path)
    assert r.returncode == 1 and "first divergence: fc2" in r.stdout, r.stdout + r.stderr
    assert json.loads((tmp_path / "cmp.json").read_text())["first_divergence"]["name"] == "fc2"
    # diagnose (a policy without fp16-internal ops, no patch: no opkit kernels needed) + model baseline
    args = ["diagnose", f"{model_file}:net", "--input", "3x16", "--policy", "cann-allow-fp32-to-fp16",
            "--no-patch"]
    r = _opkit(*args, "--update-baseline", "model.json", "--json", "rep.json", "--html", "rep.html", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads((tmp_path / "rep.json").read_text())
    assert [(x["name"], x["io_dtype"], x["compute_dtype"]) for x in rep["layers"]][:3] == [
        ("fc1", "float16", "float32"), ("act", "float32", "float32"), ("fc2", "float16", "float32")]
    assert "<svg" in (tmp_path / "rep.html").read_text()
    r = _opkit(*args, "--baseline", "model.json", cwd=tmp_path)
    assert r.returncode == 0 and "no regression" in r.stdout, r.stdout + r.stderr
