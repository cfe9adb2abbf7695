"""NPU target, fast parts: CANN discovery and its one-message error, SoC/version helpers, glue rendering
(per-dtype entry renames, dim moves, reduce outputs), the op package, the loader hook. No compiler runs."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import yaml

from opkit.errors import BuildError
from opkit.targets.npu import cann, glue, package
from opkit.opspec import AccuracySpec, AttrSpec, InputSpec, OpSpec, OutputSpec
from opkit.opspec import TestSpec as _TestSpec

REPO = Path(__file__).resolve().parents[1]
HOST_INCLUDE = REPO / "python" / "opkit" / "include"
SETTINGS = glue.Settings("Ascend910B1", "ascend910b", 48, "V2R13", HOST_INCLUDE)

NO_CANN_ENV = {"ASCEND_HOME_PATH": "", "ASCEND_TOOLKIT_HOME": "", "ASCEND_CANN_PACKAGE_PATH": ""}


def make_op(tmp: Path, name="NpuTestReduceFP32", snake="npu_test_reduce_fp32", *, reduce=True) -> OpSpec:
    """A hand-built spec with a dim attr, a keepdim attr and two outputs (one converted); reduce=False:
    one output, and int / bool attrs with choices (the NPU binding once compared those as strings)."""
    d = tmp / snake
    d.mkdir(parents=True, exist_ok=True)
    (d / "tiling.h").write_text(
        "#pragma once\n#include <cstdint>\n"
        f"struct {name}TilingData {{ uint32_t rows; uint32_t cols; }};\n"
        "#ifndef __CCE_AICORE__\n#include \"opkit/tiling.h\"\n"
        f"inline void {name}Tiling(opkit::TilingContext& ctx, {name}TilingData& t) {{\n"
        "  t.cols = static_cast<uint32_t>(ctx.inputs[0].dim(-1));\n"
        "  t.rows = static_cast<uint32_t>(ctx.inputs[0].numel() / (t.cols ? t.cols : 1));\n"
        "  ctx.block_dim = 1;\n}\n#endif\n")
    outs = "GM_ADDR y, GM_ADDR idx" if reduce else "GM_ADDR y"
    (d / "kernel.cpp").write_text('#include "kernel_operator.h"\n#include "tiling.h"\n'
                                  f'extern "C" __global__ __aicore__ void {snake}(GM_ADDR x, {outs}, '
                                  "GM_ADDR workspace, GM_ADDR tiling) {}\n")
    outputs = (OutputSpec("y", "x", "reduce(x, dim, keepdim)"),
               OutputSpec("idx", "int64", "reduce(x, dim, keepdim)", kernel_dtype="int32")) if reduce else \
              (OutputSpec("y", "x", "x"),)
    attrs = (AttrSpec("dim", "int", -1, role="dim"), AttrSpec("keepdim", "bool", False, role="keepdim"),
             AttrSpec("mode", "str", "a", choices=("a", "b"))) if reduce else \
            (AttrSpec("dim", "int", -1, role="dim"), AttrSpec("alpha", "float", 0.5),
             AttrSpec("steps", "int", 1, choices=(1, 2)), AttrSpec("exact", "bool", True, choices=(True,)))
    spec = OpSpec(name=name, snake=snake, family="reduce" if reduce else "softmax", summary="test op",
                  inputs=(InputSpec("x", ("...", "C"), ("float16", "bfloat16", "float32")),),
                  outputs=outputs, attrs=attrs, compute_dtype="float32", backward=None,
                  tests=_TestSpec(dims={"...": (1, 8), "C": (1, 64)}), accuracy=AccuracySpec(), dir=d)
    (d / "op.yaml").write_text(yaml.safe_dump(_as_yaml(spec), sort_keys=False))
    return spec


def _as_yaml(s: OpSpec) -> dict:
    """The op.yaml a spec like make_op's comes from (so a workspace can hold it)."""
    def attr(a):
        out = {"name": a.name, "type": a.type, "default": a.default}
        if a.role:
            out["role"] = a.role
        if a.choices:
            out["choices"] = list(a.choices)
        return out

    def output(o):
        out = {"name": o.name, "dtype": o.dtype, "shape": o.shape}
        if o.kernel_dtype:
            out["kernel_dtype"] = o.kernel_dtype
        return out
    return {"op": s.name, "family": s.family, "summary": s.summary,
            "inputs": [{"name": i.name, "dtypes": list(i.dtypes), "shape": list(i.shape)} for i in s.inputs],
            "outputs": [output(o) for o in s.outputs], "attrs": [attr(a) for a in s.attrs],
            "compute_dtype": s.compute_dtype,
            "tests": {"dims": {k: list(v) for k, v in s.tests.dims.items()}}, "accuracy": {"standard": "mere_mare"}}


