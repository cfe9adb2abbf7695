"""Kernel modules are compiled for an ISA level (toolchain/isa.py: the host's level by default, OPKIT_ISA=baseline
or a named level), always with -ffp-contract=off; the level is in every cache key (issue 38 item 1). Nothing here depends on the CPU that
runs it: host levels come from given flag sets, and the build test uses baseline and x86-64-v2, which every x86-64
host CI gets (AVX2 or AVX-512) has."""
from __future__ import annotations

import json
import platform
import shlex
import subprocess

import pytest

from opkit.errors import OpkitError
from opkit.toolchain import isa
from test_build import built_ws, outputs  # noqa: F401 (session fixture)

V2 = {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3", "sse2"}
V3 = V2 | {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}
V4 = V3 | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}


@pytest.mark.parametrize("flags, want", [(set(), "x86-64"), (V2, "x86-64-v2"), (V3, "x86-64-v3"), (V4, "x86-64-v4"),
                                         (V3 - {"fma"}, "x86-64-v2"),
                                         (V2 | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"},
                                          "x86-64-v2")])
def test_host_level_is_the_highest_complete_level(flags, want):
    assert isa.host_level(flags, machine="x86_64") == want


def test_arm_hosts_build_for_armv8_a_whose_neon_is_mandatory():
    assert isa.host_level(set(), machine="aarch64") == "armv8-a"
    assert isa.level({}, machine="aarch64") == "armv8-a" and isa.flags("armv8-a", machine="aarch64") == []


def test_the_override_picks_baseline_or_a_level_not_above_the_host():
    host = dict(cpu_flags=V3, machine="x86_64")
    assert isa.level({}, **host) == "x86-64-v3"   # default: the host's level (the NaN rule keeps its bits the baseline's)
    assert isa.level({"OPKIT_ISA": "host"}, **host) == "x86-64-v3"
    assert isa.level({"OPKIT_ISA": "baseline"}, **host) == "x86-64"
    assert isa.level({"OPKIT_ISA": "x86-64-v2"}, **host) == "x86-64-v2"
    with pytest.raises(OpkitError, match=r"OPKIT_ISA=x86-64-v4: this host is x86-64-v3"):
        isa.level({"OPKIT_ISA": "x86-64-v4"}, **host)
    with pytest.raises(OpkitError, match=r"OPKIT_ISA='avx9': expected baseline, host or one of x86-64, x86-64-v2"):
        isa.level({"OPKIT_ISA": "avx9"}, **host)
    assert isa.flags("x86-64", machine="x86_64") == []          # baseline: the compiler's default, as before
    assert isa.flags("x86-64-v4", machine="x86_64") == ["-march=x86-64-v4"]


def test_the_level_is_in_the_bundled_cache_key_and_the_stamp(monkeypatch, tmp_path):
    from opkit.toolchain import cache, stamps
    from opkit.opspec import load_spec
    from opkit.workspace import bundled_ops_dir

    monkeypatch.setattr(isa, "host_level", lambda cpu_flags=None, machine=None: "x86-64-v4")
    monkeypatch.setattr(isa, "_arch", lambda machine=None: "x86_64")
    dirs = {}
    for lvl in ("baseline", "x86-64-v3", "x86-64-v4"):
        monkeypatch.setenv("OPKIT_ISA", lvl)
        dirs[lvl] = cache.bundled_cache_dir()
    assert len(set(dirs.values())) == 3, dirs
    # a build stamped at v4 is not loaded at v3 (nor at an unstamped level): "not built" -> rebuilt / refused
    spec = load_spec(bundled_ops_dir() / "layer_norm_fp32")
    out = tmp_path / spec.snake
    monkeypatch.setenv("OPKIT_ISA", "x86-64-v4")
    stamps.write_stamp(spec, out, "cpu")
    lib = out / "build.json"
    assert json.loads(lib.read_text())["isa"] == "x86-64-v4"
    assert stamps.build_state(spec, out, lib) == "built"
    monkeypatch.setenv("OPKIT_ISA", "x86-64-v3")
    assert stamps.build_state(spec, out, lib) == "not built"
    data = json.loads(lib.read_text())
    del data["isa"]                                   # a stamp from before ISA levels
    lib.write_text(json.dumps(data))
    assert stamps.build_state(spec, out, lib) == "not built"


