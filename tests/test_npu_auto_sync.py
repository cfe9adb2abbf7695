"""The NPU half of the auto-sync switch (issue 39 item 4): an op whose op.yaml says `auto_sync: false`, or every op
under `opkit build --target npu --no-auto-sync`, gets CANN's `--cce-auto-sync=off` in its kernel's compile options
(cmake/opkit_npu.cmake). Checked on the generated build: cmake/workspace configured for OPKIT_TARGET=npu against
test_npu_cmake.py's double of CANN's ascendc.cmake, which records each ascendc_compile_options call. Configure only:
no kernel or binding is compiled."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_npu_cmake import FAKE_ASCENDC_CMAKE  # noqa: E402
from test_npu_glue import REPO, make_op  # noqa: E402


def _configure(tmp_path: Path, *, no_auto_sync: bool) -> dict[str, str]:
    from opkit.targets.npu import builder, glue
    from opkit.toolchain.tools import cmake_exe
    cann = tmp_path / "cann"
    cm = cann / "compiler" / "tikcpp" / "ascendc_kernel_cmake" / "ascendc.cmake"
    cm.parent.mkdir(parents=True)
    cm.write_text(FAKE_ASCENDC_CMAKE)
    ops = tmp_path / "ops"
    synced = make_op(ops, "NpuSyncedFP32", "npu_synced_fp32", reduce=False)
    manual = make_op(ops, "NpuManualSyncFP32", "npu_manual_sync_fp32", reduce=False)
    data = yaml.safe_load((manual.dir / "op.yaml").read_text())
    data["auto_sync"] = False
    (manual.dir / "op.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    src = tmp_path / "src"
    src.mkdir()
    (src / glue.PRELUDE).write_text("#pragma once\n")
    (src / "binding.cpp").write_text("\n")
    settings = glue.Settings(soc="Ascend910B3", profile="ascend910b", vector_cores=40, torch_version_macro="V2R13",
                             host_include=builder.host_include_dir(), family="ascend910b")
    args = builder.cmake_args([synced, manual], settings, cann_root=cann, torch_dir=tmp_path, torch_npu_dir=tmp_path,
                              src=src, out_dir=tmp_path / "out", auto_sync=not no_auto_sync)
    tree = tmp_path / "tree"
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    r = subprocess.run([cmake_exe(), "-G", "Unix Makefiles", "-S", str(REPO / "cmake" / "workspace"), "-B", str(tree),
                        *args], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = (tree / "fake" / "options.txt").read_text().splitlines()
    return {t: " ".join(ln.split(": ", 1)[1] for ln in lines if ln.startswith(t + ":"))
            for t in {ln.split(":", 1)[0] for ln in lines}}


def test_npu_auto_sync_off_from_op_yaml(tmp_path):
    opts = _configure(tmp_path, no_auto_sync=False)
    manual = [t for t in opts if t.startswith("opkit_kernel_npu_manual_sync_fp32_")]
    synced = [t for t in opts if t.startswith("opkit_kernel_npu_synced_fp32_")]
    assert manual and synced, opts
    for t in manual:
        assert "--cce-auto-sync=off" in opts[t].split(), (t, opts[t])
    for t in synced:
        assert "--cce-auto-sync=off" not in opts[t], (t, opts[t])


def test_npu_auto_sync_off_for_every_kernel_from_the_build_option(tmp_path):
    opts = _configure(tmp_path, no_auto_sync=True)
    assert len(opts) >= 2
    for t, o in opts.items():
        assert "--cce-auto-sync=off" in o.split(), (t, o)


def test_npu_no_auto_sync_is_a_build_option_of_both_targets():
    from click.testing import CliRunner
    from opkit.cli.app import cli
    from opkit.cli import ops
    assert ops._OPTION_TARGET["no_auto_sync"] == {"cpu", "npu"}
    r = CliRunner().invoke(cli, ["build", "--help"])
    assert r.exit_code == 0 and r.output.count("--no-auto-sync") == 1, r.output
    with pytest.raises(Exception, match="--soc"):
        ops._split_options("cpu", {"soc": "Ascend910B3", "no_auto_sync": True})
    assert ops._split_options("npu", {"soc": None, "no_auto_sync": True, "check_only": False,
                                      "package": False}) == {"soc": None, "no_auto_sync": True,
                                                             "check_only": False, "package": False}