# -- CANN discovery ------------------------------------------------------------------------------------

def test_no_cann_message_names_cann_and_the_variable(tmp_path, monkeypatch):
    monkeypatch.setattr(cann, "DEFAULT_ROOTS", (str(tmp_path / "nowhere"),))
    s = cann.find_cann(env=NO_CANN_ENV)
    assert s.cann is None
    msg = s.message()
    assert "CANN" in msg and "ASCEND_HOME_PATH" in msg and "set_env.sh" in msg
    assert str(tmp_path / "nowhere") in msg and "--check-only" in msg


def test_cann_found_from_env_with_version(tmp_path):
    root = tmp_path / "ascend-toolkit" / "8.1.RC1"
    cm = root / "compiler" / "tikcpp" / "ascendc_kernel_cmake" / "ascendc.cmake"
    cm.parent.mkdir(parents=True)
    cm.write_text("# stand-in\n")
    (root / "compiler" / "version.info").write_text("Version=7.7.0.1.238\nversion_dir=8.1.RC1\n")
    s = cann.find_cann(env={"ASCEND_HOME_PATH": str(root)})
    assert s.cann is not None and s.cann.version == "8.1.RC1" and s.cann.ascendc_cmake == cm
    assert s.cann.found_by == "$ASCEND_HOME_PATH"


def test_cann_folder_without_ascendc_cmake_is_explained(tmp_path, monkeypatch):
    monkeypatch.setattr(cann, "DEFAULT_ROOTS", (str(tmp_path / "nowhere"),))   # no CANN elsewhere either
    s = cann.find_cann(env={"ASCEND_HOME_PATH": str(tmp_path)})
    assert s.cann is None
    assert any("ascendc.cmake" in t and str(tmp_path) in t for t in s.tried), s.tried


def test_build_without_cann_raises_one_message(tmp_path, monkeypatch):
    from opkit.targets import npu
    for k, v in NO_CANN_ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(cann, "DEFAULT_ROOTS", (str(tmp_path / "nowhere"),))
    with pytest.raises(BuildError, match=r"CANN .*ASCEND_HOME_PATH"):
        npu.build([make_op(tmp_path)], tmp_path / "build", jobs=1, log=None)
    ok, why = npu.available()
    assert not ok and "CANN" in why


def test_soc_helpers():
    assert cann.normalize_soc("910b3") == "Ascend910B3"
    assert cann.detect_soc("Ascend910B4")[0] == "Ascend910B4"
    assert cann.soc_profile("Ascend910B3") == ("ascend910b", 40)
    assert cann.soc_profile("Ascend310P3")[0] == "ascend310p"
    with pytest.raises(ValueError, match="Ascend910B"):
        cann.soc_profile("Ascend999")
    assert cann.version_macro("2.13.0+cpu") == "V2R13"


def test_torch_pair_problem():
    assert cann.torch_pair_problem("2.13.0+cpu", "2.13.0") is None
    msg = cann.torch_pair_problem("2.12.1", "2.13.0.post1")
    assert msg and "2.13" in msg and "2.12" in msg


# -- rendering -----------------------------------------------------------------------------------------

def test_dtype_variants_rename_the_entry(tmp_path):
    g = glue.op_glue(make_op(tmp_path))
    assert [v.launch for v in g.variants] == ["aclrtlaunch_npu_test_reduce_fp32_fp16", "aclrtlaunch_npu_test_reduce_fp32_bf16",
                                              "aclrtlaunch_npu_test_reduce_fp32_fp32"]
    fp16 = g.variants[0].defines
    assert "npu_test_reduce_fp32=npu_test_reduce_fp32_fp16" in fp16
    assert "DTYPE_X=half" in fp16 and "DTYPE_Y=half" in fp16 and "DTYPE_IDX=int32_t" in fp16
    assert g.gm_args == ["x", "y", "idx", "workspace", "tiling"]


