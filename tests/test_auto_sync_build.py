"""The auto-sync switch of `opkit build` (issue 39): op.yaml `auto_sync: false` and `opkit build --no-auto-sync`
build a kernel as CANN's `--cce-auto-sync=off` would (OPKIT_EMU_NO_AUTO_SYNC, opkit_emu/hazard.h), so the
missing-sync rule applies to the scalar unit: a kernel that reads a vector result with GetValue without a V->S
sync is pipe-race there, and passes under CANN's default `--cce-auto-sync=on` (asc-devkit 同步控制/核内同步/
关键特性说明.md, table 3). The default stays on."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from opkit.emulator.abi import KernelModule
from opkit.emulator.modules import compile_module
from opkit.errors import EmulatorError, SpecError
from opkit.opinfo import describe, to_cmake
from opkit.opspec import load_spec
from opkit.toolchain.tools import ninja_exe
from test_build import ROWSUM_KERNEL, ROWSUM_TILING, ROWSUM_YAML, write_op
from test_cmake import _workspace_configure

# The planted kernel: Exp on the vector pipe, then the scalar unit reads its result with no V->S flag.
PLANTED = """\
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void forgets_v_to_s(GM_ADDR x, GM_ADDR y) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 2 * 256 * sizeof(float));
  LocalTensor<float> t = b.Get<float>(), u = t[256];
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x, 256);
  gy.SetGlobalBuffer((__gm__ float*)y, 256);
  DataCopy(t, gx, 256);
  PipeBarrier<PIPE_ALL>();
  Exp(u, t, 256);
  float first = u.GetValue(0);  // PLANTED:read -- needs SetFlag/WaitFlag<HardEvent::V_S> under auto-sync off
  Duplicate(t, first, 256);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, t, 256);
}
"""


def _run(tmp_path, defines):
    k = tmp_path / "planted.cpp"
    k.write_text(PLANTED)
    mod = KernelModule(compile_module(k, "forgets_v_to_s", 2, tmp_path / "mods", defines=defines, opt="-O1"))
    x = np.linspace(0, 1, 256, dtype=np.float32)
    y = np.zeros(256, np.float32)
    mod.launch([x, y], 1)
    return y


def test_planted_missing_v_to_s_sync_passes_with_auto_sync_and_fails_without(tmp_path):
    assert _run(tmp_path, {})[5] == pytest.approx(1.0)                     # CANN's default: the compiler syncs
    with pytest.raises(EmulatorError) as e:
        _run(tmp_path, {"OPKIT_EMU_NO_AUTO_SYNC": "1"})
    line = next(i for i, t in enumerate(PLANTED.splitlines(), 1) if "PLANTED:read" in t)
    assert (e.value.rule, e.value.call, e.value.line) == ("pipe-race", "LocalTensor::GetValue", line), e.value
    assert "V_S" in e.value.detail


def test_op_yaml_key(tmp_path):
    d = write_op(tmp_path / "ws", "row_sum", ROWSUM_YAML, ROWSUM_TILING, ROWSUM_KERNEL)
    assert load_spec(d).auto_sync is True and "set(OPKIT_OP_AUTO_SYNC ON)" in to_cmake(describe(d))
    (d / "op.yaml").write_text(ROWSUM_YAML + "auto_sync: false\n")
    assert load_spec(d).auto_sync is False and "set(OPKIT_OP_AUTO_SYNC OFF)" in to_cmake(describe(d))
    (d / "op.yaml").write_text(ROWSUM_YAML + "auto_sync: sometimes\n")
    with pytest.raises(SpecError, match="auto_sync.*expected true"):
        load_spec(d)


def _compile_commands(tmp_path, *extra):
    proc = _workspace_configure(tmp_path, [tmp_path / "ws" / "ops" / "row_sum"], *extra)
    assert proc.returncode == 0, proc.stderr
    return subprocess.run([ninja_exe(), "-C", str(tmp_path / "cmk"), "-t", "commands", "row_sum__kernel_fp32"],
                          capture_output=True, text=True).stdout


@pytest.mark.parametrize("how", ["default", "op.yaml", "opkit build --no-auto-sync"])
def test_the_build_defines_it(tmp_path, how):
    d = write_op(tmp_path / "ws", "row_sum", ROWSUM_YAML, ROWSUM_TILING, ROWSUM_KERNEL)
    if how == "op.yaml":
        (d / "op.yaml").write_text(ROWSUM_YAML + "auto_sync: false\n")
    extra = ("-DOPKIT_EMU_AUTO_SYNC=OFF",) if how.startswith("opkit build") else ()
    commands = _compile_commands(tmp_path, *extra).splitlines()
    kernel_compile = [c for c in commands if re.search(r" -c \S*kernel_module\.cpp(\s|$)", c)]
    assert kernel_compile
    assert all(("-DOPKIT_EMU_NO_AUTO_SYNC" in c) == (how != "default") for c in kernel_compile)
    assert all("-DOPKIT_EMU_RUNTIME_EXTERN" in c for c in kernel_compile)
    # the runtime object the module links is compiled for the same flavour (config.h OPKIT_EMU_RT_FLAVOUR makes a
    # mismatch a link error; this is the build choosing the right one)
    runtime_compile = [c for c in commands if re.search(r" -c \S*emulator_runtime\.cpp(\s|$)", c)]
    assert len(runtime_compile) == 1
    assert "-DOPKIT_EMU_RUNTIME_IMPL" in runtime_compile[0]
    assert ("-DOPKIT_EMU_NO_AUTO_SYNC" in runtime_compile[0]) == (how != "default")
    assert ("_nosync" in runtime_compile[0]) == (how != "default")


def test_cli_option_reaches_the_configure(monkeypatch, tmp_path):
    from opkit.toolchain import cmake_project
    seen = []
    monkeypatch.setattr(cmake_project, "run_tool", lambda cmd, **k: (seen.append(cmd), (1, "stop"))[1])
    for auto_sync in (True, False):
        with pytest.raises(Exception):
            cmake_project.configure(tmp_path / f"t{auto_sync}", tmp_path, [], auto_sync=auto_sync)
    assert [next(a for a in c if a.startswith("-DOPKIT_EMU_AUTO_SYNC=")) for c in seen] == \
        ["-DOPKIT_EMU_AUTO_SYNC=ON", "-DOPKIT_EMU_AUTO_SYNC=OFF"]
    from opkit.cli.app import cli
    build = cli.commands["build"]
    assert any("--no-auto-sync" in p.opts for p in build.params)
