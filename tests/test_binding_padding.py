"""The torch binding gives a tensor that owns its block the device's padding (docs/emulator.md "Data extent", torch
binding; python/opkit/csrc/kernels.cpp `owns_block`, `device_block_bytes`): torch_npu's caching allocator gives n
bytes a block of ALIGN_UP(n + 32, 512) (Ascend/pytorch 9e73e708 torch_npu/csrc/core/npu/NPUCachingAllocator.cpp
`round_size` :2202-2213), so a kernel's last tile rounded up to a 32-byte block past a fresh tensor's bytes is right
on the device. Before, the binding passed exactly `nbytes()` and such a tail was `gm-bounds`. The padding is garbage
(poison) as on the other routes: loading it and not using it passes, using it fails `ub-uninitialized`. A view
ending where its storage ends gets the storage's block padding (`pad_after`); a view ending before keeps exactly its
bytes: past them is another tensor's data on the device.

One op of the test's own, PadTail (y = 2x over a 1-d float32 x), whose kernel copies x in and y out as whole 32-byte
blocks; mode 1 also sums the loaded blocks (padding included) and stores the sum as y[0]; mode 2 also writes 2x back
into x (rounded up); mode 3 also writes max(x, 0) into x's data through a raw `__gm__` pointer (no check sees it).
A second op, PadPair (y = 2a over a 1-d float32 a, b read whole; mode 1 writes 7s into b, mode 2 writes 2a into a
rounded up, mode 3 also then reads b again into y), for two inputs. Both
kernels read the mode modulo 8, so a test under `once` can give its launches a key no earlier call made (`fresh`)."""
from __future__ import annotations

import ctypes
import itertools
import warnings

import pytest
import torch

import opkit
from opkit.build import build
from opkit.errors import EmulatorError
from test_build import write_op

pytestmark = pytest.mark.slow   # builds its op (~1-2 min on 2 busy cores)