def test_binding_renders_moves_reduce_and_registration(tmp_path):
    op = make_op(tmp_path)
    text = glue.render_binding([glue.op_glue(op)], SETTINGS)
    # registration is opkit.registration's: the library hands over a kernel table, registers nothing itself
    assert "TORCH_LIBRARY" not in text and 'extern "C" __attribute__((visibility("default"))) void opkit_kernel_table(' in text
    assert 'table->add("npu_test_reduce_fp32", TORCH_FN(opkit_npu_npu_test_reduce_fp32::run));' in text
    assert "getCurrentNPUStream().stream(false)" in text and "OpCommand::RunOpApi(launcher" in text
    assert ".stream(true)" not in text                     # never drains the task queue per call
    assert "to_kernel_view(x)" in text and "shape_y.pop_back()" in text
    assert "idx_out = idx_out.to(at::kLong);" in text       # kernel writes int32, op returns int64
    assert "k_idx = at::zeros(shape_idx, opts_idx);" in text and "opts_idx = lead.options().dtype(at::kInt)" in text
    assert 'ctx.int_attrs["dim"] = -1;' in text
    assert "c10::string_view mode" in text and 'mode == "a" || mode == "b"' in text
    assert f'#include "{op.tiling_file}"' in text
    assert '"npu"' not in text                              # dispatch-key names only
    # the kernels' CMake is cmake/opkit_npu.cmake's opkit_npu_op(), fed by opkit.opinfo (test_npu_cmake builds it)
    from opkit.targets.npu.builder import cmake_args
    args = cmake_args([op], SETTINGS, cann_root=Path("/cann"), torch_dir=Path("/t"), torch_npu_dir=Path("/tn"),
                      src=tmp_path / "src", out_dir=tmp_path)
    assert "-DOPKIT_TARGET=npu" in args and f"-DOPKIT_OP_DIRS={op.dir}" in args and "-DASCEND_CANN_PACKAGE_PATH=/cann" in args


def test_attr_choices_compare_in_the_attrs_own_type(tmp_path):
    """int / bool attrs with choices: compared as int64_t / bool (a `std::string v(steps)` does not compile;
    test_npu_check compiles this op's binding for real); the CPU side gets them typed in the op's
    description (opkit.registration.describe), which its C++ kernels compare in the attr's own type."""
    op = make_op(tmp_path, "NpuTestSoftmax", "npu_test_softmax", reduce=False)
    npu_text = glue.render_binding([glue.op_glue(op)], SETTINGS)
    assert "int64_t steps" in npu_text and "bool exact" in npu_text
    assert "TORCH_CHECK(steps == 1 || steps == 2," in npu_text and "TORCH_CHECK(exact == true," in npu_text
    assert "std::string v(" not in npu_text
    from opkit.registration import describe
    attrs = {a["name"]: a for a in describe(op)["attrs"]}
    assert attrs["steps"]["type"] == "int" and attrs["steps"]["choices"] == [1, 2]
    assert attrs["exact"]["type"] == "bool" and attrs["exact"]["choices"] == [True]


def test_standin_header_matches_cann_shape(tmp_path):
    g = glue.op_glue(make_op(tmp_path))
    h = glue.render_standin_header(g, g.variants[0])
    assert ('extern "C" uint32_t aclrtlaunch_npu_test_reduce_fp32_fp16(uint32_t blockDim, aclrtStream stream, '
            "void* x, void* y, void* idx, void* workspace, void* tiling);") in h
    assert '#include "acl/acl_base.h"' in h


def test_package_project(tmp_path):
    ops = [make_op(tmp_path / "a"), make_op(tmp_path / "b", "NpuTestSoftmax", "npu_test_softmax", reduce=False)]
    project = package.render_project(ops, tmp_path / "package", SETTINGS)
    spec = json.loads((project / "ops.json").read_text())
    assert [o["op"] for o in spec] == ["NpuTestReduceFP32", "NpuTestSoftmax"]
    assert spec[0]["output_desc"][1]["type"] == ["int32"] * 3          # what the kernel writes (kernel_dtype)
    assert spec[0]["attr"][1] == {"name": "keepdim", "param_type": "optional", "type": "bool", "default_value": False}
    host = (project / "op_host" / "npu_test_reduce_fp32.cpp").read_text()
    assert "OP_ADD(NpuTestReduceFP32);" in host and 'AddConfig("ascend910b")' in host
    assert "SetOutputDataType(1, ge::DT_INT32)" in host and "out->AppendDim(1)" in host
    assert ".InitValue(0)   // kernels may accumulate" in host
    assert "GetAttrPointer<bool>(1)" in host                  # keepdim is attr #1
    kern = (project / "op_kernel" / "npu_test_reduce_fp32.cpp").read_text()
    assert '\n#include "npu_test_reduce_fp32_tiling.h"' in kern and '\n#include "tiling.h"' not in kern
    assert (project / "op_kernel" / "npu_test_reduce_fp32_tiling.h").is_file()
    sh = (project / "build.sh").read_text()
    assert "msopgen" in sh and "ai_core-Ascend910B1" in sh and "unset ASCEND_CUSTOM_OPP_PATH" in sh
    assert subprocess.run(["bash", "-n", str(project / "build.sh")]).returncode == 0
    # op_host/<op>.cpp compiles as CANN's raw compile and as the op_host library (C++17, with the tiling
    # adapter and the op's tiling.h): what --check-only --package runs (tests/test_npu_contracts.py).
    from opkit.targets.npu import contracts
    for cmd, step, src in contracts.op_host_commands(project, "g++"):
        contracts.check_compile(cmd, step, src)


