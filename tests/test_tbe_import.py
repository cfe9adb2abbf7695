"""`opkit import-tbe`: op-info (.ini, ops-info JSON), REG_OP prototypes, the check_op_params fallback,
and the TBE LayerNorm written here in both spellings going through import and its test matrix."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opkit.errors import OpkitError
from opkit.opspec import load_spec
from opkit.tbe import ini, importer, proto

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "tbe"
LN_YAML = ROOT / "ops" / "layer_norm_fp32" / "op.yaml"
LN_REF = ROOT / "ops" / "layer_norm_fp32" / "reference.py"


def test_ini_reads_inputs_attrs_and_rejects_duplicates(tmp_path):
    info = ini.read(EXAMPLES / "layer_norm_fp32.ini")["LayerNormFP32"]
    assert [p.name for p in info.inputs] == ["x", "weight", "bias"]
    assert info.inputs[0].dtypes == ["float16", "float32"]
    assert [(a.name, a.type, a.default) for a in info.attrs] == [("eps", "float", "1e-05")]
    assert info.op_interface == "layer_norm_fp32"
    again = ini.read(_write(tmp_path / "again.ini", ini.write(info)))["LayerNormFP32"]
    assert again.inputs == info.inputs and again.attrs == info.attrs
    bad = _write(tmp_path / "bad.ini", "[Op]\ninput0.name=x\ninput0.name=y\n")
    with pytest.raises(OpkitError, match=r"bad.ini:3: duplicate key 'input0.name'"):
        ini.read(bad)


def test_ops_info_json_reads_like_the_ini(tmp_path):
    data = {"Exp": {"input0": {"name": "x", "dtype": "float16,float", "paramType": "required", "format": "ND,ND"},
                    "output0": {"name": "y", "dtype": "float16,float", "paramType": "required"},
                    "attr": {"list": "base"}, "attr_base": {"type": "float", "defaultValue": "-1.0"},
                    "opFile": {"value": "exp"}}}
    info = ini.read(_write(tmp_path / "aic-ascend910-ops-info.json", json.dumps(data)))["Exp"]
    assert info.inputs[0].dtypes == ["float16", "float32"] and info.attrs[0].default == "-1.0"


def test_prototype_round_trip(tmp_path):
    header, source = proto.render(ini.read(EXAMPLES / "layer_norm_fp32.ini")["LayerNormFP32"], {"y": "x"})
    assert "REG_OP(LayerNormFP32)" in header and ".ATTR(eps, Float, 1e-05)" in header
    assert "COMMON_INFER_FUNC_REG(LayerNormFP32, LayerNormFP32InferShape)" in source
    back = proto.read(_write(tmp_path / "p.h", header))["LayerNormFP32"]
    assert [p.name for p in back.inputs] == ["x", "weight", "bias"]
    assert back.inputs[0].dtypes == ["float16", "float32"] and back.attrs[0].default == "1e-05"


@pytest.mark.parametrize("impl", ["layer_norm_fp32.py", "layer_norm_fp32_te.py"])
def test_layer_norm_written_here_imports_and_passes(tmp_path, impl):
    from opkit.harness.cases import build_matrix
    from opkit.harness.execute import OpHandle, run_case
    from opkit.harness.golden import load_reference
    from opkit.tbe import runner

    got = importer.import_tbe(EXAMPLES / impl, ini=EXAMPLES / "layer_norm_fp32.ini", spec_from=LN_YAML,
                              reference=str(LN_REF), cwd=tmp_path)
    assert (got.op_dir / "kernel.py").read_bytes() == (EXAMPLES / impl).read_bytes()     # unchanged copy
    spec = load_spec(got.op_dir / "op.yaml")
    assert spec.lang == "tbe" and spec.dtypes == ("float16", "float32")
    op, ref = runner.TbeOp(spec), load_reference(spec.reference_file)
    recs = [run_case(spec, c, OpHandle(fn=lambda *i, **a: op(list(i), a)[0]), ref)
            for c in build_matrix(spec, "quick") if _numel(c) <= 20_000]     # small cases: the suite's time
    assert recs and all(r["verdict"] == "pass" for r in recs), [r["reason"] for r in recs if r["reason"]]


def test_import_without_op_info_reads_the_decorator(tmp_path):
    got = importer.import_tbe(EXAMPLES / "layer_norm_fp32_te.py", reference="torch.nn.functional.layer_norm("
                              "x, x.shape[-1:], weight, bias, eps)", cwd=tmp_path, op_type="LnTe")
    spec = load_spec(got.op_dir / "op.yaml")
    assert [i.name for i in spec.inputs] == ["input_x", "input_weight", "input_bias"]
    assert [(a.name, a.default) for a in spec.attrs] == [("eps", 1e-5)]
    with pytest.raises(OpkitError, match="already exists"):
        importer.import_tbe(EXAMPLES / "layer_norm_fp32_te.py", cwd=tmp_path, op_type="LnTe")


def test_cli_new_build_test_tbe_norm(tmp_path):
    """The issue's main line, --quick: scaffold, build (check + manifest), test through torch.ops.opkit."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    opkit = [sys.executable, "-m", "opkit"]
    for cmd in (["new", "LayerNormFP32Tbe", "--lang", "tbe", "--family", "norm"], ["build"],
                ["test", "--quick", "-k", "64x1000 or 5x100 or opcheck"]):
        r = subprocess.run(opkit + cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
    assert "verdict: PASS" in r.stdout
    report = json.loads((tmp_path / "build/opkit/reports/report-quick.json").read_text())
    fp16 = [c for c in report["cases"] if c["dtype"] == "float16"]
    assert any(c["naive_metrics"] and not c["naive_metrics"]["passed"] for c in fp16)


def _numel(case) -> int:
    n = 1
    for d in case.lead_shape:
        n *= d
    return n


def _write(p: Path, text: str) -> Path:
    p.write_text(text)
    return p