YAML = """\
op: PadTail
family: custom
summary: y = 2x, copied in and out as whole 32-byte blocks (a test of the binding's padding)
inputs:
  - {name: x, dtypes: [float32], shape: [N]}
outputs:
  - {name: y, dtype: x, shape: x}
attrs:
  - {name: mode, type: int, default: 0}
tests:
  dims: {N: [1, 64]}
"""
TILING = """\
#pragma once
#include <cstdint>
struct PadTailTilingData { uint32_t n; uint32_t mode; };
#ifndef __CCE_AICORE__
#include <stdexcept>
#include "opkit/tiling.h"
inline void PadTailTiling(opkit::TilingContext& ctx, PadTailTilingData& t) {
  t.n = static_cast<uint32_t>(ctx.inputs.at(0).numel());
  if (t.n > 64) throw std::invalid_argument("PadTail takes up to 64 elements");
  t.mode = static_cast<uint32_t>(ctx.attr_int("mode"));
  ctx.block_dim = 1;
}
#endif
"""
KERNEL = """\
#include "kernel_operator.h"
#include "tiling.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void pad_tail(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(PadTailTilingData, td, tiling);
  const uint32_t m = (td.n + 7) / 8 * 8;   // the tail rounded up to a 32-byte block
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 4 * 64 * sizeof(float));
  LocalTensor<float> a = buf.Get<float>(), b = a[64], s = a[128], w = a[192];
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, m);
  yg.SetGlobalBuffer((__gm__ float*)y, m);
  const uint32_t mode = td.mode % 8;
  DataCopy(a, xg, m);                        // past n: x's padding
  PipeBarrier<PIPE_ALL>();
  Muls(b, a, 2.0f, m);
  if (mode == 1) ReduceSum(s, a, w, m);      // the padding used as data
  PipeBarrier<PIPE_ALL>();
  DataCopy(yg, b, m);                        // past n: into y's padding
  if (mode == 2) DataCopy(xg, b, m);
  if (mode == 1) {
    PipeBarrier<PIPE_ALL>();
    yg.SetValue(0, s.GetValue(0));
  }
  if (mode == 3) {                           // a raw write: no store is marked, only the bytes tell
    PipeBarrier<PIPE_ALL>();
    __gm__ float* xp = (__gm__ float*)x;
    for (uint32_t i = 0; i < td.n; ++i) xp[i] = xp[i] > 0.0f ? xp[i] : 0.0f;
  }
}
"""
PAIR_YAML = """\
op: PadPair
family: custom
summary: y = 2a (mode 4 2b, a unread), b read whole, mode 1 writes 7s into b, 2 2a into a, 3 also y = b read again (a test of the binding's padding, two inputs)
inputs:
  - {name: a, dtypes: [float32], shape: [N]}
  - {name: b, shape: [M]}
outputs:
  - {name: y, dtype: a, shape: a}
attrs:
  - {name: mode, type: int, default: 0}
tests:
  dims: {N: [1, 64], M: [8, 256]}
"""
PAIR_TILING = """\
#pragma once
#include <cstdint>
struct PadPairTilingData { uint32_t n; uint32_t m; uint32_t mode; };
#ifndef __CCE_AICORE__
#include <stdexcept>
#include "opkit/tiling.h"
inline void PadPairTiling(opkit::TilingContext& ctx, PadPairTilingData& t) {
  t.n = static_cast<uint32_t>(ctx.inputs.at(0).numel());
  t.m = static_cast<uint32_t>(ctx.inputs.at(1).numel());
  if (t.n > 64 || t.m > 256) throw std::invalid_argument("PadPair takes a up to 64, b up to 256");
  t.mode = static_cast<uint32_t>(ctx.attr_int("mode"));
  ctx.block_dim = 1;
}
#endif
"""
PAIR_KERNEL = """\
#include "kernel_operator.h"
#include "tiling.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void pad_pair(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(PadPairTilingData, td, tiling);
  const uint32_t n = (td.n + 7) / 8 * 8;     // a's tail rounded up to a 32-byte block
  const uint32_t mb = (td.m + 7) / 8 * 8;    // b's too (the tests' b is whole blocks unless it tests b's padding)
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, (64 + 256 + 64) * sizeof(float));
  LocalTensor<float> ua = buf.Get<float>(), ub = ua[64], uy = ua[320];
  GlobalTensor<float> ag, bg, yg;
  ag.SetGlobalBuffer((__gm__ float*)a, n);
  bg.SetGlobalBuffer((__gm__ float*)b, mb);
  yg.SetGlobalBuffer((__gm__ float*)y, n);
  if (td.mode % 8 != 4) DataCopy(ua, ag, n);   // mode 4 leaves a unread: y = 2b
  DataCopy(ub, bg, mb);                      // b whole, in one copy
  PipeBarrier<PIPE_ALL>();
  Muls(uy, td.mode % 8 == 4 ? ub : ua, 2.0f, n);
  PipeBarrier<PIPE_ALL>();
  DataCopy(yg, uy, n);
  if (td.mode % 8 == 1) {
    Duplicate(ub, 7.0f, td.m);
    PipeBarrier<PIPE_ALL>();
    DataCopy(bg, ub, td.m);
  }
  if (td.mode % 8 == 2) DataCopy(ag, uy, n);
  if (td.mode % 8 == 3) {                    // writes 2a into a, then reads b back into y: b's bytes as they are now
    DataCopy(ag, uy, n);
    PipeBarrier<PIPE_ALL>();
    DataCopy(ub, bg, td.m);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, ub, n);
  }
}
"""
_keys = itertools.count(1)


def fresh(mode):
    """`mode` as the kernels read it (modulo 8), in a launch key no call in this process made before."""
    return mode + 8 * next(_keys)


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    ws = tmp_path_factory.mktemp("pad_ws")
    (ws / "opkit.yaml").write_text("opkit_version: test\n")
    write_op(ws, "pad_tail", YAML, TILING, KERNEL)
    write_op(ws, "pad_pair", PAIR_YAML, PAIR_TILING, PAIR_KERNEL)
    build(workspace=ws)
    opkit.load(ws, bundled=False, quiet=True)
    return ws