def test_cann_project_ops_carry_no_level_their_kernels_are_not_built_at(monkeypatch, tmp_path):
    # `lang: cann` kernels are compiled at run time without -march (cannproject/kernel.py): their stamp has no
    # level, and changing OPKIT_ISA does not make them "not built" (review of iso9, M3)
    import dataclasses

    from opkit.opspec import load_spec
    from opkit.toolchain import stamps
    from opkit.workspace import bundled_ops_dir

    monkeypatch.setattr(isa, "host_level", lambda cpu_flags=None, machine=None: "x86-64-v4")
    monkeypatch.setattr(isa, "_arch", lambda machine=None: "x86_64")
    spec = dataclasses.replace(load_spec(bundled_ops_dir() / "layer_norm_fp32"), lang="cann")
    out = tmp_path / spec.snake
    monkeypatch.setenv("OPKIT_ISA", "x86-64-v4")
    stamps.write_stamp(spec, out, "cpu")
    lib = out / "build.json"
    assert "isa" not in json.loads(lib.read_text())
    for lvl in ("x86-64-v4", "x86-64-v3", "baseline"):
        monkeypatch.setenv("OPKIT_ISA", lvl)
        assert stamps.build_state(spec, out, lib) == "built", lvl


def test_standalone_and_run_time_compiles_have_no_contraction(tmp_path):
    # opkit.emulator.cflags() is what `opkit cflags`, `opkit run-asc` and CANN-project kernel modules compile with;
    # GCC contracts a*b+c into an FMA by default where the ISA has one (aarch64) (review of iso9, M3)
    from opkit import emulator
    from opkit.cannproject import asc_program

    assert "-ffp-contract=off" in emulator.cflags()
    assert "-ffp-contract=off" in emulator.cflags(profile="ascend310p")
    assert "-ffp-contract=off" in asc_program.flags(tmp_path / "demo.asc")


def _compile_lines(ws, snake: str) -> list[list[str]]:
    from opkit.toolchain.tools import ninja_exe
    cmk = ws / "build" / "opkit" / "cpu" / "_cmake"
    cmds = subprocess.run([ninja_exe(), "-C", str(cmk), "-t", "commands", f"opkit_{snake}",
                           f"{snake}__kernel_fp32_naive"], capture_output=True, text=True, check=True).stdout
    return [shlex.split(c) for c in cmds.splitlines() if " -c " in c]


@pytest.mark.slow
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="builds at OPKIT_ISA=x86-64-v2, a level only an x86-64 host has")
def test_a_module_built_at_one_level_is_rebuilt_at_another_and_every_compile_has_no_contraction(built_ws,
                                                                                                monkeypatch):
    from opkit.build import build

    out = built_ws / "build" / "opkit" / "cpu" / "row_sum"
    try:
        for lvl, march in (("x86-64-v2", "-march=x86-64-v2"), ("baseline", None)):
            monkeypatch.setenv("OPKIT_ISA", lvl)
            before = {k: v for k, v in outputs(built_ws).items() if k.startswith("row_sum/")}
            build(["row_sum"], workspace=built_ws)
            after = {k: v for k, v in outputs(built_ws).items() if k.startswith("row_sum/")}
            assert after and all(after[k] != before.get(k) for k in after), (lvl, before, after)
            assert json.loads((out / "build.json").read_text())["isa"] == isa.level()
            lines = _compile_lines(built_ws, "row_sum")
            # the kernel modules, their tiling unit, the runtime objects and the precompiled headers
            assert len(lines) >= 4, lines
            for argv in lines:
                assert "-ffp-contract=off" in argv, argv
                assert [a for a in argv if a.startswith("-march")] == ([march] if march else []), argv
                assert not {"-ffast-math", "-Ofast", "-funsafe-math-optimizations"} & set(argv), argv
    finally:
        monkeypatch.delenv("OPKIT_ISA")
        build(["row_sum"], workspace=built_ws)


def test_loading_a_build_of_another_level_says_so(monkeypatch, tmp_path):
    import opkit
    from opkit.toolchain import stamps
    from opkit.opspec import load_spec

    from test_build import ROWSUM_KERNEL, ROWSUM_TILING, ROWSUM_YAML, write_op
    ws = tmp_path / "ws"
    (ws / "opkit.yaml").parent.mkdir(parents=True)
    (ws / "opkit.yaml").write_text("opkit_version: test\n")
    spec = load_spec(write_op(ws, "row_sum", ROWSUM_YAML, ROWSUM_TILING, ROWSUM_KERNEL))
    monkeypatch.setattr(isa, "host_level", lambda cpu_flags=None, machine=None: "x86-64-v4")
    monkeypatch.setattr(isa, "_arch", lambda machine=None: "x86_64")
    monkeypatch.setenv("OPKIT_ISA", "x86-64-v4")
    stamps.write_stamp(spec, ws / "build" / "opkit" / "cpu" / "row_sum", "cpu")   # "built" on a v4 host
    monkeypatch.setenv("OPKIT_ISA", "baseline")
    with pytest.raises(OpkitError, match=r"not built .* built for ISA level x86-64-v4 and this process builds for "
                                         r"x86-64 \(OPKIT_ISA"):
        opkit.load(ws, ops=["row_sum"], bundled=False, quiet=True)
