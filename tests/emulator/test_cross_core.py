"""CrossCoreSetFlag / CrossCoreWaitFlag between vector cores (mode 0; opkit_emu/sync_all.h) and TPipe
copy-assignment and copy (opkit_emu/tpipe.h: a TPipe passed by value, as the device runs it).

CrossCoreSetFlag(ISASI).md (asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/同步控制/核间同步/): mode 0 between AIV
cores -- a wait returns once every core has set the flag; signatures include/basic_api/kernel_operator_block_sync_intf.h:
88-93, SYNC_AIV_ONLY_ALL = 14 impl/basic_api/dav_c220/kernel_operator_sync_impl.h:120. ops-nn norm/layer_norm_grad_v3,
add_layer_norm_grad and ada_layer_norm_grad use both (a kernel class's TPipe assigned the entry's)."""
from __future__ import annotations

import numpy as np
import pytest

from opkit.errors import EmulatorError


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("cross_core", headers_digest()), "cross_core")


@pytest.mark.parametrize("blocks", [1, 4])
def test_wait_sees_every_blocks_write(mod, blocks):
    out = np.zeros(16 * blocks, np.int32)
    mod.cross_core([out, np.array([0], np.uint32)], block_dim=blocks)
    slots = out.reshape(blocks, 16)
    np.testing.assert_array_equal(slots[:, 0], np.arange(1, blocks + 1))
    np.testing.assert_array_equal(slots[:, 8], np.full(blocks, blocks * (blocks + 1) // 2))


@pytest.mark.parametrize("blocks", [2, 4])
def test_wait_sees_every_setters_atomic_add(mod, blocks):
    # each block atomically adds blockIdx + 1 into acc, CrossCoreSetFlag, CrossCoreWaitFlag, reads acc[0]: a block's
    # atomic copies land before its flag (docs/emulator.md, SetAtomicAdd), so every block reads 100 + the sum
    acc = np.full(8, 100, np.int32)
    out = np.zeros(blocks, np.int32)
    mod.cross_core_atomic([acc, out], block_dim=blocks)
    total = 100 + blocks * (blocks + 1) // 2
    np.testing.assert_array_equal(out, np.full(blocks, total))
    np.testing.assert_array_equal(acc, np.full(8, total))   # applied once: nothing left for the launch's end


def _float_sum_case(blocks):
    # 1e8, 1, -1e8, 1, ...: float32 sums that differ by order (block order ends 1 above reverse order for 4 blocks)
    vals = np.array([[1e8, 1, -1e8, 1][k % 4] * (1 + k // 4) for k in range(blocks)], np.float32)
    acc = np.zeros(8, np.float32)
    s = np.float32(0)
    for x in vals:
        s = np.float32(s + x)
    return acc, vals, s


@pytest.mark.parametrize("blocks", [4, 8])
@pytest.mark.parametrize("threads", [0, 2])
def test_cross_core_set_applies_atomics_in_block_order(mod, blocks, threads):
    # the blocks reach CrossCoreSetFlag<0, PIPE_MTE3> in reverse block order (the kernel sleeps); their float atomic
    # adds land when the round completes, in block order as at SyncAll, so acc is bitwise the block-order sum every
    # run. Before, each setter applied its own at the set: the reverse-order sum (fails: 0 vs 1 for 4 blocks).
    acc, vals, want = _float_sum_case(blocks)
    rev = np.float32(0)
    for x in vals[::-1]:
        rev = np.float32(rev + x)
    assert rev != want  # the case tells the orders apart
    for _ in range(3):
        acc[:] = 0
        out = np.zeros(blocks, np.float32)
        mod.cross_core_order([acc, vals, out], block_dim=blocks, threads=threads)
        assert acc.view(np.uint32).tolist() == [want.view(np.uint32)] * 8
        assert out.view(np.uint32).tolist() == [want.view(np.uint32)] * blocks   # every waiter sees all of them


def test_cross_core_set_on_another_pipe_leaves_atomics_pending(mod):
    # CrossCoreSetFlag<0, PIPE_V> reports the vector pipe done, not MTE3: the atomic copies are not known to be in GM,
    # so the waiters read acc before them (0) and the adds land at the launch's end, in block order
    acc, vals, want = _float_sum_case(4)
    out = np.ones(4, np.float32)
    mod.cross_core_pipe_v([acc, vals, out], block_dim=4)
    np.testing.assert_array_equal(out, np.zeros(4, np.float32))
    assert acc.view(np.uint32).tolist() == [want.view(np.uint32)] * 8


def test_a_block_that_never_sets_is_the_hang(mod):
    out = np.zeros(16 * 3, np.int32)
    with pytest.raises(EmulatorError) as e:
        mod.cross_core([out, np.array([1], np.uint32)], block_dim=3)
    assert e.value.rule == "sync-all" and "would hang" in e.value.detail


def test_tpipe_copy_assignment(mod):
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    y = np.zeros(72, np.float32)
    mod.pipe_copy([x, y], block_dim=1)
    np.testing.assert_array_equal(y[:64], x * np.float32(3))
    assert y[64] == 1


BY_VALUE = r"""
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
using namespace AscendC;
// ops-cv image/grid_sample/op_kernel/grid_sampler_2d.h:189-207: Init(..., TPipe pipeIn) { pipe = pipeIn; pipe.InitBuffer..}
struct Sampler {
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, TPipe pipeIn) {
    pipe = pipeIn;
    gx.SetGlobalBuffer((__gm__ float*)x, 64);
    gy.SetGlobalBuffer((__gm__ float*)y, 64);
    pipe.InitBuffer(inQ, 1, 64 * 4);
    pipe.InitBuffer(outQ, 1, 64 * 4);
  }
  __aicore__ inline void Process() {
    LocalTensor<float> a = inQ.AllocTensor<float>();
    DataCopy(a, gx, 64);
    inQ.EnQue(a);
    a = inQ.DeQue<float>();
    LocalTensor<float> b = outQ.AllocTensor<float>();
    Adds(b, a, 1.0f, 64);
    inQ.FreeTensor(a);
    outQ.EnQue(b);
    b = outQ.DeQue<float>();
    DataCopy(gy, b, 64);
    outQ.FreeTensor(b);
  }
  TPipe pipe;
  TQue<TPosition::VECIN, 1> inQ;
  TQue<TPosition::VECOUT, 1> outQ;
  GlobalTensor<float> gx, gy;
};
// a copy taken after the pipe's queue buffer was freed: the copy's Destroy waits its free event
__aicore__ inline void Peek(TPipe copy) { (void)copy; }
struct Planner {  // plans its queue through a by-value copy, which ends with Init
  __aicore__ inline void Init(TPipe pipeIn) { pipeIn.InitBuffer(q, 1, 256); }
  TQue<TPosition::VECIN, 1> q;
};
extern "C" __global__ __aicore__ void by_value(GM_ADDR x, GM_ADDR y, GM_ADDR mode) {
  const int32_t m = *(__gm__ int32_t*)mode;
  TPipe pipe;
  if (m == 0) {
    Sampler op;
    op.Init(x, y, pipe);
    op.Process();
  } else if (m == 1) {
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 256);
    LocalTensor<float> t = q.AllocTensor<float>();
    q.FreeTensor(t);
    Peek(pipe);  // BYVAL:peek (the copy is made here)
  } else if (m == 2) {
    Planner p;
    p.Init(pipe);
    LocalTensor<float> t = p.q.AllocTensor<float>();  // BYVAL:planned
    p.q.FreeTensor(t);
  } else if (m == 3) {  // the block's first pipe (id 1) destroyed, its queue used after
    TQue<TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 256);
    pipe.Destroy();
    LocalTensor<float> t = q.AllocTensor<float>();  // BYVAL:first-queue
    q.FreeTensor(t);
  } else {  // the same with a TBuf
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 256);
    pipe.Destroy();
    LocalTensor<float> t = b.Get<float>();  // BYVAL:first-tbuf
    (void)t;
  }
}
int main(int argc, char** argv) {
  auto* x = (float*)GmAlloc(64 * 4);
  auto* y = (float*)GmAlloc(64 * 4);
  auto* mode = (int32_t*)GmAlloc(32);
  *mode = argc > 1 ? argv[1][0] - '0' : 0;
  for (int i = 0; i < 64; ++i) x[i] = i;
  SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(by_value, 1, (uint8_t*)x, (uint8_t*)y, (uint8_t*)mode);
  std::printf("%g %g\n", y[0], y[63]);
  return 0;
}
"""


@pytest.fixture(scope="module")
def by_value(tmp_path_factory):
    """CANN's TPipe has the implicit copy, and the copy's destructor runs Destroy() (asc-devkit 82b89a15
    impl/basic_api/kernel_tpipe_impl.h:80-86): it waits the free events in its own table copy (:563-569) and
    drains every pipe (:595-600), freeing no UB. Built once, run per mode."""
    from conftest import base_flags
    from opkit import emulator
    import subprocess as sp
    d = tmp_path_factory.mktemp("by_value")
    (d / "by_value.cpp").write_text(BY_VALUE)
    r = sp.run(base_flags("ascend910b") + [str(d / "by_value.cpp"), "-o", str(d / "by_value")]
               + emulator.cflags(libs=True), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    return lambda mode: sp.run([str(d / "by_value"), str(mode)], capture_output=True, text=True, timeout=120)


def test_a_tpipe_passed_by_value_as_grid_sample_does_runs(by_value):
    """The entry's fresh pipe copied into Init and assigned to the kernel's member: the copy holds no buffer, its
    Destroy is a PIPE_ALL barrier, and the member pipe's queue works (ops-cv grid_sample)."""
    out = by_value(0)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "64"]


def _line(tag):
    return next(i for i, t in enumerate(BY_VALUE.splitlines(), 1) if tag in t)


def test_a_copy_of_a_pipe_with_freed_buffers_is_caught_when_it_ends(by_value):
    """The copy's Destroy waits the free event FreeTensor set; the pipe's next AllocTensor would wait it again and
    hang on the device."""
    out = by_value(1)
    assert out.returncode != 0
    assert "queue-protocol" in out.stderr and "copy of the TPipe" in out.stderr, out.stderr
    assert f"by_value.cpp:{_line('BYVAL:peek')}" in out.stderr, out.stderr


def test_a_queue_planned_through_a_copy_is_dead_after_it(by_value):
    out = by_value(2)
    assert out.returncode != 0
    assert "queue belongs to a TPipe that was destroyed" in out.stderr, out.stderr
    assert f"by_value.cpp:{_line('BYVAL:planned')}" in out.stderr, out.stderr


@pytest.mark.parametrize("mode,tag,what", [(3, "BYVAL:first-queue", "queue"), (4, "BYVAL:first-tbuf", "TBuf")])
def test_the_first_pipe_destroyed_leaves_no_live_buffer(by_value, mode, tag, what):
    """The block's first TPipe (id 1) marks its ended buffers -1; "no pipe live" was -1 too, so they looked live."""
    out = by_value(mode)
    assert out.returncode != 0, out.stdout
    assert f"{what} belongs to a TPipe that was destroyed" in out.stderr, out.stderr
    assert f"by_value.cpp:{_line(tag)}" in out.stderr, out.stderr


def test_atomics_of_a_round_nobody_completes_land_at_the_end(mod):
    # block 0 hands its add to flag 3's round and block 1 never sets it: the round's writes land once every block
    # has ended, with block 1's launch-end add (dropped, they would leave 107)
    acc = np.full(8, 100, np.int32)
    mod.cross_core_partial([acc], block_dim=2)
    np.testing.assert_array_equal(acc, np.full(8, 112, np.int32))
