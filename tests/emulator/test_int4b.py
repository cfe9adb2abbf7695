"""int4b_t tensors (opkit_emu/tensor.h, cast.h, level0_mixed.h) against numpy packing. CANN's layout (asc-devkit
82b89a15 impl/basic_api/kernel_tensor_impl.h:195-196, 325-328): two elements to a byte, element 2k in the low nibble;
sizes and offsets in elements, bytes = n / 2; sizeof(int4b_t) 1 (impl/utils/common_types.h:57-80). Cast half <->
int4b_t as A2's table has it (Cast.md:221, 226): half -> int4b_t rounds by the mode and saturates to [-8, 7] (CANN's
cast sample golden), int4b_t -> half is exact, CAST_NONE only. The level-0 form packs 128 half lanes into 64 bytes
(dstRepStride 2, CANN's cast sample). AscendAntiQuant takes an int4b_t source on A2 (ascend_antiquant_c220_impl.h:36-41). Broken rules: an odd view offset or SetSize (api-argument), a round mode the
table lacks (dtype-unsupported), an index past the end (tensor-bounds), a DataCopy not a multiple of 32 bytes
(datacopy-length), int4b_t UB nothing wrote reaching GM (ub-uninitialized), a pair A2 lacks (compile error)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

SRC = Path(__file__).resolve().parent / "test_int4b.cpp"
N = 256


def _x():
    rng = np.random.default_rng(7)
    x = rng.uniform(-10, 10, N).astype(np.float16)
    x[:8] = [0.5, 1.5, -0.5, -2.5, 7.4, 7.6, -8.4, -8.6]  # ties to even, both saturation edges
    return x


def _pack(v):
    """Elements (int, any length) -> bytes, element 2k in the low nibble; an odd tail's high nibble 0."""
    v = np.asarray(v, np.int64) & 0xF
    if len(v) % 2:
        v = np.append(v, 0)
    return (v[0::2] | (v[1::2] << 4)).astype(np.uint8)


def _unpack(b):
    b = np.asarray(b, np.uint8).astype(np.int64)
    v = np.empty(2 * len(b), np.int64)
    v[0::2], v[1::2] = b & 0xF, b >> 4
    return np.where(v >= 8, v - 16, v)


def _run(gxx, tmp_path, mode):
    exe = tmp_path / f"int4b{mode}"
    r = gxx(SRC, exe, [f"-DMODE={mode}"])
    if r.returncode != 0:
        return r
    _x().tofile(tmp_path / "x.bin")
    return subprocess.run([str(exe), str(tmp_path)], capture_output=True, text=True, timeout=120)


def test_int4b_tensors_match_numpy_packing(gxx, tmp_path):
    out = _run(gxx, tmp_path, 0)
    assert out.returncode == 0, out.stdout + out.stderr
    x = _x().astype(np.float64)
    q = np.clip(np.rint(x), -8, 7).astype(np.int64)  # CAST_RINT: ties to even (0.5 -> 0, 1.5 -> 2, -2.5 -> -2)
    assert list(q[:8]) == [0, 2, 0, -2, 7, 7, -8, -8]
    want = q.copy()
    want[255] = 7  # count 255: the last byte's high nibble keeps the 0x77 fill
    back = np.fromfile(tmp_path / "back.bin", np.float16)
    assert np.array_equal(back.astype(np.int64), want)  # int4b_t -> half of the Cast's result, exact
    want_gm = want.copy()
    want_gm[1] = -8  # GlobalTensor::SetValue(1, -8) after the copy out
    p4 = np.fromfile(tmp_path / "p4.bin", np.uint8)
    assert np.array_equal(p4, _pack(want_gm)) and np.array_equal(_unpack(p4), want_gm)
    l0 = np.fromfile(tmp_path / "l0.bin", np.uint8)
    assert np.array_equal(l0, _pack(np.clip(np.floor(x), -8, 7)))  # level-0, CAST_FLOOR, 2 x 128 lanes
    # AscendAntiQuant from int4b_t, half: (v + 1.5) then x 0.25, each rounded in half (as for int8_t)
    aq = np.fromfile(tmp_path / "aq.bin", np.float16)
    ref = ((want.astype(np.float16) + np.float16(1.5)).astype(np.float16) * np.float16(0.25)).astype(np.float16)
    assert np.array_equal(aq.view(np.uint16), ref.view(np.uint16))
    sc = np.fromfile(tmp_path / "sc.bin", np.int32)
    assert list(sc[:11]) == [256, 192, want[65], -5, 3, 0x3B, want[11], -8, 256, 100, 1]