@pytest.fixture(scope="module")
def op(ws):
    return torch.ops.opkit.pad_tail


@pytest.fixture(scope="module")
def pair(ws):
    return torch.ops.opkit.pad_pair


@pytest.fixture(autouse=True)
def checked(monkeypatch):
    monkeypatch.setenv("OPKIT_EMU_CHECKS", "always")   # every launch checked: the rules apply each time


def test_a_tail_rounded_up_past_an_owned_tensor_passes(op):
    x = torch.randn(20)                        # 80 bytes; the kernel reads and writes 96 (before: gm-bounds)
    y = op(x)
    torch.testing.assert_close(y, 2 * x)
    assert y.untyped_storage().nbytes() == 80  # the output's storage is its bytes: it owns its block, as on the device
    torch.testing.assert_close(op(y), 4 * x)   # so it gets the padding again as the next op's input


def test_a_fast_launch_gets_the_same_padding(op, monkeypatch):
    monkeypatch.setenv("OPKIT_EMU_CHECKS", "fast")
    x = torch.randn(20)
    torch.testing.assert_close(op(x), 2 * x)


def test_data_a_kernel_writes_into_its_input_goes_back_not_the_padding(op):
    big = torch.randn(40)
    x = big[:20].clone()
    before = x.clone()
    y = op(x, mode=2)
    torch.testing.assert_close(x, 2 * before)
    torch.testing.assert_close(y, 2 * before)


def test_the_padding_used_as_data_fails(op):
    torch.testing.assert_close(op(torch.ones(24), mode=1)[0], torch.tensor(24.0))   # no padding read: passes
    with pytest.raises(RuntimeError) as info:
        op(torch.ones(20), mode=1)             # the sum takes in x's 4 padding floats (before: gm-bounds)
    e = EmulatorError.from_message(str(info.value))
    assert e is not None and e.rule == "ub-uninitialized", str(info.value)


@pytest.mark.parametrize("view", ["head", "middle", "split"])
def test_a_view_ending_before_its_storages_end_keeps_exactly_its_bytes(op, view):
    big = torch.randn(40)
    x = {"head": lambda: big[:20], "middle": lambda: big[10:30], "split": lambda: torch.split(big, 20)[0]}[view]()
    with pytest.raises(RuntimeError) as info:
        op(x)                                  # past its 80 bytes is the rest of big
    e = EmulatorError.from_message(str(info.value))
    assert e is not None and e.rule == "gm-bounds", str(info.value)


@pytest.mark.parametrize("view", ["tail", "split", "chunk", "odd"])
def test_a_view_ending_where_its_storage_ends_gets_the_storages_padding(op, view):
    """On the device the storage's block padding, ALIGN_UP(storage bytes + 32, 512), follows whatever view ends at
    the storage's end: the tail rounded up past its 80 bytes is harmless there (before: gm-bounds)."""
    big = torch.randn(40 if view != "odd" else 45)
    x = {"tail": lambda: big[20:], "split": lambda: torch.split(big, 20)[-1], "chunk": lambda: big.chunk(2)[1],
         "odd": lambda: big[25:]}[view]()      # odd: 20 floats from byte 100, not 32-byte aligned
    torch.testing.assert_close(op(x), 2 * x)


def test_a_tail_views_padding_is_garbage_and_its_writes_go_back(op):
    """The storage's padding past a tail view is garbage (used as data: ub-uninitialized), and what the kernel writes
    into the view's data goes back into the storage, the bytes before the view untouched."""
    with pytest.raises(RuntimeError) as info:
        op(torch.ones(40)[20:], mode=1)        # the sum takes in 4 padding floats past the view
    e = EmulatorError.from_message(str(info.value))
    assert e is not None and e.rule == "ub-uninitialized", str(info.value)
    big = torch.randn(40)
    before = big.clone()
    y = op(big[20:], mode=2)                   # writes 2x into x, rounded up into the padding
    torch.testing.assert_close(y, 2 * before[20:])
    torch.testing.assert_close(big[20:], 2 * before[20:])
    torch.testing.assert_close(big[:20], before[:20])


