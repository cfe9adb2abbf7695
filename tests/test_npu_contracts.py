"""`--check-only` mirror checks (opkit/targets/npu/contracts.py): each passes on what opkit generates and
fails, naming the CANN step and the asc-devkit source it mirrors, when that one point is broken on purpose.
No torch_npu needed: only CMake and the C++ compiler run (~15 s)."""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from opkit.errors import BuildError
from opkit.targets.npu import builder, cann, contracts, glue
from opkit.toolchain.tools import cmake_exe
from opkit.workspace import emulator_include_dir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_npu_glue import make_op  # noqa: E402


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """Two hand-built ops rendered for --target npu --check-only --package (no compile)."""
    tmp = tmp_path_factory.mktemp("contracts")
    specs = [make_op(tmp / "ops"), make_op(tmp / "ops", "NpuTestSoftmax", "npu_test_softmax", reduce=False)]
    builder.build(specs, tmp / "build", check_only=True, compile=False, package=True)
    return tmp, specs, [glue.op_glue(s) for s in specs]


def _copy_project(rendered, tmp_path) -> Path:
    root, *_ = rendered
    return Path(shutil.copytree(root / "build" / "package", tmp_path / "package"))


def test_all_checks_pass_on_what_opkit_generates(rendered):
    root, _, glues = rendered
    n = contracts.run_all(glues, work=root / "work", cxx="g++", cmake=cmake_exe(), generator=cann.CMAKE_GENERATOR,
                          prelude=root / "build" / "src" / glue.PRELUDE, emulator_include=emulator_include_dir(),
                          project=root / "build" / "package", jobs=2)
    assert n == 1 + 6 + 1 + 4 + 2     # generator, 2 ops x 3 dtypes, compute unit, 2 x 2 op_host, 2 tiling


def test_ninja_breaks_extract_host_stub_lookup(rendered, tmp_path):
    _, specs, _ = rendered
    kernels = [Path(s.kernel_file) for s in specs]
    contracts.check_generator("Unix Makefiles", kernels, tmp_path / "make", cmake_exe())
    with pytest.raises(BuildError, match=r"(?s)extract_host_stub\.py:1566-1598,1857.*'Ninja'.*/\./.*KeyError"):
        contracts.check_generator("Ninja", kernels, tmp_path / "ninja", cmake_exe())


def test_soc_name_as_compute_unit_is_refused(rendered, tmp_path):
    project = _copy_project(rendered, tmp_path)
    contracts.check_compute_unit(project)
    presets = json.loads((project / "CMakePresets.json").read_text())
    assert presets["cacheVariables"]["ASCEND_COMPUTE_UNIT"] == "ascend910b"
    presets["cacheVariables"]["ASCEND_COMPUTE_UNIT"] = "ascend910b1"      # the old bug: the SoC, not its family
    (project / "CMakePresets.json").write_text(json.dumps(presets))
    with pytest.raises(BuildError, match=r"(?s)fwk_modules/config\.cmake:56-67.*ascend910b1"):
        contracts.check_compute_unit(project)


@pytest.mark.parametrize("breakage", ["opkit_header_outside_the_guard", "cxx17_outside_the_guard"])
def test_raw_op_host_compile_is_cxx11_and_flat(rendered, tmp_path, breakage):
    project = _copy_project(rendered, tmp_path)
    src = project / "op_host" / "npu_test_softmax.cpp"
    cmds = [c for c in contracts.op_host_commands(project, "g++") if c[2] == src]
    assert [c[1] for c in cmds] == [contracts.OP_HOST, contracts.OP_HOST_LIB]
    for c in cmds:
        contracts.check_compile(*c)
    text = src.read_text()
    if breakage == "opkit_header_outside_the_guard":     # the old op_host: opkit's headers in the raw compile
        text = text.replace('#include "register/op_def_registry.h"',
                            '#include "register/op_def_registry.h"\n#include "opkit/tiling.h"', 1)
    else:                                               # C++17 the raw compile (-std=c++11) cannot read
        text = text.replace("namespace ge {", "#include <string_view>\nnamespace ge {\n"
                            "static const std::string_view kOp = \"x\";", 1)
    src.write_text(text)
    with pytest.raises(BuildError, match=r"(?s)raw op_host compile.*compile_ascendc_all_ops_so\.py:97-104"):
        contracts.check_compile(*cmds[0])


def test_kernel_without_tiling_registration_is_refused(rendered, tmp_path):
    _, specs, _ = rendered
    project = _copy_project(rendered, tmp_path)
    kernel = project / "op_kernel" / "npu_test_softmax.cpp"
    assert "REGISTER_TILING_DEFAULT(NpuTestSoftmaxTilingData);" in kernel.read_text()
    contracts.check_tiling_registration(project, specs[1], "g++", emulator_include_dir())
    kernel.write_text(kernel.read_text().replace("REGISTER_TILING_DEFAULT(NpuTestSoftmaxTilingData);", ""))
    with pytest.raises(BuildError, match=r"(?s)kernel_info_infer\.py:136-161.*none; expected "
                                         r"REGISTER_TILING_DEFAULT\(NpuTestSoftmaxTilingData\)"):
        contracts.check_tiling_registration(project, specs[1], "g++", emulator_include_dir())


