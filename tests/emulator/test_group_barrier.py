"""GroupBarrier (opkit_emu/group_barrier.h) as CANN's A2 code runs it (asc-devkit 82b89a15 impl/basic_api/dav_c220/
core_mng/roc/kernel_operator_group_barrier_impl.h:27-150): the waiters go on only once every arriver has arrived, and
see what the arrivers copied to GM (MTE3 DataCopy) before, their atomic DataCopy adds included -- scalar GM SetValue is
not ordered by the barrier on the NPU (data cache, kernel_tensor_impl.h:1530-1534), so the test does not rely on it; two rounds leave the arrive counters (at i * 512 bytes) at 2 x arriveSize and the
wait counters (at 64 + i * 512) at 2 x waitSize. An arriver that never arrives is the hang the NPU would show: rule
sync-all naming the blocks; a workspace below max(arriveSize, waitSize) lines is gm-bounds; an index past those lines
and sizes above GetBlockNum() are api-argument. CANN's own group_barrier sample: docs/emulator.md
(scripts/asc_examples.py --only group_barrier)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent / "test_group_barrier.cpp"


def _run(gxx, tmp_path, mode):
    r = gxx(SRC, tmp_path / f"gb{mode}", [f"-DMODE={mode}"])
    assert r.returncode == 0, r.stderr[-3000:]
    return subprocess.run([str(tmp_path / f"gb{mode}")], capture_output=True, text=True, timeout=120)


def test_group_barrier_waiters_see_the_arrivers_writes_and_counters_match_cann(gxx, tmp_path):
    out = _run(gxx, tmp_path, 0)
    assert out.returncode == 0, out.stdout + out.stderr
    # waiters 2, 3, 4 x rounds 0, 1 (the arrivers' DataCopy writes: 1 + 2, 11 + 12; atomic DataCopy 1 + 2 into each round's own a,
    # which the emulator otherwise applies at the launch's end); then (arrive, wait) counter pairs of lines 0, 1, 2
    # e: each arriver's plain DataCopy after its last Arrive, which left SetAtomicAdd on -- an overwrite of the 1000s,
    # as CANN's Arrive ends in SetAtomicNoneImpl (group_barrier_impl.h:148); then a[0], a[8] after the launch: 1 + 2
    # once each (a record flushed at the barrier and applied again at the launch's end would give 6)
    assert out.stdout.split() == ["303", "323"] * 3 + ["4", "6"] * 3 + ["1", "2"] + ["3", "3"], out.stdout + out.stderr


@pytest.mark.parametrize("mode,rule,text", [
    (1, "[sync-all] GroupBarrier::Wait", "blocks ended: 1"),
    (2, "[gm-bounds] GroupBarrier", "groupWorkspace"),
    (3, "[api-argument] GroupBarrier::Wait", "waitIndex 7 is not below max(arriveSize, waitSize) = 3"),
    (4, "[api-argument] GroupBarrier", "arriveSize 6 and waitSize 3 must be in [1, GetBlockNum() = 5]"),
    # the counters grow by the UB words the constructor set to 1 (group_barrier_impl.h:139-146); a kernel that
    # overwrites them with 0 stalls the barrier, as on the NPU
    (5, "[sync-all] GroupBarrier::", "the NPU would hang"),
])
def test_group_barrier_misuse_is_reported(gxx, tmp_path, mode, rule, text):
    out = _run(gxx, tmp_path, mode)
    msg = out.stdout + out.stderr
    assert out.returncode != 0 and rule in msg and text in msg, msg