def launch():
    from opkit import registration
    return registration.last_launch()


def test_a_read_only_input_the_kernel_does_not_write_is_left_alone(op, tmp_path):
    """Its padded copy is not copied back: a read-only mapping (PROT_READ) would fault, another thread's update be
    lost (before: every staged input copied back after every launch)."""
    np = pytest.importorskip("numpy")
    f = tmp_path / "x.npy"
    np.save(f, np.arange(20, dtype=np.float32))
    arr = np.load(f, mmap_mode="r")            # a PROT_READ mapping: a write into it faults
    with pytest.warns(UserWarning, match="not writable"):
        x = torch.from_numpy(arr)
    y = op(x)                                  # reads 96 bytes: x runs from its padded copy
    torch.testing.assert_close(y, 2 * torch.arange(20, dtype=torch.float32))
    assert launch()["staged_inputs"] == 1 and launch()["copied_back_inputs"] == 0
    assert np.array_equal(arr, np.arange(20, dtype=np.float32))


def test_once_a_fast_launch_stages_only_an_input_whose_padding_its_checked_launch_touched(op, monkeypatch):
    """OPKIT_EMU_CHECKS=once: the second call of a key is fast and stages x only if the checked one reached past x's
    data. x is a numpy array's head, so a fast launch writing past x without its copy would change base[20:]."""
    np = pytest.importorskip("numpy")
    monkeypatch.setenv("OPKIT_EMU_CHECKS", "once")
    base = np.zeros(64, dtype=np.float32)
    x = torch.from_numpy(base[:20])            # owns its block (storage offset 0, storage 80 bytes): padding given
    x.copy_(torch.arange(20, dtype=torch.float32))
    mode = fresh(2)                            # keys no earlier call made: the first call is checked
    for call, checked in ((0, True), (1, False)):
        op(x, mode=mode)                       # writes 2x into x rounded up to 24 floats: past its data
        s = launch()
        assert s["checked"] is checked, call
        assert s["staged_inputs"] == 1 and s["copied_back_inputs"] == 1, (call, s)
    torch.testing.assert_close(x, 4 * torch.arange(20, dtype=torch.float32))
    assert not base[20:].any()                 # the padding writes went to the copy both times

    # 24 floats: the tail is whole, nothing reaches x's padding; the fast launch runs on x itself, no copy
    x = torch.arange(24, dtype=torch.float32)
    mode = fresh(0)
    for call, checked, staged in ((0, True, 1), (1, False, 0)):
        y = op(x, mode=mode)
        s = launch()
        assert s["checked"] is checked and s["staged_inputs"] == staged and s["copied_back_inputs"] == 0, (call, s)
        torch.testing.assert_close(y, 2 * x)



def test_a_checked_launch_decides_written_by_its_copy_not_the_callers_live_bytes(pair, monkeypatch):
    """x runs from its padded copy (a's tail reaches its padding); b, a view of x's head, runs on x's own bytes, and
    the kernel writes 7s there: x changes during the launch, as under another thread's update. The copy is unchanged,
    so nothing goes back, in the checked launch and in the fast one (before: compared with x's live bytes, the stale
    copy went back over the write, and x was recorded as written for the key, so every fast launch copied it back)."""
    monkeypatch.setenv("OPKIT_EMU_CHECKS", "once")
    mode = fresh(1)
    for call, checked in ((0, True), (1, False)):
        x = torch.arange(20, dtype=torch.float32)
        y = pair(x, x[:8], mode=mode)
        s = launch()
        assert s["checked"] is checked and s["staged_inputs"] == 1 and s["copied_back_inputs"] == 0, (call, s)
        torch.testing.assert_close(y, 2 * torch.arange(20, dtype=torch.float32))
        torch.testing.assert_close(x[:8], torch.full((8,), 7.0))
        torch.testing.assert_close(x[8:], torch.arange(8, 20, dtype=torch.float32))