def test_registration_reader_skips_cann_headers_and_sees_none_tiling():
    own = '# 1 "/ops/x/kernel.cpp"\nauto __enable_custom_tiling XTilingData = default;\n'
    cann = '# 1 "/cann/tikcpp/tikcfw/kernel_operator.h"\nauto __enable_custom_tiling Other = default;\n'
    assert contracts.registered_tiling(own + cann) == ({"XTilingData"}, False)
    none = '# 1 "/ops/x/kernel.cpp"\nauto __enable_no_register_custom_tiling ascendc_trigger_tiling_struct = default;\n'
    assert contracts.registered_tiling(none) == (set(), True)


def test_launcher_name_and_arity_follow_the_preprocessed_kernel(rendered):
    root, specs, glues = rendered
    g = glues[1]
    prelude = root / "build" / "src" / glue.PRELUDE
    for v in g.variants:
        contracts.check_launch_header(g, v, "g++", prelude, emulator_include_dir())
    v = g.variants[0]
    no_rename = glue.DtypeVariant(v.dtype, v.tag, v.at, v.launch, v.target, v.defines[1:])   # entry not renamed
    with pytest.raises(BuildError, match=r"(?s)constants\.py:16-22.*CANN would generate "
                                         r"aclrtlaunch_npu_test_softmax\(4 args\); the binding calls "
                                         r"aclrtlaunch_npu_test_softmax_fp16"):
        contracts.check_launch_header(g, no_rename, "g++", prelude, emulator_include_dir())
    kernel = Path(specs[1].kernel_file)
    kernel.write_text(kernel.read_text().replace("GM_ADDR y,", "GM_ADDR y, GM_ADDR extra,"))
    try:
        with pytest.raises(BuildError, match=r"aclrtlaunch_npu_test_softmax_fp16\(5 args\).*with 4 arguments"):
            contracts.check_launch_header(g, v, "g++", prelude, emulator_include_dir())
    finally:
        kernel.write_text(kernel.read_text().replace("GM_ADDR y, GM_ADDR extra,", "GM_ADDR y,"))


def test_check_only_names_the_step_through_the_build(rendered, tmp_path):
    """Through `builder.build(check_only=True)`: a broken package kernel fails the build before any compile
    of the binding (so no torch_npu wheel is needed to see it)."""
    root, specs, _ = rendered
    bad = make_op(tmp_path / "ops", "NpuTestSoftmax", "npu_test_softmax", reduce=False)
    Path(bad.kernel_file).write_text(Path(bad.kernel_file).read_text().replace("GM_ADDR y,", "GM_ADDR y, GM_ADDR z,"))
    with pytest.raises(BuildError, match=r"aclrtlaunch_<kernel>\.h would fail on a CANN machine"):
        builder.build([bad], tmp_path / "build", check_only=True, package=True)


def _old_op_host(files_of):
    """project_files as before the fix: opkit's header included where the raw C++11 compile reads it."""
    def wrapped(specs, project, settings):
        files = files_of(specs, project, settings)
        for path in files:
            if path.parent.name == "op_host" and path.suffix == ".cpp":
                files[path] = '#include "opkit/tiling.h"\n' + files[path]
        return files
    return wrapped


@pytest.mark.parametrize("point", ["ninja", "soc_as_compute_unit", "op_host_headers", "no_tiling_registration"])
def test_each_of_the_four_points_broken_fails_the_check_only_build(tmp_path, monkeypatch, point):
    """The four breakages of issue 11 put back into opkit's own code: `--check-only --package` fails, naming
    the CANN step and source, before the binding is compiled."""
    from opkit.targets.npu import package
    spec = make_op(tmp_path / "ops", "NpuTestSoftmax", "npu_test_softmax", reduce=False)
    expect = {"ninja": r"function\.cmake:103.*'Ninja'",
              "soc_as_compute_unit": r"config\.cmake:56-67.*ascend910b3",
              "op_host_headers": r"compile_ascendc_all_ops_so\.py:97-104.*opkit/tiling\.h",
              "no_tiling_registration": r"kernel_info_infer\.py:136-161.*REGISTER_TILING_DEFAULT"}[point]
    if point == "ninja":
        monkeypatch.setattr(cann, "CMAKE_GENERATOR", "Ninja")
    elif point == "soc_as_compute_unit":
        real = cann.soc_info
        monkeypatch.setattr(cann, "soc_info", lambda soc, root=None: cann.Soc(
            soc, soc.lower(), real(soc).profile, real(soc).vector_cores, real(soc).arch))
    elif point == "op_host_headers":
        monkeypatch.setattr(package, "project_files", _old_op_host(package.project_files))
    else:
        monkeypatch.setattr(package, "_REGISTERED", re.compile(r"."))     # "already registered": nothing added
    with pytest.raises(BuildError, match="(?s)would fail on a CANN machine.*" + expect):
        builder.build([spec], tmp_path / "build", check_only=True, package=True, soc="Ascend910B3")


def test_op_host_library_forced_to_cxx11_fails_loudly(rendered, tmp_path):
    """If an op project forced an older -std on the op_host library, the TilingFunc would compile to the
    raw compile's stub: op_host/<op>.cpp refuses to build that way instead."""
    project = _copy_project(rendered, tmp_path)
    src = project / "op_host" / "npu_test_softmax.cpp"
    cmd = next(c for c in contracts.op_host_commands(project, "g++") if c[2] == src and c[1] is contracts.OP_HOST_LIB)
    contracts.check_compile(*cmd)
    with pytest.raises(BuildError, match="must be compiled as C\\+\\+17"):
        contracts.check_compile([*cmd[0][:-1], "-std=c++11", cmd[0][-1]], cmd[1], cmd[2])
