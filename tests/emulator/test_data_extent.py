"""The data extent of a GM argument (launch ABI v3 arg_data_bytes; opkit_emu/datacopy.h sink_rows; docs/emulator.md
"Data extent"): poison (UB nothing wrote) copied to GM is an error only inside the tensor's data. ops-nn ReluV3 float16
on (3, 72) copies its last tile of 216 halves out as 224 (op_kernel/relu_v3.h:148-149,155 at e5c3fa93): 8 unwritten
lanes land in bytes [432, 448) of a 432-byte output, inside the allocation the device gives it (ALIGN_UP(432, 32) +
32 = 480: hicann/ops-test-kit rts_interface.py get_npu_aligned_size, docs/cann.md) and never read -- right on the
device, so it must pass here; the same block reaching into the data still fails, and the allocation's end is still
gm-bounds."""
from __future__ import annotations

import copy
import ctypes
import types
from pathlib import Path

import numpy as np
import pytest

from conftest import CACHE
from opkit.emulator import abi
from opkit.emulator.abi import KernelModule
from opkit.emulator.modules import compile_module
from opkit.errors import EmulatorError

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def mod():
    return KernelModule(compile_module(HERE / "test_data_extent.cpp", "emu_data_extent", 2, CACHE / "modules",
                                       opt="-O1"))


def run(mod, mode, n, alloc, data, members=None):
    y = np.zeros(alloc, np.uint8)
    mod.launch([y, np.array([mode, n], np.uint32)], 1, data_bytes=[data, None], list_members=[members, None])
    return y


@pytest.mark.parametrize("mode", [0, 1])   # plain DataCopy, and the atomic copy
def test_a_partly_written_last_block_may_land_in_padding(mod, mode):
    y = run(mod, mode, 216, 480, 432)          # ReluV3's figures: 216 halves of data, 224 copied
    np.testing.assert_array_equal(y[:432].view(np.float16), np.ones(216, np.float16))


@pytest.mark.parametrize("mode", [0, 1])
def test_the_same_block_inside_the_data_still_fails(mod, mode):
    for data in (434, None):                   # one lane of the garbage inside the data; no extent: all is data
        with pytest.raises(EmulatorError) as e:
            run(mod, mode, 216, 480, data)
        assert e.value.rule == "ub-uninitialized" and e.value.call == "DataCopy", str(e.value)


def test_padding_ends_at_the_allocation(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 0, 216, 440, 432)             # the block runs past the buffer: out of bounds as before
    assert e.value.rule == "gm-bounds"


def test_strided_rows_check_only_the_bytes_in_the_data(mod):
    # 2 rows of 64 bytes; 50 halves (100 bytes) written: row 1 straddles a 100-byte extent
    y = run(mod, 2, 50, 160, 100)
    np.testing.assert_array_equal(y[:100].view(np.float16), np.ones(50, np.float16))
    with pytest.raises(EmulatorError) as e:
        run(mod, 2, 50, 160, 102)
    assert e.value.rule == "ub-uninitialized" and e.value.call == "DataCopyPad", str(e.value)


def test_an_extent_past_the_buffer_is_refused(mod):
    with pytest.raises(ValueError, match="data_bytes 481"):
        run(mod, 0, 216, 480, 481)


def test_strided_datacopy_checks_only_the_rows_in_the_data(mod):
    # 3 rows of 32 B, GM pitch 64 (dstGap 1), 16 halves written: row 0 defined, rows 1-2 (GM [64, 96), [128, 160))
    # poison. A data end inside the gap (40) or at row 1's start (64) passes; 66 reaches into row 1
    for data in (32, 40, 64):
        y = run(mod, 3, 16, 160, data)
        np.testing.assert_array_equal(y[:32].view(np.float16), np.ones(16, np.float16))
    for data in (66, None):
        with pytest.raises(EmulatorError) as e:
            run(mod, 3, 16, 160, data)
        # the element counts from the start of the whole copy, split or not (before: "element 0" with extent 66)
        assert e.value.rule == "ub-uninitialized" and "element 16 (UB offset 32)" in str(e.value), str(e.value)