def test_once_a_raw_write_its_checked_launch_left_unchanged_still_goes_back(op, monkeypatch):
    """Mode 3 writes max(x, 0) into x through a raw pointer after reading x rounded up (so x is staged in the fast
    launch too). The checked call's x is non-negative: the write changes nothing and no store is marked, so the key
    records x as not written. The fast call's x has negatives: its copy changed, so it goes back (before: the record
    alone decided, and the write was lost)."""
    monkeypatch.setenv("OPKIT_EMU_CHECKS", "once")
    mode = fresh(3)
    x = torch.arange(20, dtype=torch.float32)
    op(x, mode=mode)
    s = launch()
    assert s["checked"] and s["copied_back_inputs"] == 0, s
    x = torch.arange(20, dtype=torch.float32) - 10
    op(x, mode=mode)
    s = launch()
    assert not s["checked"] and s["staged_inputs"] == 1 and s["copied_back_inputs"] == 1, s
    torch.testing.assert_close(x, (torch.arange(20, dtype=torch.float32) - 10).clamp(min=0))


def test_a_refused_launch_copies_nothing_back_and_says_why(op, ws, tmp_path):
    """A launch the module refuses before it runs reports every argument written and touched (unknown): the staged
    input's copy is compared with its pre-launch bytes instead, so nothing goes back and the caller gets the refusal
    (before: every staged input was copied back, and a read-only one faulted). The refusal: a tensor-list member
    outside x's buffer, set through the module's own export for the thread's next launch (launch_abi.h)."""
    np = pytest.importorskip("numpy")
    sos = [p for p in ws.rglob("*.so") if "pad_tail" in str(p) and "naive" not in p.name]
    assert len(sos) == 1, sos
    lib = ctypes.CDLL(str(sos[0]))              # the module the binding loaded: the same handle
    set_members = lib.opkit_kernel_set_list_members
    set_members.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint64)]

    def refused(x):
        assert set_members(0, 1, (ctypes.c_uint64 * 3)(0, 4, 1 << 20)) == 0   # 1 MB inside a 512-byte buffer
        with pytest.raises(RuntimeError, match="is not inside the buffer"):
            op(x)
        s = launch()
        assert s["staged_inputs"] == 1 and s["copied_back_inputs"] == 0, s

    x = torch.arange(20, dtype=torch.float32)
    refused(x)
    torch.testing.assert_close(x, torch.arange(20, dtype=torch.float32))
    f = tmp_path / "x.npy"
    np.save(f, np.arange(20, dtype=np.float32))
    arr = np.load(f, mmap_mode="r")            # a PROT_READ mapping: a copy back into it faults
    with warnings.catch_warnings():             # torch's "not writable" warning (given once per process)
        warnings.simplefilter("ignore", UserWarning)
        x = torch.from_numpy(arr)
    refused(x)                                 # before: a segfault
    assert np.array_equal(arr, np.arange(20, dtype=np.float32))


def test_last_launch_describes_this_call(op):
    """A call with no launch (an empty input) reports nothing staged or copied back (before: the previous call's)."""
    op(torch.arange(20, dtype=torch.float32), mode=2)
    assert launch()["staged_inputs"] == 1 and launch()["copied_back_inputs"] == 1
    op(torch.empty(0))
    assert launch()["staged_inputs"] == 0 and launch()["copied_back_inputs"] == 0


def test_once_an_input_run_on_its_own_bytes_has_exactly_them_as_its_region(pair, monkeypatch):
    """a and b are the two parts of one numpy array, each owning its block (storage offset 0, all of its storage):
    b starts 32 bytes in, inside a's 512-byte block, and ends past it. In the fast launch neither reaches its padding,
    so neither is staged and a's region must be its 32 bytes: with its block, b's read (one copy of 800 bytes) was
    found in a's region and crossed its end, `gm-bounds` (fixed in 0c566ca)."""
    np = pytest.importorskip("numpy")
    monkeypatch.setenv("OPKIT_EMU_CHECKS", "once")
    base = np.zeros(8 + 200, dtype=np.float32)
    a, b = torch.from_numpy(base[:8]), torch.from_numpy(base[8:])
    a.copy_(torch.arange(8, dtype=torch.float32))
    mode = fresh(0)
    for call, checked, staged in ((0, True, 3), (1, False, 0)):
        y = pair(a, b, mode=mode)
        s = launch()
        assert s["checked"] is checked and s["staged_inputs"] == staged, (call, s)
        torch.testing.assert_close(y, 2 * torch.arange(8, dtype=torch.float32))


