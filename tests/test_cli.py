"""The `opkit` command: exit codes and messages; and issue 3's acceptance run (slow)."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def opkit(*args, cwd, env=None, timeout=3600):
    return subprocess.run([sys.executable, "-m", "opkit", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=timeout)


def tree(root: Path) -> dict:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_errors_go_to_stderr_with_exit_1(tmp_path):
    r = opkit("new", "lowerCase", cwd=tmp_path)
    assert r.returncode == 1 and r.stderr.startswith("opkit: error: op name 'lowerCase' starts with a lower-case")
    assert not any(tmp_path.iterdir())
    r = opkit("build", cwd=tmp_path)
    assert r.returncode == 1 and "no opkit workspace here" in r.stderr
    r = opkit("build", "--soc", "Ascend910B1", cwd=tmp_path)
    assert r.returncode == 1 and "--target npu only" in r.stderr


def test_new_twice_refuses_and_changes_nothing(tmp_path):
    r = opkit("new", "LayerNormFP32", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "from the bundled op layer_norm_fp32" in " ".join(r.stdout.split())
    before = tree(tmp_path)
    r = opkit("new", "LayerNormFP32", cwd=tmp_path)
    assert r.returncode != 0 and "already exists; nothing changed" in r.stderr
    assert tree(tmp_path) == before


def test_list_shows_ops_families_and_targets(tmp_path):
    assert opkit("new", "LayerNormFP32", cwd=tmp_path).returncode == 0
    r = opkit("list", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    assert "workspace (shadows bundled)" in text and "not built" in text
    assert "rms_norm_fp32" in text and "bundled" in text
    assert "target cpu: available" in text and "target npu:" in text
    r = opkit("list", "--families", cwd=tmp_path)
    assert r.returncode == 0 and "elementwise" in r.stdout


def test_cflags_prints_the_emulator_flags(tmp_path):
    from opkit import emulator
    r = opkit("cflags", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.split() == emulator.cflags()
    r = opkit("cflags", "--libs", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.split() == emulator.cflags(libs=True)


ACCEPT = textwrap.dedent("""
    import json, torch, torch.nn.functional as F, opkit
    opkit.load()
    out = {}
    torch.manual_seed(0)
    for name, gen in (("scale50", lambda: torch.randn(64, 1000) * 50), ("offset200", lambda: torch.randn(64, 1000) + 200)):
        x0, w, b = gen(), torch.randn(1000), torch.randn(1000)
        for dt in (torch.float16, torch.bfloat16, torch.float32):
            x = x0.to(dt)
            y = torch.ops.opkit.layer_norm_fp32(x, w.to(dt), b.to(dt), eps=1e-5)
            ref = F.layer_norm(x.double(), (1000,), w.to(dt).double(), b.to(dt).double(), 1e-5)
            cos = F.cosine_similarity(y.double().flatten(), ref.flatten(), dim=0).item()
            out[f"{name}-{dt}"] = [str(y.dtype) == str(dt), tuple(y.shape) == tuple(x.shape), cos,
                                   bool(torch.isfinite(y).all())]
    from torch.library import opcheck
    for dt in (torch.float16, torch.bfloat16, torch.float32):
        r = opcheck(torch.ops.opkit.layer_norm_fp32.default,
                    (torch.randn(3, 5, 77, dtype=dt), torch.randn(77, dtype=dt), torch.randn(77, dtype=dt)), {"eps": 1e-5})
        out[f"opcheck-{dt}"] = r
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_issue3_acceptance_in_an_empty_folder(tmp_path):
    """opkit new LayerNormFP32 && opkit build && opkit test exits 0; new again refuses; opkit.load() values,
    cosine > 0.9999 vs fp64 at N(0,1)*50 and N(0,1)+200 for fp16/bf16/fp32; opcheck passes."""
    for args in (("new", "LayerNormFP32"), ("build",), ("test", "--json", "report.json")):
        r = opkit(*args, cwd=tmp_path)
        assert r.returncode == 0, f"opkit {' '.join(args)}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    cases = json.loads((tmp_path / "report.json").read_text())["cases"]
    assert cases and all(c["verdict"] == "pass" for c in cases)
    before = tree(tmp_path / "ops")
    assert opkit("new", "LayerNormFP32", cwd=tmp_path).returncode != 0
    assert tree(tmp_path / "ops") == before
    r = subprocess.run([sys.executable, "-c", ACCEPT], cwd=tmp_path, capture_output=True, text=True, timeout=3600)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    for key, val in res.items():
        if key.startswith("opcheck"):
            assert all(v == "SUCCESS" for v in val.values()), (key, val)
        else:
            dtype_ok, shape_ok, cos, finite = val
            assert dtype_ok and shape_ok and finite and cos > 0.9999, (key, val)