def test_datacopy_pad_rows_with_a_data_end_mid_lane(mod):
    # 3 rows of 20 B, GM pitch 32, UB rows 32 B, 21 halves written: UB [0, 20) and [32, 42) defined, GM data [0, 20)
    # and [32, 42). 43 ends inside the next lane, which counts whole
    y = run(mod, 4, 21, 96, 42)
    np.testing.assert_array_equal(y[32:42].view(np.float16), np.ones(5, np.float16))
    for data in (43, 44, 52, 96):
        with pytest.raises(EmulatorError) as e:
            run(mod, 4, 21, 96, data)
        # element 15: row 0's 10 halves + 5 (before: "element 5" with extent 43 / 44)
        assert e.value.rule == "ub-uninitialized" and "element 15 (UB offset 42)" in str(e.value), str(e.value)


def test_poison_written_into_padding_is_poison_when_loaded_back(mod):
    # mode 5: ReluV3's tail (8 unwritten lanes into y's padding [432, 448)), then y[208:224] loaded into UB and
    # copied into y[0:16], inside the data: its lanes 8-15 are that garbage, so the copy fails (before: it passed,
    # and y[8:16] held whatever UB had)
    with pytest.raises(EmulatorError) as e:
        run(mod, 5, 216, 480, 432)
    assert e.value.rule == "ub-uninitialized" and e.value.call == "DataCopy", str(e.value)
    assert "element 8 " in str(e.value), str(e.value)


def test_padding_written_again_loads_as_defined(mod):
    y = run(mod, 6, 216, 480, 432)             # poison, then defined halves over it: the load is defined again
    np.testing.assert_array_equal(y[:32].view(np.float16), np.full(16, 2, np.float16))
    # the rounded-up tail loaded, doubled element-wise and stored back rounded up: the poison lanes only go back
    # into padding
    y = run(mod, 8, 216, 480, 432)
    np.testing.assert_array_equal(y[:432].view(np.float16), np.full(216, 2, np.float16))


def test_padding_nobody_wrote_is_garbage_where_it_is_used(mod):
    """On the device a tensor's bytes past its data hold what the memory held before (aclrtMalloc does not initialise,
    torch_npu's caching allocator reuses blocks as they are), so padding nobody wrote is poison from the launch's
    start: loaded into the data it fails (mode 7; before, it loaded as the host's bytes and passed), and so does a
    GlobalTensor::GetValue of it (mode 24; before, it passed)."""
    with pytest.raises(EmulatorError) as e:
        run(mod, 7, 216, 480, 432)
    assert e.value.rule == "ub-uninitialized" and e.value.call == "DataCopy" and "element 8 " in str(e.value), \
        str(e.value)
    with pytest.raises(EmulatorError) as e:
        run(mod, 24, 216, 480, 432)
    assert e.value.rule == "ub-uninitialized" and e.value.call == "GlobalTensor::GetValue", str(e.value)
    assert "GM byte 440 of kernel argument 0 is garbage" in str(e.value), str(e.value)
    # a reduction over the aligned tail reads the garbage: its result is garbage (mode 23, n 218)
    with pytest.raises(EmulatorError) as e:
        run(mod, 23, 218, 480, 432)
    assert e.value.rule == "ub-uninitialized" and "element 0 " in str(e.value), str(e.value)
    # no extent given: all of the buffer is data, nothing is padding (the rule before v3)
    y = run(mod, 7, 216, 480, None)
    np.testing.assert_array_equal(y[:32].view(np.float16), np.zeros(16, np.float16))


def test_padding_nobody_wrote_loaded_but_not_used_passes(mod):
    """The common aligned load of a ragged tail (mode 23: y[0, 224) loaded, 8 of its halves padding, doubled
    element-wise): stored back rounded up (n 216, the garbage lanes into padding again), stored back as the data only
    (n 217, DataCopyPad), or reduced over the data only (n 219) -- right on the device, so it passes."""
    host = np.zeros(480, np.uint8)
    host[:432] = np.arange(216, dtype=np.float16).view(np.uint8)
    for n in (216, 217):
        y = host.copy()
        mod.launch([y, np.array([23, n], np.uint32)], 1, data_bytes=[432, None])
        np.testing.assert_array_equal(y[:432].view(np.float16), 2 * np.arange(216, dtype=np.float16))
    y = np.zeros(480, np.uint8)
    y[:432] = np.ones(216, np.float16).view(np.uint8)
    mod.launch([y, np.array([23, 219], np.uint32)], 1, data_bytes=[432, None])
    assert y[:2].view(np.float16)[0] == 432     # 216 doubled ones, exact in float16



