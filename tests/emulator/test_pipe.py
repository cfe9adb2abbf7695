"""Programming model (facts sheet §1): a double-buffered multi-block kernel with TQue depth 2, TBuf
GetWithOffset, SetFlag/WaitFlag, PipeBarrier, GET_TILING_DATA/REGISTER_TILING_DEFAULT, TILING_KEY_IS,
GetBlockIdx/GetBlockNum; queue bookkeeping; results identical for any host thread count."""
from __future__ import annotations

import numpy as np
import pytest

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("total,tile,blocks", [(1000, 64, 1), (4099, 256, 7), (50, 8, 8), (12345, 512, 48)])
@pytest.mark.parametrize("key", [0, 1])
def test_double_buffered_multiblock(emu, total, tile, blocks, key):
    x = RNG.standard_normal(total).astype(np.float32)
    outs = []
    for threads in (1, 2):
        y, info = np.zeros(total, np.float32), np.zeros(2 * blocks, np.int32)
        st = emu("pipe").scaler([x, y, info, None, np.array([total, tile], np.uint32).view(np.uint8)],
                                block_dim=blocks, tiling_key=key, threads=threads)
        np.testing.assert_array_equal(y, x * np.float32(2) + np.float32(key))
        np.testing.assert_array_equal(info, np.stack([np.arange(blocks), np.full(blocks, blocks)], 1).ravel())
        outs.append(st)
    per_tile = tile * 4
    assert outs[0]["ub_high_water"] == 2 * per_tile + 2 * per_tile + 2 * per_tile
    assert outs[0]["blocks"] == blocks and len(outs[0]["per_block"]) == blocks
    assert outs[0]["gm_write_bytes"] == total * 4 + 8 * blocks
    assert outs[0]["op_elems"] == {"Muls": total, "Adds": total}
    for k in ("gm_read_bytes", "gm_write_bytes", "vector_elems", "vector_repeats", "ub_high_water"):
        assert outs[0][k] == outs[1][k]


def test_queue_bookkeeping(emu):
    out = np.zeros(8, np.int32)
    emu("pipe").queue_state([out])
    # 100 B rounds to 128 B = 64 halves; depth 2; views shrink; ReinterpretCast keeps the bytes
    assert out.tolist() == [64, 1, 2, 0, 0, 54, 32, 192]


def test_tbuf_queue_form(emu):
    """pipe.InitBuffer(tbuf, 1, len) (CANN's TBuf is a TQueBind, public kernels write it) is the TBuf's one buffer;
    a count other than 1 is not defined for a TBuf and stops with api-argument."""
    from opkit.errors import EmulatorError
    x = RNG.standard_normal(32).astype(np.float32)
    y = np.zeros(33, np.float32)
    emu("pipe").tbuf_queue_form([x, y, np.array([1], np.uint32)])
    np.testing.assert_array_equal(y[:32], x * np.float32(3))
    assert y[32] == 128 / 4                    # 100 bytes rounded up to 128: 32 floats
    with pytest.raises(EmulatorError) as e:
        emu("pipe").tbuf_queue_form([x, y, np.array([2], np.uint32)])
    assert "api-argument" in str(e.value) and "num 2" in str(e.value)


def test_user_position_enque_deque(emu):
    """TQueBind::EnQue / DeQue<srcUserPos, dstUserPos, T> (asc-devkit 82b89a15 include/basic_api/kernel_tpipe.h:74-82):
    the data path works through one bound buffer; a DeQue naming another pair than its EnQue is queue-protocol,
    as CANN's CPU debug build asserts (impl/basic_api/kernel_tquebind_impl.h:466-469)."""
    from opkit.errors import EmulatorError
    x = RNG.standard_normal(32).astype(np.float32)
    y = np.zeros(32, np.float32)
    emu("pipe").user_pos_queue([x, y, np.array([0], np.uint32)])
    np.testing.assert_array_equal(y, x + np.float32(1))
    with pytest.raises(EmulatorError) as e:
        emu("pipe").user_pos_queue([x, y, np.array([1], np.uint32)])
    assert e.value.rule == "queue-protocol" and "another position pair" in e.value.detail


def test_pipe_init_replans_from_offset_zero(emu):
    """TPipe::Init (asc-devkit 82b89a15 impl/basic_api/kernel_tpipe_impl.h:88-97: ResetPool): after it the next
    buffer starts where the first one did."""
    x = RNG.standard_normal(64).astype(np.float32)
    out = np.zeros(64, np.float32)
    emu("pipe").pipe_init([x, out])
    assert out[0] == 1
    np.testing.assert_array_equal(out[1:], x[1:])


def test_untyped_deque(emu):
    """TQue::DeQue() without a type (asc-devkit 82b89a15 include/basic_api/kernel_tpipe.h:80, TBufHandle =
    uint8_t* per impl/basic_api/kernel_tensor_base.h:29): dequeues and waits like DeQue<T>, returns the buffer's
    address; a second one on the empty queue is queue-protocol."""
    from opkit.errors import EmulatorError
    x = RNG.standard_normal(32).astype(np.float32)
    y = np.zeros(40, np.float32)
    emu("pipe").untyped_deque([x, y, np.array([0], np.uint32)])
    np.testing.assert_array_equal(y[:32], x * np.float32(2))
    assert y[32] == 1
    with pytest.raises(EmulatorError) as e:
        emu("pipe").untyped_deque([x, y, np.array([1], np.uint32)])
    assert e.value.rule == "queue-protocol" and "empty queue" in e.value.detail
