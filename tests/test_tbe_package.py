"""The TBE flavour of `opkit build --target npu`: project layout, REG_OP + InferShape, op-info per SoC,
the OpCommand binding; --check-only compiles prototype and binding against the published headers."""
from __future__ import annotations

from opkit.scaffold import new
from opkit.opspec import load_spec
from opkit.build import build_specs
from opkit.tbe import package


def test_project_renders_prototype_ini_impl_and_opcommand(tmp_path):
    s = new("LnPkg", family="norm", cwd=tmp_path, lang="tbe")
    spec = load_spec(s.op_dir / "op.yaml")
    project = package.render_project([spec], tmp_path / "proj", ["Ascend910B", "Ascend310P"])
    h = (project / "op_proto" / "ln_pkg.h").read_text()
    assert "REG_OP(LnPkg)" in h and ".INPUT(weight, TensorType({DT_FLOAT16, DT_FLOAT}))" in h
    cc = (project / "op_proto" / "ln_pkg.cc").read_text()
    assert 'op.GetInputDescByName("x")' in cc and "COMMON_INFER_FUNC_REG(LnPkg, LnPkgInferShape)" in cc
    assert (project / "tbe" / "impl" / "ln_pkg.py").read_bytes() == (s.op_dir / "kernel.py").read_bytes()
    for soc in ("ascend910b", "ascend310p"):
        ini = (project / "tbe" / "op_info_cfg" / "ai_core" / soc / "ln_pkg.ini").read_text()
        assert "input0.dtype=float16,float" in ini and "opInterface.value=ln_pkg" in ini
    cpp = (project / "framework" / "torch_npu" / "ln_pkg_opcommand.cpp").read_text()
    assert 'cmd.Name("LnPkg")' in cpp and '.Attr("eps", static_cast<float>(eps))' in cpp
    assert "TORCH_LIBRARY" not in cpp and 'table->add("ln_pkg", TORCH_FN(run));' in cpp


def test_check_only_compiles_against_published_headers(tmp_path):
    s = new("LnPkgCheck", family="norm", cwd=tmp_path, lang="tbe")
    spec = load_spec(s.op_dir / "op.yaml")
    said = []
    build_specs([spec], tmp_path / "out", target="npu", check_only=True, log=said.append)   # the build router
    assert any("--check-only OK" in m for m in said), said
