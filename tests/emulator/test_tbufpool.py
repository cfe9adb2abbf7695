"""TBufPool, TPipe::InitBufPool (opkit_emu/tpipe.h; asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/资源管理/TBufPool/*.md,
TPipe/InitBufPool.md): a pool is a range of the UB that InitBuffer plans like a TPipe; a second pool may share the
first's range (the page's scenario: stage 1 in pool 1, Reset, stage 2 on the same UB). A buffer past the pool is
ub-capacity; after Reset the pool's contents are undefined (a read is ub-uninitialized)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent / "test_tbufpool.cpp"


def _run(gxx, tmp_path, over, stale):
    exe = tmp_path / f"bp{over}{stale}"
    r = gxx(SRC, exe, [f"-DOVER={over}", f"-DSTALE={stale}"])
    assert r.returncode == 0, r.stderr[-3000:]
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)


def test_two_pools_share_one_range(gxx, tmp_path):
    out = _run(gxx, tmp_path, 0, 0)
    assert out.stdout.split() == ["2", "14", "1"], out.stdout + out.stderr   # stage 1: 2x, stage 2: ones


@pytest.mark.parametrize("over,stale,text", [(1, 0, "[ub-capacity]"), (0, 1, "[ub-uninitialized] DataCopy")])
def test_pool_misuse_is_reported(gxx, tmp_path, over, stale, text):
    out = _run(gxx, tmp_path, over, stale)
    assert text in out.stdout + out.stderr, out.stdout + out.stderr
