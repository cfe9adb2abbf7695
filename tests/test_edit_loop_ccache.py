"""The kernel.cpp edit loop (issue 38 item 3): an edit recompiles only the lead dtype's kernel unit under
`--dtype` (not its naive unit, which for the compute dtype is built on its first call; not the precompiled
emulator header, not the tiling unit), and with ccache on PATH the kernel compiles,
which include the emulator's precompiled header, are cacheable: before, ccache refused every one of them ("could
not use precompiled header"), so undoing an edit or a comment-only edit recompiled everything.
Uses the ScaleMul/RowSum workspace tests/test_build.py builds once per session."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opkit.build import build, build_specs
from opkit.workspace import workspace_specs
from test_build import built_ws  # noqa: F401 (session fixture)

pytestmark = pytest.mark.slow   # needs the session build of tests/test_build.py

SLOPPINESS = {"pch_defines", "time_macros", "include_file_mtime", "include_file_ctime"}


def _edit(path: Path, line: str) -> None:
    time.sleep(0.01)
    path.write_text(path.read_text() + line + "\n")


def _modules(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "scale_mul").glob("*.so"))}


def _loads_and_runs(ws: Path) -> None:
    code = (f"import torch, opkit\nopkit.load({str(ws)!r}, ops=['scale_mul'], bundled=False, quiet=True)\n"
            "x = torch.ones(2, 8)\nprint(float(torch.ops.opkit.scale_mul(x, x[0]).sum()))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["32.0"], proc.stdout


def test_edit_loop_kernel_edit_recompiles_only_the_lead_dtype_kernel_units(built_ws):
    build(workspace=built_ws)
    kernel = built_ws / "ops" / "scale_mul" / "kernel.cpp"
    good = kernel.read_text()
    _edit(kernel, "static constexpr int opkit_test_edit = 1;")
    try:
        logs = []
        build(["scale_mul"], workspace=built_ws, dtype=["fp32"], verbose=True, log=logs.append)
        compiles = [m for m in logs if " -c " in m]
        units = sorted(re.search(r" -o CMakeFiles/(\S+?)\.dir/", m).group(1) for m in compiles)
        assert units == ["scale_mul__kernel_fp32"], compiles     # kernel_fp32_naive: on demand (lowering.py)
        assert not any("cmake_pch" in m and "-x c++-header" in m for m in compiles), "the PCH was rebuilt"
        _loads_and_runs(built_ws)
    finally:
        kernel.write_text(good)
        build(workspace=built_ws)


def _fake_ccache(bin_dir: Path, record: Path) -> None:
    """A `ccache` that records the sloppiness it was given per compile and runs the compiler; asked for its
    configuration (`--get-config sloppiness`), it answers with the environment's, as ccache does."""
    bin_dir.mkdir()
    exe = bin_dir / "ccache"
    exe.write_text('#!/bin/sh\nif [ "$1" = --get-config ]; then echo "$CCACHE_SLOPPINESS"; exit 0; fi\n'
                   f'echo "$CCACHE_SLOPPINESS $*" >> {record}\nexec "$@"\n')
    exe.chmod(0o755)


def test_edit_loop_ccache_launcher_carries_the_pch_sloppiness(built_ws, tmp_path, monkeypatch):
    """Every compile goes through ccache with the sloppiness its manual asks for GCC precompiled headers, the
    user's own sloppiness kept beside it (CCACHE_SLOPPINESS replaces ccache.conf's), and the modules are
    byte-identical to the ones built without it."""
    record = tmp_path / "calls.txt"
    _fake_ccache(tmp_path / "bin", record)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("OPKIT_NO_CCACHE", raising=False)
    monkeypatch.setenv("CCACHE_SLOPPINESS", "locale, time_macros")
    build(workspace=built_ws)
    out = tmp_path / "build"
    build_specs(workspace_specs(built_ws, ("scale_mul",)), out, target="cpu")
    calls = record.read_text().splitlines()
    kernel_calls = [c for c in calls if "kernel_module.cpp" in c]
    assert len(kernel_calls) == 3, calls          # 2 dtypes x (opkit, naive), fp32's naive built on demand
    for c in calls:
        assert set(c.split()[0].split(",")) >= SLOPPINESS | {"locale"}, c
    assert _modules(out) == _modules(built_ws / "build" / "opkit" / "cpu")


@pytest.mark.skipif(shutil.which("ccache") is None, reason="ccache is not installed")
def test_edit_loop_ccache_hits_after_a_comment_edit_and_an_undo(built_ws, tmp_path, monkeypatch):
    """With a real ccache: a comment-only edit and undoing an edit are cache hits for every kernel compile
    (each took ~1-3 CPU-seconds before), and the modules are the same bytes."""
    monkeypatch.setenv("CCACHE_DIR", str(tmp_path / "ccache"))
    monkeypatch.delenv("OPKIT_NO_CCACHE", raising=False)
    out = tmp_path / "build"
    specs = workspace_specs(built_ws, ("scale_mul",))
    build_specs(specs, out, target="cpu")                           # cold: fills the cache
    first = _modules(out)
    kernel = built_ws / "ops" / "scale_mul" / "kernel.cpp"
    good = kernel.read_text()
    try:
        for text in (good + "// a comment only\n", good):
            time.sleep(0.01)
            kernel.write_text(text)
            subprocess.run(["ccache", "-z"], check=True, capture_output=True)
            build_specs(specs, out, target="cpu")
            stats = subprocess.run(["ccache", "--print-stats"], check=True, capture_output=True, text=True).stdout
            st = dict(ln.split("\t", 1) for ln in stats.splitlines() if "\t" in ln)
            hits = int(st.get("direct_cache_hit", 0)) + int(st.get("preprocessed_cache_hit", 0))
            assert hits == 3 and int(st.get("cache_miss", 0)) == 0, stats       # fp32's naive: on demand
            assert int(st.get("could_not_use_precompiled_header", 0)) == 0, stats
            assert _modules(out) == first
    finally:
        kernel.write_text(good)