def test_an_input_passed_twice_keeps_what_the_kernel_wrote_through_one_slot(pair):
    """pair(x, x): both slots run from one copy; the kernel writes 2x through the first (mode 2) and the copy goes back
    once (before fid13b: the second slot's own copy went back too and reverted the write)."""
    x = torch.arange(24, dtype=torch.float32)
    y = pair(x, x, mode=2)
    s = launch()
    assert s["staged_inputs"] == 3 and s["copied_back_inputs"] == 1, s
    torch.testing.assert_close(y, 2 * torch.arange(24, dtype=torch.float32))
    torch.testing.assert_close(x, 2 * torch.arange(24, dtype=torch.float32))


@pytest.mark.parametrize("second", ["same", "view"])
def test_an_input_passed_twice_is_one_buffer_a_write_through_one_slot_is_read_through_the_other(pair, second):
    """pair(x, x) and pair(x, x.view(-1)) (the same bytes): the kernel writes 2x through a, then reads b into y. On the
    device a and b are one buffer, so y is 2x; so here, from one staged copy (before: a copy per slot, y was x)."""
    x = torch.arange(24, dtype=torch.float32)
    y = pair(x, x if second == "same" else x.view(-1), mode=3)
    s = launch()
    assert s["staged_inputs"] == 3 and s["copied_back_inputs"] == 1, s
    torch.testing.assert_close(y, 2 * torch.arange(24, dtype=torch.float32))
    torch.testing.assert_close(x, 2 * torch.arange(24, dtype=torch.float32))


def test_once_a_fast_distinct_pair_after_a_checked_aliased_one_stages_what_it_reaches(pair, monkeypatch):
    """pair(x, x) checked, then pair(a, b) fast (one key: aliasing is not in it). b (20 floats) is read rounded up
    to 24. In the checked launch b's padding reads landed on slot 0's region (gm_find: the first region holding the
    address), so slot 1's mark was missing and the fast launch ran b on its own 80 bytes: gm-bounds (review fid14
    finding 1). The marks now go to every slot sharing the buffer."""
    monkeypatch.setenv("OPKIT_EMU_CHECKS", "once")
    mode = fresh(0)
    x = torch.arange(20, dtype=torch.float32)
    torch.testing.assert_close(pair(x, x, mode=mode), 2 * x)
    assert launch()["checked"] is True
    a, b = torch.arange(20, dtype=torch.float32) + 1, torch.ones(20)
    y = pair(a, b, mode=mode)
    s = launch()
    assert s["checked"] is False and s["staged_inputs"] == 3, s
    torch.testing.assert_close(y, 2 * a)


def test_once_a_fast_aliased_pair_after_a_checked_distinct_one_stages_the_shared_buffer(pair, monkeypatch):
    """pair(a, b) checked with a unread (mode 4: y = 2b) touches b's padding only; pair(x, x) fast then shares slot 0's
    buffer for b, so the group is staged when any of its slots may reach the padding (before: slot 0 was not staged,
    slot 1 took its unpadded 80 bytes and b's rounded-up read failed gm-bounds)."""
    monkeypatch.setenv("OPKIT_EMU_CHECKS", "once")
    mode = fresh(4)
    a, b = torch.zeros(20), torch.arange(20, dtype=torch.float32) + 1
    torch.testing.assert_close(pair(a, b, mode=mode), 2 * b)
    s = launch()
    assert s["checked"] is True and s["staged_inputs"] == 3, s
    x = torch.arange(20, dtype=torch.float32) + 3
    y = pair(x, x, mode=mode)
    s = launch()
    assert s["checked"] is False and s["staged_inputs"] == 3, s
    torch.testing.assert_close(y, 2 * x)