def test_int4b_cast_poison_is_per_element(gxx, tmp_path):
    """Count-form Cast with an int4b_t side marks poison per element / byte, as the other Casts (and CANN's vconv)
    are element-wise: a tile whose first 128 lanes only were written, cast both ways, copies out its written part."""
    out = _run(gxx, tmp_path, 11)
    assert out.returncode == 0, out.stdout + out.stderr
    q = np.clip(np.rint(_x()[:128].astype(np.float64)), -8, 7)
    assert np.array_equal(np.fromfile(tmp_path / "p4.bin", np.uint8)[:64], _pack(q))
    assert np.array_equal(np.fromfile(tmp_path / "back.bin", np.float16)[:128].astype(np.int64), q)


def test_int4b_level0_strides_leave_the_gaps(gxx, tmp_path):
    """int4_at with a DataBlock stride: {2, 1, 4, 8} puts lanes 64..127 at elements 128..191 (bytes 64..95); the
    bytes between keep the 0x77 fill."""
    out = _run(gxx, tmp_path, 19)
    assert out.returncode == 0, out.stdout + out.stderr
    q = np.clip(np.floor(_x()[:128].astype(np.float64)), -8, 7)
    l0 = np.fromfile(tmp_path / "l0.bin", np.uint8)
    assert np.array_equal(l0[:32], _pack(q[:64])) and np.array_equal(l0[64:96], _pack(q[64:]))
    assert (l0[32:64] == 0x77).all() and (l0[96:] == 0x77).all()


def test_int4b_gm_bounds_warning_counts_elements(gxx, tmp_path):
    out = _run(gxx, tmp_path, 18)  # 64 bytes = 128 elements into a 100-element view
    assert out.returncode == 0, out.stdout + out.stderr
    assert "element 100 is beyond the SetGlobalBuffer size: the access covers elements [0, 128) and this view holds " \
           "100 elements" in out.stderr, out.stderr


@pytest.mark.parametrize("mode,rule,text", [
    (1, "[api-argument] LocalTensor::operator[]", "int4b_t offset 3 is odd"),
    (2, "[api-argument] LocalTensor::SetSize", "int4b_t size 5 is odd"),
    (3, "[dtype-unsupported] Cast", "RoundMode CAST_RINT is not supported for Cast int4b_t -> half"),
    (4, "[dtype-unsupported] Cast", "RoundMode CAST_ODD is not supported for Cast half -> int4b_t"),
    (5, "[tensor-bounds] LocalTensor::GetValue", "index 100 is out of range for a tensor of 100 elements"),
    (6, "[datacopy-length] DataCopy", "count 40"),
    (7, "[ub-uninitialized]", ""),
    (12, "[ub-uninitialized] DataCopy", ""),
    # a byte-grained shadow for nibbles: a byte one nibble of which nothing wrote, or whose nibble came from poison
    (13, "[ub-uninitialized] DataCopy", "element 127"),  # odd-count Cast into a fresh buffer: the last byte
    (14, "[ub-uninitialized] LocalTensor::GetValue", ""),  # level 0 writes lane 0 of a fresh byte only
    (15, "[ub-uninitialized] LocalTensor::GetValue", ""),  # level 0: lane 0 from poison, lane 1 from written data
    (9, "[api-argument] GlobalTensor::operator[] at", "int4b_t offset 3 is odd"),
    (10, "[api-argument] LocalTensor(pos, addr, tileSize)", "int4b_t tileSize 7 is odd"),
    (16, "[api-argument] TBuf::Get", "int4b_t len 5 is odd"),  # CANN truncates to 2 bytes (kernel_tbuf_impl.h:34-35)
    (17, "[api-argument] TBuf::GetWithOffset", "int4b_t size 7 is odd"),
])
def test_int4b_rules(gxx, tmp_path, mode, rule, text):
    out = _run(gxx, tmp_path, mode)
    msg = out.stdout + out.stderr
    assert out.returncode != 0 and rule in msg and text in msg, msg


def test_int4b_cast_pairs_a2_lacks_do_not_compile(gxx, tmp_path):
    r = _run(gxx, tmp_path, 8)  # Cast<float, int4b_t>: not in A2's table
    assert r.returncode != 0 and "Cast between these element types does not exist" in r.stderr, r.stderr[-2000:]