def test_a_kernel_arguments_padding_is_garbage_again_at_the_next_launch(mod):
    """A known limit (docs/emulator.md "Known limits of the data extent"): a kernel argument's padding state lives for
    one launch, as the emulator cannot tell when the caller's buffer dies or is handed to another tensor. Launch 1
    writes defined halves over all of y's padding (mode 0, n 240); launch 2 on the same host buffer loads it into
    the data (mode 7) and fails, where on the device it would read what launch 1 wrote. (A run-asc program's
    aclrtMalloc buffers keep it: test_asc_padding.py.)"""
    y = np.zeros(480, np.uint8)
    mod.launch([y, np.array([0, 240], np.uint32)], 1, data_bytes=[432, None])
    with pytest.raises(EmulatorError) as e:
        mod.launch([y, np.array([7, 216], np.uint32)], 1, data_bytes=[432, None])
    assert e.value.rule == "ub-uninitialized" and "element 8 " in str(e.value), str(e.value)

def test_padding_nobody_wrote_left_out_by_a_mask_passes(mod):
    """The aligned tail loaded with its padding and used under a mask that leaves the padding lanes out (mode 26):
    WholeReduceSum with a mask of the 88 data lanes of the last repeat (n 0), and Compare / Select over 128 lanes
    whose last mask byte mixes data lanes and padding lanes, then only the data stored (n 1) -- right on the device,
    so it passes with the right values; a mask taking in padding lanes still fails (n 2)."""
    y = np.zeros(480, np.uint8)
    y[:432] = np.ones(216, np.float16).view(np.uint8)
    mod.launch([y, np.array([26, 0], np.uint32)], 1, data_bytes=[432, None])
    assert y[:2].view(np.float16)[0] == 176     # 88 doubled ones
    y = np.zeros(480, np.uint8)
    y[:428] = np.arange(214, dtype=np.float16).view(np.uint8)
    mod.launch([y, np.array([26, 1], np.uint32)], 1, data_bytes=[428, None])
    np.testing.assert_array_equal(y[192:428].view(np.float16), 2 * np.arange(96, 214, dtype=np.float16))
    with pytest.raises(EmulatorError) as e:     # the mask taking in the 8 padding lanes: the sum is garbage
        run(mod, 26, 2, 480, 432)
    assert e.value.rule == "ub-uninitialized", str(e.value)

def test_initoutput_over_padding_garbage_defines_it(mod):
    """InitOutput writes a defined value over padding a tail's garbage landed in, so loading it back into the data
    passes (mode 25, n 216; before, InitOutput left the garbage remembered and this failed ub-uninitialized); under
    SetAtomicAdd it adds to the garbage, which stays garbage (n 217)."""
    y = run(mod, 25, 216, 480, 432)
    np.testing.assert_array_equal(y[:32].view(np.float16), np.full(16, 2, np.float16))
    with pytest.raises(EmulatorError) as e:
        run(mod, 25, 217, 480, 432)
    assert e.value.rule == "ub-uninitialized" and "element 9 " in str(e.value), str(e.value)


def test_scalar_reads_and_writes_of_padding_garbage(mod):
    """GlobalTensor::GetValue of padding a tail's garbage landed in fails as a scalar read of poison UB does (mode 14;
    before, it passed and read whatever UB held); GlobalTensor::SetValue writes a defined value over it, so reading it
    and loading it back into the data pass (mode 15; before, the load still restored the poison and failed); a list
    member's padding alike."""
    for data, members in ((432, None), (None, [(0, 432, 480), (480, 432, 480)])):
        with pytest.raises(EmulatorError) as e:
            run(mod, 14, 216, 960, data, members)
        assert e.value.rule == "ub-uninitialized" and e.value.call == "GlobalTensor::GetValue", str(e.value)
        assert "GM byte 440 of kernel argument 0 is garbage" in str(e.value), str(e.value)
        y = run(mod, 15, 216, 960, data, members)
        np.testing.assert_array_equal(y[:32].view(np.float16), np.r_[np.ones(8), np.full(8, 3)].astype(np.float16))


