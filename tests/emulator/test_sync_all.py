"""SyncAll and the atomic GM writes made before it (opkit_emu/sync_all.h).

SyncAll.md (asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/同步控制/核间同步/SyncAll.md, its SyncAllConfig example):
blocks copy their results to GM, SyncAll, then read every block's -- GM written before the barrier is visible after
it. CANN's A2 SyncAll starts with PipeBarrier<PIPE_ALL>() (impl/basic_api/dav_c220/kernel_operator_sync_impl.h:384),
so a block's MTE3 copies, atomic ones included, have landed before it signals. The emulator applies the blocks'
atomic writes when the SyncAll completes, in block order (the order it uses at the launch's end), so float sums are
the same on every run."""
from __future__ import annotations

import numpy as np
import pytest

from opkit.errors import EmulatorError

L = 64


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("sync_all", headers_digest()), "sync_all")


def order_dependent_inputs(blocks: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-block float32 rows spanning 16 decades (so the float sum depends on the order) and a non-zero workspace."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((blocks, L)) * 10.0 ** rng.uniform(-8, 8, (blocks, L))).astype(np.float32)
    ws = (rng.standard_normal(L) * 1e3).astype(np.float32)
    return x, ws


def sequential(start: np.ndarray, rows) -> np.ndarray:
    acc = start.copy()
    for r in rows:
        acc = (acc + r).astype(np.float32)  # float32 + float32 rounds once, as each atomic add does
    return acc


def run(mod, x, ws, mode, blocks):
    out = np.full(L, np.nan, np.float32)
    mod.reduce_ws([x.reshape(-1).copy(), ws, out, np.array([mode], np.int32)], block_dim=blocks)
    return out


@pytest.mark.parametrize("blocks,mode", [(4, 0), (8, 0), (4, 3)], ids=["4", "8", "4-gm-workspace-form"])
def test_atomic_add_before_sync_all_is_read_after_it_in_block_order(mod, blocks, mode):
    x, ws0 = order_dependent_inputs(blocks, seed=blocks)
    want = sequential(ws0, x)
    # the inputs make the order matter: the reverse block order gives other bits for some lanes
    assert not np.array_equal(want.view(np.uint32), sequential(ws0, x[::-1]).view(np.uint32))
    for _ in range(3):  # low blocks arrive last (the kernel's busy work); the sum must not depend on arrival
        ws = ws0.copy()
        out = run(mod, x, ws, mode, blocks)
        np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))
        np.testing.assert_array_equal(ws.view(np.uint32), want.view(np.uint32))  # applied once, not again at the end


def test_atomic_max_before_sync_all_is_read_after_it(mod):
    x, ws0 = order_dependent_inputs(6, seed=1)
    ws = ws0.copy()
    out = run(mod, x, ws, 1, 6)
    np.testing.assert_array_equal(out, np.maximum(ws0, x.max(axis=0)))


def test_single_block_sees_its_own_atomic_add_after_sync_all(mod):
    x, ws0 = order_dependent_inputs(1, seed=3)
    ws = ws0.copy()
    out = run(mod, x, ws, 0, 1)
    np.testing.assert_array_equal(out.view(np.uint32), sequential(ws0, x).view(np.uint32))
    np.testing.assert_array_equal(ws.view(np.uint32), sequential(ws0, x).view(np.uint32))  # not added again at the end


def test_group_barrier_arrive_applies_a_blocks_atomic_adds_before_the_wait_passes(mod):
    # group_barrier.h: each Arrive applies its block's pending atomic writes under the barrier's lock before its
    # counter write, so the waiter reads every arriver's add. They land in host-thread order (Arrive does not wait
    # for the round): integer-valued floats make the sum exact in any order, so the check is bitwise.
    blocks = 7
    rng = np.random.default_rng(7)
    x = rng.integers(-1000, 1000, size=(blocks - 1, L)).astype(np.float32)
    ws0 = rng.integers(-1000, 1000, size=L).astype(np.float32)
    want = ws0 + x.sum(axis=0)
    for _ in range(3):
        ws, out = ws0.copy(), np.full(L, np.nan, np.float32)
        mod.reduce_gb([np.concatenate([x.reshape(-1), np.zeros(L, np.float32)]), ws,
                       np.zeros((blocks - 1) * 512, np.uint8), out], block_dim=blocks)
        np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(ws, want)   # applied once, not again at the end


def test_failed_launch_drops_atomics_of_an_unfinished_sync_all(mod):
    x, ws0 = order_dependent_inputs(4, seed=4)
    ws = ws0.copy()
    with pytest.raises(EmulatorError) as e:
        run(mod, x, ws, 2, 4)
    assert e.value.rule == "gm-bounds" and e.value.block == 2
    np.testing.assert_array_equal(ws, ws0)  # the SyncAll never completed: no block's add landed
