"""CANN's shared libraries on an ops-math / ops-nn op's paths (python/opkit/cannproject/libs.py) and opkit's stand-in
of opbase's log header (include/opkit_cann/log.h). The fixture is generated here, no mirror needed: a repository
laid out as ops-math (cmake/, common/inc/) holding the ScaleShift example (examples/cann/opsmath) whose tiling now
logs through `log/log.h`, calls a host function of an opbase-like checkout (header + source, linked in as CANN's
build links opbase's op_host sources) and a repository header from common/inc, and whose kernel includes a
header of the opbase kernel library (pkg_inc/op_common/atvoss/). The real repositories run in the opt-in
tests/test_cann_mirrors.py."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from opkit.cannproject import layout
from opkit.cannproject.op import CannOp
from opkit.errors import OpkitError

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cann" / "opsmath"

TILING_HEAD = """#include "log/log.h"
#include "op_host/util/half_count.h"
#include "op_host/repo_rule.h"
"""
TILING_CHECKS = """    OP_LOGI("ScaleShift tiling");
    OP_LOGD(context, "dtype %d", static_cast<int>(context->GetInputDesc(0)->GetDataType()));
    OP_CHECK_NULL_WITH_CONTEXT(context, context->GetInputShape(0));
    OP_CHECK_IF(context->GetInputShape(0)->GetStorageShape().GetDim(0) == 7,
                OP_LOGE(context, "a leading dim of %d is refused", 7), return ge::GRAPH_FAILED);
    OP_CHECK_IF(Ops::Base::HalfCount(8) != opkit_test::kRepoFour, OP_LOGE(context, "library mismatch"),
                return ge::GRAPH_FAILED);