def test_a_datacopypad_load_brings_the_padding_garbage_back(mod):
    """A DataCopyPad GM->UB load of padding garbage gives poison UB, as DataCopy's does (mode 22 as mode 5; before,
    DataCopyPad marked its rows defined after the load and lost that poison)."""
    with pytest.raises(EmulatorError) as e:
        run(mod, 22, 216, 480, 432)
    assert e.value.rule == "ub-uninitialized" and "element 8 " in str(e.value), str(e.value)
    y = run(mod, 22, 224, 480, 432)   # all 224 halves written: the padding is defined, the load too
    np.testing.assert_array_equal(y[:32].view(np.float16), np.ones(16, np.float16))


def test_int4b_scalar_reads_and_writes_of_padding_garbage(mod):
    """GlobalTensor<int4b_t>::GetValue of an element whose byte a tail's garbage landed in fails, naming its nibble
    (mode 20, v 0; before, int4b_t scalar access was not tracked and this passed); SetValue writes one nibble, so that
    element reads back (v 1) while the other half of the byte is still garbage (v 2); both written, the byte is
    clean (v 3)."""
    with pytest.raises(EmulatorError) as e:
        run(mod, 20, 216, 480, 432)
    assert e.value.rule == "ub-uninitialized" and "GM byte 440 (its low nibble" in str(e.value), str(e.value)
    y = run(mod, 20, 217, 480, 432)
    assert y[440] & 0xF == 1
    with pytest.raises(EmulatorError) as e:
        run(mod, 20, 218, 480, 432)
    assert e.value.rule == "ub-uninitialized" and "GM byte 440 (its high nibble" in str(e.value), str(e.value)
    y = run(mod, 20, 219, 480, 432)
    assert y[440] == 0x21


LIST = [(0, 432, 480), (480, 432, 480)]   # two members of 216 halves, each in its ALIGN_UP(432, 32) + 32 bytes


def test_list_members_own_padding(mod):
    """A tensor list's buffer holds several tensors (cannproject list_buffer); each member's tail block may land in
    that member's own padding, as a lone tensor's may (before: one extent per buffer, so the list was all data and
    this failed ub-uninitialized -- the foreach ops' tails)."""
    y = run(mod, 9, 216, 960, None, LIST)
    for off in (0, 480):
        np.testing.assert_array_equal(y[off:off + 432].view(np.float16), np.ones(216, np.float16))
    with pytest.raises(EmulatorError) as e:   # no members: the whole list is data, as before
        run(mod, 9, 216, 960, None)
    assert e.value.rule == "ub-uninitialized", str(e.value)


def test_list_members_data_and_crossings_still_fail(mod):
    # member 1's data reaching one lane into its tail's garbage
    with pytest.raises(EmulatorError) as e:
        run(mod, 9, 216, 960, None, [(0, 432, 480), (480, 434, 480)])
    assert e.value.rule == "ub-uninitialized" and e.value.call == "DataCopy", str(e.value)
    # a copy from member 0's padding into member 1's data: garbage lands in member 1's data
    with pytest.raises(EmulatorError) as e:
        run(mod, 10, 216, 960, None, LIST)
    assert e.value.rule == "ub-uninitialized", str(e.value)


def test_list_members_outside_the_buffer_are_refused(mod):
    with pytest.raises(RuntimeError, match="tensor-list member"):
        run(mod, 9, 216, 960, None, [(0, 432, 480), (480, 432, 512)])
    # an offset whose end wraps past 2^64 (before: 2^64 - 32 + 64 = 32 <= 960, accepted)
    with pytest.raises(RuntimeError, match="tensor-list member"):
        run(mod, 9, 216, 960, None, [(2**64 - 32, 0, 64), (480, 432, 480)])
    with pytest.raises(ValueError, match="non-negative"):
        run(mod, 9, 216, 960, None, [(-32, 64, 64)])
    with pytest.raises(ValueError, match="list_members has 3 entries for 2 buffers"):
        mod.launch([np.zeros(960, np.uint8), np.array([9, 216], np.uint32)], 1, list_members=[LIST, None, None])


def test_a_zero_byte_list_member_is_all_padding(mod):
    # a member's data 0 is 0 bytes (its whole allocation padding), not arg_data_bytes' "all": mode 9's tail into
    # member 0 passes; member 1 keeps its data
    run(mod, 9, 216, 960, None, [(0, 0, 480), (480, 432, 480)])
    with pytest.raises(EmulatorError) as e:
        run(mod, 9, 216, 960, None, [(0, 0, 480), (480, 434, 480)])
    assert e.value.rule == "ub-uninitialized", str(e.value)


