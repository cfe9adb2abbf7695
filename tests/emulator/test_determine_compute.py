"""InitDetermineComputeWorkspace / WaitPreBlock / NotifyNextBlock (opkit_emu/ib_sync.h): four blocks append their
blockIdx to a GM log between WaitPreBlock and NotifyNextBlock, two rounds -- CANN's protocol (asc-devkit 82b89a15
impl/basic_api/dav_c220/kernel_operator_determine_compute_sync_impl.h:28-100) puts them in ascending order every
round; a block that skips its NotifyNextBlock leaves a later one waiting for good (sync-all: the NPU hangs)."""
from __future__ import annotations

import subprocess
from pathlib import Path

SRC = Path(__file__).resolve().parent / "test_determine_compute.cpp"


def _run(gxx, tmp_path, mode):
    r = gxx(SRC, tmp_path / f"det{mode}", [f"-DMODE={mode}"])
    assert r.returncode == 0, r.stderr[-3000:]
    return subprocess.run([str(tmp_path / f"det{mode}")], capture_output=True, text=True, timeout=60)


def test_blocks_run_in_ascending_order_each_round(gxx, tmp_path):
    out = _run(gxx, tmp_path, 0)
    assert out.stdout.split() == ["0", "1", "2", "3"] * 2, out.stdout + out.stderr


def test_a_missing_notify_is_the_hang_the_npu_would_show(gxx, tmp_path):
    out = _run(gxx, tmp_path, 1)
    assert "[sync-all] WaitPreBlock" in out.stdout + out.stderr and "no block left can notify it" in out.stdout + out.stderr


def test_a_workspace_set_without_a_size_holds_its_gm_buffer(gxx, tmp_path):
    out = _run(gxx, tmp_path, 2)
    assert out.returncode == 0 and out.stdout.split() == ["0", "1", "2", "3"] * 2, out.stdout + out.stderr
    short = _run(gxx, tmp_path, 3)
    assert short.returncode == 1 and "gmWorkspace holds 24 int32_t" in short.stderr, short.stdout + short.stderr


def test_the_next_block_sees_the_atomic_adds_before_notify(gxx, tmp_path):
    # each block logs extra[0], then SetAtomicAdd<int32_t> + DataCopy of blockIdx + 1 onto it, then NotifyNextBlock:
    # its copies land before its notify (docs/emulator.md, SetAtomicAdd), so the next block reads the running sum
    out = _run(gxx, tmp_path, 4)
    assert out.returncode == 0 and out.stdout.split() == ["0", "1", "3", "6", "10", "11", "13", "16"], \
        out.stdout + out.stderr
