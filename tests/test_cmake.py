"""The top-level CMake project (CMakeLists.txt, cmake/, CMakePresets.json) and its bad-input behaviour.

`cmake --preset cpu` configures every bundled op with no Python step of the user's; a broken op folder
fails the configure naming the op and its file:line; with OPKIT_KEEP_GOING the broken op fails its own
target at build time while the other ops build (`opkit build -k` uses it too)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from opkit import emulator
from opkit.toolchain.tools import cmake_exe, ninja_exe
from test_build import ROWSUM_KERNEL, ROWSUM_TILING, ROWSUM_YAML, write_op

ROOT = Path(__file__).resolve().parents[1]


def _cmake(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([cmake_exe(), *args], cwd=cwd, capture_output=True, text=True)


def _workspace_configure(tmp_path: Path, op_dirs: list[Path], *extra: str) -> subprocess.CompletedProcess:
    return _cmake("-S", str(ROOT / "cmake" / "workspace"), "-B", str(tmp_path / "cmk"), "-G", "Ninja",
                  f"-DCMAKE_MAKE_PROGRAM={ninja_exe()}", f"-DPython3_EXECUTABLE={sys.executable}",
                  f"-DOPKIT_OUTPUT_DIR={tmp_path / 'out'}", f"-DOPKIT_OP_DIRS={';'.join(map(str, op_dirs))}", *extra)


def test_emulator_definitions_match_the_python_side():
    text = (ROOT / "cmake" / "opkit_emulator.cmake").read_text()
    for profile, cond in (("ascend310p", 'if(OPKIT_CHIP STREQUAL "ascend310p")'), ("ascend910b", "else()")):
        block = text.split(cond, 1)[1]
        got = re.search(r"set\(OPKIT_EMULATOR_DEFINES ([^)]*)\)", block).group(1).split()
        assert sorted(got) == sorted(f.removeprefix("-D") for f in emulator.defines(profile)), profile


def test_presets_name_cpu_and_npu():
    presets = json.loads((ROOT / "CMakePresets.json").read_text())
    names = {p["name"]: p for p in presets["configurePresets"]}
    assert names["cpu"]["cacheVariables"]["OPKIT_TARGET"] == "cpu"
    assert names["npu"]["cacheVariables"]["OPKIT_TARGET"] == "npu"
    assert {b["name"] for b in presets["buildPresets"]} == {"cpu", "npu"}


def test_cpu_preset_configures_every_bundled_op(tmp_path):
    binary = tmp_path / "preset"
    proc = _cmake("--preset", "cpu", "-B", str(binary), f"-DPython3_EXECUTABLE={sys.executable}",
                  f"-DCMAKE_MAKE_PROGRAM={ninja_exe()}", f"-DOPKIT_OUTPUT_DIR={tmp_path / 'out'}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    targets = subprocess.run([ninja_exe(), "-C", str(binary), "-t", "targets", "all"], capture_output=True,
                             text=True).stdout
    ops = sorted(p.name for p in (ROOT / "ops").iterdir() if (p / "op.yaml").is_file())
    assert len(ops) >= 16
    for op in ops:
        assert f"opkit_{op}:" in targets, op
        assert f"kernel_fp32.so" in targets
    assert re.search(r"_opkit_torch\S*\.so", targets), "the torch-side library is a target of the project"


def test_broken_op_yaml_fails_the_configure_naming_the_op_and_line(tmp_path):
    good = write_op(tmp_path / "ws", "row_sum", ROWSUM_YAML, ROWSUM_TILING, ROWSUM_KERNEL)
    bad = write_op(tmp_path / "ws", "bad_op", ROWSUM_YAML.replace("op: RowSum", "op: BadOp")
                   .replace("dtypes: [float32]", "dtypes: [float33]"), ROWSUM_TILING, ROWSUM_KERNEL)
    proc = _workspace_configure(tmp_path, [good, bad])
    assert proc.returncode != 0
    err = proc.stderr
    assert f"opkit: op bad_op: {bad / 'op.yaml'}:5" in err, err
    assert "float33" in err
    assert "broken op folder(s): bad_op" in err


def test_missing_kernel_fails_naming_the_file(tmp_path):
    bad = write_op(tmp_path / "ws", "row_sum", ROWSUM_YAML, ROWSUM_TILING, ROWSUM_KERNEL)
    (bad / "kernel.cpp").unlink()
    proc = _workspace_configure(tmp_path, [bad])
    assert proc.returncode != 0
    assert f"opkit: op row_sum: {bad / 'kernel.cpp'}: missing ({bad / 'op.yaml'}:1" in proc.stderr, proc.stderr


@pytest.mark.slow
def test_keep_going_builds_the_others_and_fails_the_broken_one(tmp_path):
    good = write_op(tmp_path / "ws", "row_sum", ROWSUM_YAML, ROWSUM_TILING, ROWSUM_KERNEL)
    bad = write_op(tmp_path / "ws", "bad_op", ROWSUM_YAML.replace("op: RowSum", "op: BadOp")
                   .replace("dtypes: [float32]", "dtypes: [float33]"), ROWSUM_TILING, ROWSUM_KERNEL)
    proc = _workspace_configure(tmp_path, [good, bad], "-DOPKIT_KEEP_GOING=ON")
    assert proc.returncode == 0, proc.stderr
    assert "op bad_op is broken" in proc.stderr
    build = subprocess.run([ninja_exe(), "-C", str(tmp_path / "cmk"), "-k", "0", "-j2"], capture_output=True, text=True)
    assert build.returncode != 0
    assert f"opkit: op bad_op: {bad / 'op.yaml'}:5" in build.stdout, build.stdout[-3000:]
    assert (tmp_path / "out" / "row_sum" / "kernel_fp32.so").is_file()
    assert not (tmp_path / "out" / "row_sum" / "kernel_fp32_naive.so").exists()   # fp32 naive: on demand only
    shutil.rmtree(tmp_path / "cmk")


def test_build_tree_of_another_opkit_source_is_reconfigured(tmp_path):
    """The cache folder is keyed by opkit's version and sources, so two checkouts (or an older layout) can share
    a build tree; CMake refuses a tree made from another source folder, so the driver drops that cache."""
    from opkit.toolchain.cmake_project import configure
    op = write_op(tmp_path / "ws", "row_sum", ROWSUM_YAML, ROWSUM_TILING, ROWSUM_KERNEL)
    tree = tmp_path / "cmk"
    configure(tree, tmp_path / "out", [str(op)])
    cache = tree / "CMakeCache.txt"
    home = str((ROOT / "cmake" / "workspace").resolve())
    assert f"CMAKE_HOME_DIRECTORY:INTERNAL={home}" in cache.read_text()
    other = tmp_path / "old-checkout"
    other.mkdir()
    cache.write_text(cache.read_text().replace(home, str(other)))    # as if another checkout made this tree
    (tree / "opkit-configure.json").unlink()
    stale = _cmake("-S", home, "-B", str(tree))
    assert stale.returncode != 0 and "does not match the source" in stale.stderr   # what users saw before
    configure(tree, tmp_path / "out", [str(op)])
    assert f"CMAKE_HOME_DIRECTORY:INTERNAL={home}" in cache.read_text()


def test_emulator_runtime_off_builds_header_only_modules(tmp_path):
    """-DOPKIT_EMULATOR_RUNTIME=OFF: no runtime object, modules compiled header-only (every runtime function in the
    module), and such a module builds. One module, no PCH, to keep it cheap."""
    op = write_op(tmp_path / "ws", "row_sum", ROWSUM_YAML, ROWSUM_TILING, ROWSUM_KERNEL)
    proc = _workspace_configure(tmp_path, [op], "-DOPKIT_EMULATOR_RUNTIME=OFF", "-DOPKIT_EMULATOR_PCH=OFF")
    assert proc.returncode == 0, proc.stderr
    target = "row_sum__kernel_fp32"
    commands = subprocess.run([ninja_exe(), "-C", str(tmp_path / "cmk"), "-t", "commands", target],
                              capture_output=True, text=True, check=True).stdout
    assert "kernel_module.cpp" in commands
    assert "emulator_runtime.cpp" not in commands and "OPKIT_EMU_RUNTIME" not in commands
    build = subprocess.run([ninja_exe(), "-C", str(tmp_path / "cmk"), target], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-4000:]
    so = tmp_path / "out" / "row_sum" / "kernel_fp32.so"
    syms = subprocess.run(["nm", "-C", str(so)], capture_output=True, text=True, check=True).stdout
    assert re.search(r" [tTW] opkit_emu::run_blocks_fn\(", syms), "run_blocks_fn is not compiled into the module"
    assert "opkit_emu_runtime_flavour" not in syms


def test_an_ops_o2_modules_are_declared_before_its_naive_ones(tmp_path):
    """Ninja (>= 1.12) starts ready edges of equal critical-path length (counted in edges) in the order build.ninja
    declares them: an op's -O2 kernel modules, the longest compiles, come before its -O1 naive ones, so after a
    kernel.cpp edit the short compiles fill the last slots (issue 38 item 3). LayerNormFP32 lists fp32, its longest,
    last: declared per dtype (fp16, fp16_naive, bf16, ...) it started alone at the end."""
    proc = _workspace_configure(tmp_path, [ROOT / "ops" / "layer_norm_fp32"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ninja = (tmp_path / "cmk" / "build.ninja").read_text()
    compiles = re.findall(r"^build CMakeFiles/layer_norm_fp32__kernel_(\w+?)\.dir/\S*kernel_module\.cpp\.o:", ninja,
                          re.M)
    assert sorted(compiles) == ["bf16", "bf16_naive", "fp16", "fp16_naive", "fp32", "fp32_naive"], compiles
    assert compiles == sorted(compiles, key=lambda t: t.endswith("_naive")), compiles