def test_list_member_padding_poison_loaded_back(mod):
    """gm_pad.h with members: a tail into member 0's padding, loaded back and copied into its data, fails as a lone
    tensor's does (mode 5; before gm_pad.h knew members, the list's padding table began at the list's data end, so
    this passed); written again (6) or a rounded-up tail round trip (8): passes; never written (7): garbage too."""
    with pytest.raises(EmulatorError) as e:
        run(mod, 5, 216, 960, None, LIST)
    assert e.value.rule == "ub-uninitialized" and "element 8 " in str(e.value), str(e.value)
    y = run(mod, 6, 216, 960, None, LIST)
    np.testing.assert_array_equal(y[:32].view(np.float16), np.full(16, 2, np.float16))
    with pytest.raises(EmulatorError) as e:   # member 0's padding nobody wrote: garbage from the start
        run(mod, 7, 216, 960, None, LIST)
    assert e.value.rule == "ub-uninitialized" and "element 8 " in str(e.value), str(e.value)
    y = run(mod, 8, 216, 960, None, LIST)
    np.testing.assert_array_equal(y[:432].view(np.float16), np.full(216, 2, np.float16))


def test_a_store_across_members_clears_the_padding_it_writes(mod):
    """A defined copy running from member 0's data over all of its padding into member 1 writes that padding as a
    lone tensor's store does: the tail's garbage remembered there is gone, so loading member 0's last block back
    into its data passes (mode 11; before, the crossing copy took the strict path and left the poison, and this
    failed ub-uninitialized where the device reads 2s). An atomic crossing copy adds to the garbage, so the same
    load still fails (mode 12)."""
    y = run(mod, 11, 216, 960, None, LIST)
    np.testing.assert_array_equal(y[:32].view(np.float16), np.full(16, 2, np.float16))
    with pytest.raises(EmulatorError) as e:
        run(mod, 12, 216, 960, None, LIST)
    assert e.value.rule == "ub-uninitialized" and "element 8 " in str(e.value), str(e.value)


def test_a_load_across_members_brings_the_padding_garbage_back(mod):
    """A load running from member 0's data over its padding into member 1 reads that padding as padding: the tail's
    garbage remembered there comes back into UB as poison, as a lone tensor's load of its own padding brings it
    (mode 5), so storing it into the data fails where it is used (mode 16; before, the crossing load called all of
    it data and this passed). The same span stored straight back is fine on the device and passes (mode 17: its
    garbage lanes land in padding again)."""
    with pytest.raises(EmulatorError) as e:
        run(mod, 16, 216, 960, None, LIST)
    assert e.value.rule == "ub-uninitialized" and "element 8 " in str(e.value), str(e.value)
    y = run(mod, 17, 216, 960, None, LIST)
    np.testing.assert_array_equal(y[:432].view(np.float16), np.ones(216, np.float16))
    np.testing.assert_array_equal(y[480:960].view(np.float16), np.zeros(240, np.float16))


def test_a_load_of_rows_across_members_brings_the_padding_garbage_back(mod):
    """A DataCopyPad load of 2 rows, row 1 running from member 0's last data block over its padding into member 1
    (mode 21): the tail's garbage in that padding comes back into row 1's UB (u[56, 64)), so storing both rows into
    the data fails naming element 56, counted from the store's start; row 0 alone (member 0's data) stores fine."""
    with pytest.raises(EmulatorError) as e:
        run(mod, 21, 216, 960, None, LIST)
    assert e.value.rule == "ub-uninitialized" and "element 56 " in str(e.value), str(e.value)
    y = run(mod, 21, 217, 960, None, LIST)
    np.testing.assert_array_equal(y[:96].view(np.float16), np.ones(48, np.float16))