"""


def _make(tmp_path: Path, with_opbase: bool = True) -> Path:
    repo = tmp_path / "ops-fake"
    (repo / "cmake").mkdir(parents=True)
    (repo / "common" / "inc" / "op_host").mkdir(parents=True)
    (repo / "common" / "inc" / "op_host" / "repo_rule.h").write_text(
        "#pragma once\nnamespace opkit_test { constexpr int64_t kRepoFour = 4; }\n")
    op = repo / "math" / "scale_shift"
    shutil.copytree(EXAMPLE, op)
    tiling = op / "op_host" / "scale_shift_tiling.cpp"
    text = tiling.read_text()
    text = text.replace('#include "register/op_impl_registry.h"\n',
                        '#include "register/op_impl_registry.h"\n' + TILING_HEAD, 1)
    text = text.replace("    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());\n",
                        TILING_CHECKS + "    auto platform = platform_ascendc::PlatformAscendC("
                        "context->GetPlatformInfo());\n", 1)
    tiling.write_text(text)
    kernel = op / "op_kernel" / "scale_shift.cpp"
    kernel.write_text(kernel.read_text().replace('#include "scale_shift.h"\n',
                                                 '#include "atvoss/kernel_rule.h"\n#include "scale_shift.h"\n', 1)
                      .replace("    op.Process();\n", "    static_assert(opkit_test::kKernelRule == 1);\n"
                               "    op.Process();\n", 1))
    if with_opbase:
        ob = tmp_path / "opbase"
        util = ob / "include" / "op_common" / "op_host" / "util"
        util.mkdir(parents=True)
        (util / "opbase_export.h").write_text("#pragma once\n")
        (util / "half_count.h").write_text("#pragma once\n#include <cstdint>\nnamespace Ops { namespace Base {\n"
                                           "int64_t HalfCount(int64_t n);\n} }\n")
        src = ob / "src" / "op_common" / "op_host"
        src.mkdir(parents=True)
        (src / "half_count.cpp").write_text('#include "op_host/util/half_count.h"\nnamespace Ops { namespace Base {\n'
                                            "int64_t HalfCount(int64_t n) { return n / 2; }\n} }\n")
        atvoss = ob / "pkg_inc" / "op_common" / "atvoss"
        atvoss.mkdir(parents=True)
        (atvoss / "kernel_rule.h").write_text("#pragma once\nnamespace opkit_test { constexpr int kKernelRule = 1; }\n")
    return op


def test_cann_libs_found_as_the_repository_build_has_them(tmp_path):
    op_dir = _make(tmp_path)
    project = layout.find(op_dir)              # opbase: the sibling checkout of the repository
    libs = project.libs
    assert libs.repo == (tmp_path / "ops-fake").resolve() and libs.opbase == (tmp_path / "opbase").resolve()
    assert libs.opbase / "include" / "op_common" in libs.host_include
    assert libs.repo / "common" / "inc" in libs.host_include
    assert [p.name for p in libs.host_sources] == ["half_count.cpp"]
    assert libs.opbase / "pkg_inc" / "op_common" in libs.kernel_include
    op = CannOp(project, "ScaleShift", tmp_path / "build")
    try:
        x = torch.randn(5, 77)
        y, = op([x], {"scale": 3.0, "shift": -1.0})
        torch.testing.assert_close(y, x * 3 - 1)
        # OP_CHECK_IF + OP_LOGE (log/log.h): the refusal and the op's own message
        with pytest.raises(OpkitError, match=r"(?s)tiling failed: TilingFunc returned GRAPH_FAILED.*its log: "
                                             r"\[ERROR\] ScaleShift:ScaleShift: a leading dim of 7 is refused"):
            op([torch.zeros(7, 8)], {"scale": 1.0, "shift": 0.0})
    finally:
        op.close()


def test_cann_libs_missing_opbase_names_the_header(tmp_path, monkeypatch):
    monkeypatch.delenv("OPKIT_CANN_OPBASE", raising=False)
    project = layout.find(_make(tmp_path, with_opbase=False))
    assert project.libs.opbase is None
    with pytest.raises(OpkitError, match=r"(?s)op_host sources do not compile.*op_host/util/half_count.h: No such file"):
        CannOp(project, "ScaleShift", tmp_path / "build")
    with pytest.raises(OpkitError, match=r"not an opbase checkout .*--opbase or OPKIT_CANN_OPBASE"):
        layout.find(_make(tmp_path / "again", with_opbase=False), opbase=tmp_path)


def test_cann_libs_a2_sources_and_kernel_file(tmp_path):
    """CANN builds op_host/*.cpp plus the archNN folder the op's CMakeLists maps ascend910b to; the kernel file is
    the opFile of the config AddConfig("ascend910b") names."""
    op_dir = _make(tmp_path)
    (op_dir / "op_host" / "arch35").mkdir()
    (op_dir / "op_host" / "arch35" / "scale_shift_tiling_arch35.cpp").write_text("#error not for A2\n")
    (op_dir / "op_host" / "arch22").mkdir()
    (op_dir / "op_host" / "arch22" / "scale_shift_tiling_arch22.cpp").write_text("// A2\n")
    (op_dir / "op_host" / "op_api").mkdir()
    (op_dir / "op_host" / "op_api" / "aclnn_scale_shift.cpp").write_text("#error aclnn, not tiling\n")
    (op_dir / "CMakeLists.txt").write_text('set(SUPPORT_COMPUTE_UNIT "ascend910b" "ascend950")\n'
                                           'set(SUPPORT_TILING_DIR "arch22" "arch35")\n')
    project = layout.find(op_dir)
    names = [p.relative_to(project.op_host).as_posix() for p in project.host_sources]
    assert "arch22/scale_shift_tiling_arch22.cpp" in names
    assert not any(n.startswith(("arch35/", "op_api/")) for n in names)
    d = op_dir / "op_host" / "scale_shift_def.cpp"
    d.write_text(d.read_text().replace(
        "    }\n};", '        OpAICoreConfig c950;\n        c950.ExtendCfgInfo("opFile.value", "scale_shift_apt");\n'
        '        this->AICore().AddConfig("ascend950", c950);\n        this->AICore().AddConfig("ascend910b");\n'
        "    }\n};", 1))
    assert 'AddConfig("ascend910b")' in d.read_text()
    (op_dir / "op_kernel" / "scale_shift_apt.cpp").write_text("// the Ascend 950 entry\n")
    assert project.kernel_file("ScaleShift").name == "scale_shift.cpp"
    assert project.a2_supported("ScaleShift") is True


def test_cann_libs_tiling_registration_in_op_kernel(tmp_path):
    """A registration kept in op_kernel/<op>_tiling_data.h that only the host code includes (ops-math
    experimental/math/is_neg_inf) is the op's tiling header; one the kernel includes itself is not (its struct is
    already in the kernel's translation unit)."""
    root = tmp_path / "p"
    (root / "op_host").mkdir(parents=True)
    (root / "op_kernel").mkdir()
    reg = "BEGIN_TILING_DATA_DEF(DemoTilingData)\nTILING_DATA_FIELD_DEF(int64_t, n);\nEND_TILING_DATA_DEF;\n"
    (root / "op_kernel" / "demo_tiling_data.h").write_text(reg)
    (root / "op_host" / "demo_tiling.cpp").write_text('#include "../op_kernel/demo_tiling_data.h"\n')
    (root / "op_kernel" / "demo.cpp").write_text('#include "kernel_operator.h"\n')
    project = layout.find(root)
    assert project.tiling_header("Demo") == root / "op_kernel" / "demo_tiling_data.h"
    (root / "op_kernel" / "demo.cpp").write_text('#include "demo_tiling_data.h"\n')
    assert project.tiling_header("Demo") is None


def test_cann_libs_kernel_view_from_the_repository(tmp_path):
    """tiling_view.view_for: an op registered in another op's header of the repository gets that struct (ops-math
    CircularPadGrad); an array size named by a constant is written as its number, so a kernel declaring the same
    constant compiles (ops-math StridedSliceAssignV2: MAX_DIM_NUM in both)."""
    import subprocess

    from opkit import emulator
    from opkit.cannproject import tiling_view
    repo = tmp_path / "repo"
    (repo / "pad" / "op_host").mkdir(parents=True)
    (repo / "pad" / "op_host" / "pad_common_tiling.h").write_text(
        "namespace optiling {\nconstexpr size_t MAX_DIM_NUM = 8;\nBEGIN_TILING_DATA_DEF(PadCommonTilingData)\n"
        "TILING_DATA_FIELD_DEF_ARR(int64_t, MAX_DIM_NUM, dims);\nEND_TILING_DATA_DEF;\n"
        "REGISTER_TILING_DATA_CLASS(Pad, PadCommonTilingData)\nREGISTER_TILING_DATA_CLASS(PadGrad, PadCommonTilingData)\n}\n")
    view = tiling_view.view_for("PadGrad", None, repo)
    assert view is not None and "TILING_DATA_FIELD_DEF_ARR(int64_t, 8, dims)" in view
    assert tiling_view.view_for("Unregistered", None, repo) is None
    (tmp_path / "view.h").write_text(view)
    kernel = tmp_path / "k.cpp"
    kernel.write_text('#include "kernel_operator.h"\n#include "view.h"\nconstexpr uint32_t MAX_DIM_NUM = 8;\n'
                      "extern \"C\" __global__ __aicore__ void pad_grad(GM_ADDR t) {\n"
                      "    GET_TILING_DATA(d, t);\n    int64_t idx[MAX_DIM_NUM];\n"
                      "    static_assert(sizeof(d.dims) == 8 * sizeof(int64_t));\n    (void)idx;\n}\n")
    r = subprocess.run(["g++", "-fsyntax-only", "-w", *emulator.cflags(), "-DOPKIT_CANN_OP_TYPE=PadGrad",
                        f"-I{tmp_path}", str(kernel)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_cann_platform_ub_size_as_cann_reports_it(tmp_path):
    """GetCoreMemSize(UB / L1) on the 910B is the ini's size less the 256 bytes CANN keeps for the KFC server
    (asc-devkit@82b89a15 impl/utils/tiling/platform/platform_ascendc.cpp:27, :149-159), less ReserveLocalMemory's."""
    import subprocess
    src = tmp_path / "ub.cpp"
    src.write_text('#include "opkit_cann/host.h"\n#include <cstdio>\nint main() {\n  fe::PlatFormInfos info;\n'
                   "  platform_ascendc::PlatformAscendC p(&info);\n  uint64_t ub = 0, l1 = 0, ub8 = 0;\n"
                   "  p.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);\n"
                   "  p.GetCoreMemSize(platform_ascendc::CoreMemType::L1, l1);\n"
                   "  p.ReserveLocalMemory(platform_ascendc::ReservedSize::RESERVED_SIZE_8K);\n"
                   "  p.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub8);\n"
                   "  static_assert(ge::FORMAT_C1HWNCoC0 == 25 && ge::FORMAT_HWCN == 16, \"CANN's ge::Format values\");\n"
                   "  if (ge::GetSizeInBytes(5, ge::DT_FLOAT16) != 10 || ge::GetSizeInBytes(5, ge::DT_INT4) != 3) return 1;\n"
                   "  info.soc_kind = 0;  // ASCEND910: no KFC reservation\n  uint64_t ub910 = 0;\n"
                   "  p.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub910);\n"
                   '  std::printf("%llu %llu %llu %llu", (unsigned long long)ub, (unsigned long long)l1,\n'
                   "              (unsigned long long)ub8, (unsigned long long)ub910);\n}\n")
    exe = tmp_path / "ub"
    from opkit.cannproject.host import INCLUDE
    from opkit.emulator import host_include_dir
    subprocess.run(["g++", "-std=c++17", f"-I{INCLUDE}", f"-I{host_include_dir()}", str(src), "-o", str(exe)],
                   check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    assert [int(v) for v in out] == [196608 - 256, 524288 - 256, 196608 - 256 - 8192, 196608 - 8192]


def test_cann_tiling_registrar_with_max_tiling_data_size(tmp_path):
    """IMPL_OP_OPTILING(op).Tiling(f, size).InputsDataDependency({...}): CANN's overload naming the tiling buffer's
    capacity, and the inputs whose data the host code reads, recorded for the runner to report as value_depend
    (ops-nn@e5c3fa93 experimental/foreach/foreach_div_scalar/op_host/foreach_div_scalar_tiling.cpp:166-169)."""
    import subprocess
    from opkit.cannproject.host import INCLUDE
    from opkit.emulator import host_include_dir
    src = tmp_path / "reg.cpp"
    src.write_text('#include "register/op_impl_registry.h"\n#include <cstdio>\nnamespace optiling {\n'
                   "static ge::graphStatus F(gert::TilingContext*) { return ge::GRAPH_SUCCESS; }\n"
                   "IMPL_OP_OPTILING(Probe).Tiling(F, 4096).InputsDataDependency({1, 2});\n}\n"
                   'int main() { auto& d = opkit_cann::impl_data_deps()["Probe"];\n'
                   '  std::printf("%d %d %d %d", (int)opkit_cann::impl_tiling().count("Probe"), (int)d.size(), d[0], d[1]); }\n')
    exe = tmp_path / "reg"
    r = subprocess.run(["g++", "-std=c++17", f"-I{INCLUDE}", f"-I{host_include_dir()}", str(src), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout == "1 2 1 2"
