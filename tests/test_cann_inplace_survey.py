"""scripts/cann_inplace_survey.py's selection and staging by CANN's build rules, on generated op folders (no mirror):
a kernel that registers a Matmul object is a MIX kernel CANN infers (counted apart, as the marked ones), also
through a macro or an op_kernel header, but not on a branch A2 does not take nor for a mere include; and
ops-transformer's common/include/kernel/*.* files are staged into ascendc/common as its cmake/func.cmake copies them."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIX = "MIX kernel (REGIST_MATMUL_OBJ, CANN infers MIX)"


def _script():
    spec = importlib.util.spec_from_file_location("cann_inplace_survey_under_test",
                                                  ROOT / "scripts" / "cann_inplace_survey.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _op(root: Path, name: str, kernel: str, headers: dict[str, str] | None = None) -> Path:
    op = root / "image" / name
    (op / "op_kernel").mkdir(parents=True)
    (op / "op_host").mkdir()
    (op / "op_host" / f"{name}_def.cpp").write_text('this->AICore().AddConfig("ascend910b");\n')
    (op / "op_kernel" / f"{name}.cpp").write_text(kernel)
    for h, text in (headers or {}).items():
        (op / "op_kernel" / h).write_text(text)
    return op


ENTRY = 'extern "C" __global__ __aicore__ void {name}(GM_ADDR x, GM_ADDR tiling) {{\n{body}\n}}\n'


def test_a_kernel_registering_a_matmul_object_is_counted_as_mix(tmp_path):
    s = _script()
    direct = _op(tmp_path, "direct", '#include "lib/matmul_intf.h"\n' + ENTRY.format(
        name="direct", body="REGIST_MATMUL_OBJ(&op.pipe, GetSysWorkSpacePtr(), op.mm, t);"))
    # the ops-cv upsample form: an object-like macro, defined inside the entry, invoked without parentheses
    via_macro = _op(tmp_path, "via_macro", ENTRY.format(
        name="via_macro", body="#define INIT_AND_PROCESS \\\n  REGIST_MATMUL_OBJ(&op.pipe, w, op.mm, t); \\\n"
                               "  op.Process()\n  INIT_AND_PROCESS;"))
    in_header = _op(tmp_path, "in_header", '#include "impl.h"\n' + ENTRY.format(name="in_header", body="RUN(op);"),
                    {"impl.h": '#include "deeper.h"\n', "deeper.h": "#define RUN(o) REGIST_CUBE_OBJ(&o.pipe, w, o.mm)\n"})
    for op in (direct, via_macro, in_header):
        files, skipped = s.entries(op)
        assert files == [] and skipped == {MIX: 1}, (op.name, files, skipped)


def test_a_mere_include_or_another_chips_branch_stays_a_vector_entry(tmp_path):
    s = _script()
    include_only = _op(tmp_path, "include_only", '#include "lib/matmul_intf.h"\n' + ENTRY.format(
        name="include_only", body="DoVector();"))
    other_chip = _op(tmp_path, "other_chip", ENTRY.format(
        name="other_chip", body="#if __CCE_AICORE__ == 200\n  REGIST_MATMUL_OBJ(&op.pipe, w, op.mm, t);\n#endif"))
    unused_macro = _op(tmp_path, "unused_macro", "#define NEVER REGIST_MATMUL_OBJ(&p, w, m, t)\n" + ENTRY.format(
        name="unused_macro", body="DoVector();"))
    # a directive naming a registering macro invokes nothing: `#undef`, `#ifdef`, `#if defined(...)` (multi-line too)
    named = [_op(tmp_path, f"named_{i}", "#define NEVER REGIST_MATMUL_OBJ(&p, w, m, t)\n" + d + ENTRY.format(
        name=f"named_{i}", body="DoVector();")) for i, d in enumerate((
            "#undef NEVER\n", "#ifdef NEVER\n#endif\n", "#if defined(NEVER) || \\\n    defined(REGIST_MATMUL_OBJ)\n#endif\n"))]
    for op in (include_only, other_chip, unused_macro, *named):
        files, skipped = s.entries(op)
        assert [f.name for f in files] == [f"{op.name}.cpp"] and not skipped, (op.name, skipped)


def test_the_repositorys_common_include_kernel_is_staged_into_ascendc_common(tmp_path):
    s = _script()
    opbase = tmp_path / "opbase"
    (opbase / "pkg_inc" / "op_common" / "atvoss").mkdir(parents=True)
    (opbase / "include" / "op_common" / "op_kernel").mkdir(parents=True)
    repo = tmp_path / "ops-transformer"
    (repo / "common" / "include" / "kernel").mkdir(parents=True)
    (repo / "common" / "include" / "kernel" / "util.h").write_text("#pragma once\n")
    # func.cmake copies `*.*`: no dotless name, no hidden file; the script links files only, no folder
    (repo / "common" / "include" / "kernel" / "README").write_text("")
    (repo / "common" / "include" / "kernel" / ".clang-format").write_text("")
    (repo / "common" / "include" / "kernel" / "sub").mkdir()
    common = s.stage_common(opbase, tmp_path / "work", repo)
    assert (common / "util.h").read_text() == "#pragma once\n"
    assert sorted(p.name for p in common.iterdir()) == ["atvoss", "op_kernel", "util.h"]
    assert (common / "atvoss").is_dir() and (common / "op_kernel").is_dir()
    plain = s.stage_common(opbase, tmp_path / "work2", tmp_path / "ops-math")  # no common/include/kernel
    assert sorted(p.name for p in plain.iterdir()) == ["atvoss", "op_kernel"]
