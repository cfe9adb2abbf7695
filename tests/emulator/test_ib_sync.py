"""IBSet / IBWait (opkit_emu/ib_sync.h): block 0 writes GM then IBSet; block 1's IBWait returns only after it and
sees the write. CANN's flag (asc-devkit 82b89a15 impl/basic_api/kernel_operator_block_sync_intf_impl.h:137-215):
gmWorkspace[blockNum * 8 * eventID + blockIdx * 8], IBSet leaves 1 there and in ubWorkspace[0], IBWait 0 in both.
A wait nothing can release is the hang the NPU would show (sync-all); a gmWorkspace below the page's minimum size
is tensor-bounds."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent / "test_ib_sync.cpp"


def _run(gxx, tmp_path, mode):
    r = gxx(SRC, tmp_path / f"ib{mode}", [f"-DMODE={mode}"])
    assert r.returncode == 0, r.stderr[-3000:]
    return subprocess.run([str(tmp_path / f"ib{mode}")], capture_output=True, text=True, timeout=60)


def test_ib_wait_returns_after_ib_set_and_sees_its_write(gxx, tmp_path):
    out = _run(gxx, tmp_path, 0)
    # ub[0] after IBSet, block 1's read of block 0's 41 (+ its ub[0], 0 after IBWait), the flag word reset by IBWait
    assert out.stdout.split()[:3] == ["1", "41", "0"], out.stdout + out.stderr


def test_ib_wait_sees_the_setters_atomic_add(gxx, tmp_path):
    # block 0: SetAtomicAdd<int32_t>, DataCopy 5 onto data's 10, IBSet; block 1: IBWait, reads data[0]. On the NPU
    # the setter's MTE3 copy is in GM before its flag (docs/emulator.md, SetAtomicAdd): 15, not the 10 of before.
    out = _run(gxx, tmp_path, 3)
    assert out.returncode == 0 and out.stdout.split() == ["1", "15", "0", "15"], out.stdout + out.stderr


def test_ib_set_lands_its_atomic_add_before_it_spins(gxx, tmp_path):
    # block 0 atomically adds 5 onto data's 10, then IBSet on a flag that is still 1, so it spins; block 1 polls
    # data[0] meanwhile, then IBWait releases block 0. CANN's IBSet runs pipe_barrier(PIPE_ALL) before its spin, so
    # the add is in GM while it waits: block 1 sees 15 (before, the add came after the spin and it saw 10)
    out = _run(gxx, tmp_path, 4)
    assert out.returncode == 0 and out.stdout.split() == ["1", "15", "1", "15"], out.stdout + out.stderr


@pytest.mark.parametrize("mode,rule,text", [
    (1, "[sync-all] IBWait", "no block left can write it"),
    (2, "[tensor-bounds] IB", "gmWorkspace holds 8 int32_t"),
])
def test_ib_misuse_is_reported(gxx, tmp_path, mode, rule, text):
    out = _run(gxx, tmp_path, mode)
    assert rule in out.stderr + out.stdout and text in out.stderr + out.stdout, out.stdout + out.stderr
