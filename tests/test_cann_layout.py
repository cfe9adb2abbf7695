"""How an ops-math / ops-nn op folder is read the way CANN's build reads it (docs/cann.md "CANN's repositories"), on
folders written here (no mirror): the A2 kernel file and AUTO_SYNC from add_kernel_sources, SUPPORT_TILING_DIR in
op_host/CMakeLists.txt, DEPENDENCIES' host sources, an entry's CPU-debug form, sibling kernel folders staged as CANN
stages them, and the template-argument table the kernel reaches."""
from __future__ import annotations

from pathlib import Path

from opkit.cannproject import instances, layout, libs


def _op(root: Path, name: str, files: dict[str, str]) -> Path:
    d = root / name
    for rel, text in files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)
    (d / "op_host").mkdir(parents=True, exist_ok=True)
    (d / "op_kernel").mkdir(parents=True, exist_ok=True)
    return d


def test_cann_layout_kernel_src_and_auto_sync_from_cmakelists(tmp_path):
    d = _op(tmp_path / "math", "foo", {
        "op_kernel/foo.cpp": "", "op_kernel/foo_arch22.cpp": "",
        "CMakeLists.txt": 'add_kernel_sources(KERNEL_SRC arch35/foo.cpp COMPUTE_UNITS ascend950 AUTO_SYNC false)\n'
                          'add_kernel_sources(\n  KERNEL_SRC foo_arch22.cpp\n  COMPUTE_UNITS ascend910b ascend910_93\n'
                          '  AUTO_SYNC false\n  OPTIONS "-O2")\n'})
    p = layout.Project(d, d / "op_host", d / "op_kernel")
    assert p.kernel_file("Foo") == d / "op_kernel" / "foo_arch22.cpp"
    assert p.a2_auto_sync() is False
    (d / "CMakeLists.txt").write_text("add_kernel_sources(KERNEL_SRC arch35/foo.cpp COMPUTE_UNITS ascend950 "
                                      "AUTO_SYNC false)\n")
    assert p.kernel_file("Foo") == d / "op_kernel" / "foo.cpp" and p.a2_auto_sync() is True


def test_cann_layout_tiling_dir_and_dependencies_from_op_host_cmakelists(tmp_path):
    utils = _op(tmp_path / "foreach", "foreach_utils", {"op_host/tiling_func.cpp": "IMPL_OP_OPTILING(Other)\n"})
    d = _op(tmp_path / "foreach", "foreach_abs", {
        "op_host/foreach_abs_def.cpp": 'OP_ADD(ForeachAbs); AddConfig("ascend910b")',
        "op_host/arch22/foreach_abs_tiling_arch22.cpp": "", "op_host/arch35/foreach_abs_tiling_arch35.cpp": "",
        "op_host/CMakeLists.txt": 'set(SUPPORT_COMPUTE_UNIT "ascend910b" "ascend950")\n'
                                  'set(SUPPORT_TILING_DIR "arch22" "arch35")\n'
                                  "add_modules_sources(DIR x OPTYPE foreach_abs ACLNNTYPE aclnn "
                                  "DEPENDENCIES foreach_utils)\n"})
    p = layout.Project(d, d / "op_host", d / "op_kernel")
    assert p.a2_tiling_dir() == "arch22"
    assert [q.root for q in p.dependencies()] == [utils]
    names = [s.relative_to(tmp_path).as_posix() for s in p.host_sources]
    assert names == ["foreach/foreach_abs/op_host/arch22/foreach_abs_tiling_arch22.cpp",
                     "foreach/foreach_abs/op_host/foreach_abs_def.cpp", "foreach/foreach_utils/op_host/tiling_func.cpp"]
    assert p.op_types() == ["ForeachAbs"]          # the dependency's registrations are not this folder's ops


def test_cann_layout_cpu_debug_entry(tmp_path):
    k = tmp_path / "asin_grad.cpp"
    k.write_text('#include "kernel_operator.h"\n#ifdef __CCE_KT_TEST__\n'
                 'extern "C" __global__ __aicore__ void asin_grad(GM_ADDR x) {}\n#else\n'
                 'template <typename D_T, int MODE>\n__global__ __aicore__ void asin_grad(GM_ADDR x) {}\n#endif\n')
    assert layout.entry(k, "AsinGrad") == ("asin_grad", False)
    k.write_text('template <typename D_T>\n__global__ __aicore__ void asin_grad(GM_ADDR x) {}\n'
                 '#ifndef __CCE_KT_TEST__\nextern "C" __global__ __aicore__ void other(GM_ADDR x) {}\n#endif\n')
    assert layout.entry(k, "AsinGrad") == ("asin_grad", True)


def test_cann_layout_sibling_kernel_folders_staged(tmp_path):
    _op(tmp_path / "conversion", "diag_flat", {"op_kernel/diag_flat_nd_to_2d.h": '#include "../common_x/c.h"\n'})
    _op(tmp_path / "common_dir", "common_x", {"op_kernel/c.h": "\n"})
    d = _op(tmp_path / "conversion", "diag_v2", {"op_kernel/diag_v2.cpp": '#include "../diag_flat/diag_flat_nd_to_2d.h"\n'})
    inc = libs.staged_siblings(d, d / "op_kernel", tmp_path, tmp_path / "work")
    assert len(inc) == 1
    assert (inc[0] / ".." / "diag_flat" / "diag_flat_nd_to_2d.h").is_file()   # how g++ tries it
    assert (inc[0] / ".." / "common_x" / "c.h").is_file()                     # transitively, found in the repository
    lone = _op(tmp_path / "x", "lone", {"op_kernel/lone.cpp": '#include "lone.h"\n'})
    assert libs.staged_siblings(lone, lone / "op_kernel", tmp_path, tmp_path / "w2") == []


def test_cann_layout_template_table_the_kernel_reaches(tmp_path):
    d = _op(tmp_path / "math", "bar", {
        "op_kernel/a_other_tiling_key.h": "ASCENDC_TPL_ARGS_DECL(Other, ...)\n",
        "op_kernel/bar_tiling_key.h": "ASCENDC_TPL_ARGS_DECL(Bar, ...)\n",
        "op_kernel/bar.h": '#include "bar_tiling_key.h"\n',
        "op_kernel/bar.cpp": '#include "bar.h"\n'})
    p = layout.Project(d, d / "op_host", d / "op_kernel")
    heads = instances.tpl_headers(p)
    assert [h.name for h in heads] == ["a_other_tiling_key.h", "bar_tiling_key.h"]
    reached = instances._included(d / "op_kernel" / "bar.cpp", d / "op_kernel")
    assert [h.name for h in reached] == ["bar.h", "bar_tiling_key.h"]