def test_a_store_across_members_checks_each_members_padding_as_padding(mod):
    """One copy from member 0's last data halves over all of its padding (garbage: u[8, 32) never written) into
    member 1's first block: the device is fine, so it passes (mode 18; before, the crossing store was checked as
    all data and failed ub-uninitialized), and the garbage is remembered: loaded back into the data it fails
    (n 217). Garbage in member 1's data still fails, naming its element (n 218: u[40, 48))."""
    y = run(mod, 18, 216, 960, None, LIST)
    h = y.view(np.float16)
    np.testing.assert_array_equal(h[208:216], np.full(8, 4, np.float16))
    np.testing.assert_array_equal(h[240:256], np.full(16, 5, np.float16))
    with pytest.raises(EmulatorError) as e:
        run(mod, 18, 217, 960, None, LIST)
    assert e.value.rule == "ub-uninitialized" and "element 8 " in str(e.value), str(e.value)
    with pytest.raises(EmulatorError) as e:
        run(mod, 18, 218, 960, None, LIST)
    assert e.value.rule == "ub-uninitialized" and e.value.call == "DataCopy" and "element 40 " in str(e.value), \
        str(e.value)
    # garbage in member 0's data before its padding (u[0, 8) never written, n 219) fails too, naming element 0
    with pytest.raises(EmulatorError) as e:
        run(mod, 18, 219, 960, None, LIST)
    assert e.value.rule == "ub-uninitialized" and e.value.call == "DataCopy" and "element 0 " in str(e.value), \
        str(e.value)
    # without members the list is one tensor, all data: the same copy fails as before
    with pytest.raises(EmulatorError) as e:
        run(mod, 18, 216, 960, None)
    assert e.value.rule == "ub-uninitialized" and "element 8 " in str(e.value), str(e.value)
    # rows: a DataCopyPad whose row 0 lands all in member 0's padding, row 1 in member 1's data (mode 19); the
    # element is counted from the copy's start (row 1's lane 8: element 24)
    y = run(mod, 19, 216, 960, None, LIST)
    np.testing.assert_array_equal(y.view(np.float16)[240:256], np.full(16, 6, np.float16))
    with pytest.raises(EmulatorError) as e:
        run(mod, 19, 218, 960, None, LIST)
    assert e.value.rule == "ub-uninitialized" and e.value.call == "DataCopyPad" and "element 24 " in str(e.value), \
        str(e.value)


def _baseline_fails(mod):
    # mode 9 without members: the whole list is data, its tails ub-uninitialized (test_list_members_own_padding)
    with pytest.raises(EmulatorError) as e:
        run(mod, 9, 216, 960, None)
    assert e.value.rule == "ub-uninitialized", str(e.value)


def test_a_refused_launch_does_not_leave_its_members_to_the_next(mod):
    """Members set for a launch the module refuses are consumed by it (before: left pending, the thread's next
    launch took them as its own and passed where it must fail)."""
    y, tiling = np.zeros(960, np.uint8), np.array([9, 216], np.uint32)
    with pytest.raises(RuntimeError, match="takes 2 GM arguments, launch passed 3"):
        mod.launch([y, tiling, np.zeros(4, np.uint8)], 1, list_members=[LIST, None, None])
    _baseline_fails(mod)
    mod._set_list_members([LIST, None])   # then a launch refused for its arg_data_bytes
    assert _raw_launch(mod, y, tiling, 961).status == 2
    _baseline_fails(mod)


def test_a_refused_member_list_sets_none(mod):
    """Python checks every buffer's members before setting any, and clears the ones set if the module refuses a later
    one (before: buffer 0's stayed pending after buffer 1's ValueError)."""
    with pytest.raises(ValueError) as e:
        mod.launch([np.zeros(960, np.uint8), np.array([9, 216], np.uint32)], 1, list_members=[LIST, [("x", 1, 2)]])
    _baseline_fails(mod)
    assert "GM argument 1: list_members must be" in str(e.value), str(e.value)
    lms = [LIST] + [None] * 31 + [LIST]        # the module refuses argument 32 (past the ABI's 32)
    with pytest.raises(ValueError, match="GM argument 32: list_members refused"):
        mod._set_list_members(lms)
    _baseline_fails(mod)


def _raw_launch(mod, y, tiling, data_bytes0):
    # LaunchArgs filled directly (not through KernelModule.launch, whose ValueError comes first)
    a = abi.LaunchArgs()
    a.abi_version, a.block_dim, a.num_args = abi.ABI_VERSION, 1, 2
    for i, b in enumerate((y, tiling)):
        a.args[i], a.arg_bytes[i] = b.ctypes.data, b.nbytes
    a.arg_data_bytes[0], a.arg_data_bytes[1] = data_bytes0, 0
    r = abi.LaunchResult()
    mod._fn(ctypes.byref(a), ctypes.byref(r))
    return r