# -- loader hook -----------------------------------------------------------------------------------------

def test_loader_warns_when_npu_library_is_missing(tmp_path):
    from opkit.targets import npu
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert npu.load_if_available(tmp_path) is False
    assert any("will NOT run on the NPU" in str(x.message) and "opkit build --target npu" in str(x.message) for x in w)


def test_importing_the_backend_is_light():
    """opkit.load() imports targets.npu on every machine: no torch_npu, no jinja2, no torch at import."""
    code = ("import sys, opkit.targets.npu as n; "
            "bad = [m for m in ('torch_npu', 'torch', 'jinja2', 'opkit.targets.npu.glue') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={"PYTHONPATH": str(REPO / "python"), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stdout + r.stderr


def test_loader_hook_with_the_loaders_keywords(tmp_path):
    from opkit.targets import npu
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert npu.load_if_available(workspace=tmp_path, specs=[]) is False
        assert npu.load_if_available(workspace=None, specs=[]) is False
    msgs = [str(x.message) for x in w]
    assert str(tmp_path / "build" / "opkit" / "npu" / "libopkit_npu.so") in msgs[0]
    assert "no workspace" in msgs[1] and "will NOT run on the NPU" in msgs[1]


def test_cli_build_npu_without_cann_fails_naming_cann(tmp_path):
    """`opkit build --target npu` on this machine (no CANN): non-zero exit, one message naming CANN and
    the variable to set."""
    ws = tmp_path / "ws"
    import shutil
    shutil.copytree(REPO / "ops" / "layer_norm_fp32", ws / "ops" / "layer_norm_fp32")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(REPO / "python"), **NO_CANN_ENV}
    r = subprocess.run([sys.executable, "-m", "opkit", "build", "--target", "npu"], cwd=ws, env=env,
                       capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "CANN" in out and "ASCEND_HOME_PATH" in out and "set_env.sh" in out, out
    assert "Traceback" not in out, out


def test_npu_test_mode_without_torch_npu_is_a_clear_error():
    from opkit.targets import npu
    from opkit.errors import OpkitError
    with pytest.raises(OpkitError, match=r"torch_npu is not installed.*--target cpu"):
        npu.prepare_test_process()


def test_make_op_yaml_loads_back(tmp_path):
    """The hand-built test ops are valid op.yaml too (the CLI tests put them in a workspace)."""
    from opkit.opspec import load_spec
    for spec in (make_op(tmp_path / "a"), make_op(tmp_path / "b", "NpuTestSoftmax", "npu_test_softmax", reduce=False)):
        back = load_spec(spec.dir)
        assert (back.name, back.inputs, back.outputs, back.attrs) == (spec.name, spec.inputs, spec.outputs, spec.attrs)


def test_soc_from_npu_smi(tmp_path, monkeypatch):
    """Without --soc the SoC comes from `npu-smi info` (here a stand-in printing a 910B3 table row)."""
    smi = tmp_path / "npu-smi"
    smi.write_text("#!/bin/sh\necho '| 0     910B3               | OK            | 93.5   40   0 / 0 |'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ.get('PATH', '')}")
    assert cann.detect_soc(None) == ("Ascend910B3", "npu-smi info")
    assert cann.detect_soc("Ascend910B1") == ("Ascend910B1", "--soc")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert cann.detect_soc(None) == (cann.DEFAULT_SOC, "default (no --soc, no npu-smi)")