def test_an_empty_tensors_buffer_is_all_padding(mod):
    """data_bytes 0: an empty tensor, whose 32-byte device buffer (ALIGN_UP(0, 32) + 32) holds no data, so garbage
    copied into it is padding, as the device has it (mode 13; before, 0 was refused, and leaving it unset -- the
    ABI's 0, "all" -- failed ub-uninitialized). KernelModule.launch passes it as one member (0, 0, 32); the garbage
    is remembered, so loading it back and reading it still fails; unset, the buffer is all data as before."""
    run(mod, 13, 16, 32, 0)
    for n in (1, 2):                           # 2: nothing copied in, the buffer's bytes are garbage all the same
        with pytest.raises(EmulatorError) as e:
            run(mod, 13, n, 32, 0)
        assert e.value.rule == "ub-uninitialized" and e.value.call == "LocalTensor::GetValue", str(e.value)
    with pytest.raises(EmulatorError) as e:
        run(mod, 13, 16, 32, None)
    assert e.value.rule == "ub-uninitialized" and e.value.call == "DataCopy", str(e.value)
    with pytest.raises(ValueError, match=r"data_bytes -1 is outside \[0, 32\]"):
        run(mod, 13, 16, 32, -1)


def test_a_module_without_the_members_export_refuses_an_empty_extent(mod):
    """A module built before opkit_kernel_set_list_members (stood in for by hiding that export) cannot be told an
    extent is empty -- the ABI's arg_data_bytes 0 means "all" -- so KernelModule.launch refuses data_bytes 0 with
    "run `opkit build` again" rather than running it as all data (mode 13 would then fail ub-uninitialized) or
    calling a missing export; a launch it can express still runs."""
    old = copy.copy(mod)
    old._lib = types.SimpleNamespace()         # no opkit_kernel_set_list_members; the launch goes through old._fn
    y = run(old, 0, 216, 480, 432)
    np.testing.assert_array_equal(y[:432].view(np.float16), np.ones(216, np.float16))
    with pytest.raises(RuntimeError, match=r"has no opkit_kernel_set_list_members .*run `opkit build` again"):
        run(old, 13, 16, 32, 0)


def test_a_zero_data_extent_means_all_of_the_buffer(mod):
    tiling = np.array([0, 216], np.uint32)
    assert _raw_launch(mod, np.zeros(480, np.uint8), tiling, 432).status == 0
    r = _raw_launch(mod, np.zeros(480, np.uint8), tiling, 0)
    assert r.status == 1 and r.rule.decode() == "ub-uninitialized", r.message.decode()


def test_the_module_refuses_an_extent_past_the_buffer(mod):
    r = _raw_launch(mod, np.zeros(480, np.uint8), np.array([0, 216], np.uint32), 481)
    assert r.status == 2 and "arg_data_bytes 481 is past its arg_bytes 480" in r.message.decode(), r.message.decode()


def test_padding_poison_with_the_runtime_object():
    # the same write-then-read with the emulator runtime compiled once and linked (gm_pad.h's OPKIT_EMU_RT
    # functions live in the runtime object there): the same failure, and a launch after it starts clean
    rt = KernelModule(compile_module(HERE / "test_data_extent.cpp", "emu_data_extent", 2, CACHE / "modules",
                                     opt="-O1", runtime=True))
    with pytest.raises(EmulatorError) as e:
        run(rt, 5, 216, 480, 432)
    assert e.value.rule == "ub-uninitialized" and "element 8 " in str(e.value), str(e.value)
    y = run(rt, 6, 216, 480, 432)
    np.testing.assert_array_equal(y[:32].view(np.float16), np.full(16, 2, np.float16))
    with pytest.raises(EmulatorError) as e:   # padding nobody wrote (gm_pad_begin, in the runtime object there)
        run(rt, 7, 216, 480, 432)
    assert e.value.rule == "ub-uninitialized" and "element 8 " in str(e.value), str(e.value)
    run(rt, 9, 216, 960, None, LIST)           # the list members' table lives in the runtime object there too
