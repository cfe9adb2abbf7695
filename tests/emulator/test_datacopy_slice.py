"""DataCopy with SliceInfo (opkit_emu/datacopy_slice.h) against numpy slicing.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据搬运/DataCopy（GM与UB切片数据搬运）.md
(A2: 支持; the 调用示例 and 图1: src 3 x 87 float, {{16, 70, 7, 3, 87}, {0, 2, 1, 1, 3}} -> dst 2 x 48,
{{0, 47, 0, 3, 48}, {0, 1, 0, 1, 2}}); algorithm impl/basic_api/kernel_operator_data_copy_intf_impl.h:610-759.
A copy: exact."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

SRC = Path(__file__).resolve().parent / "test_datacopy_slice.cpp"


def _run(gxx, tmp_path, case):
    exe = tmp_path / f"slice{case}"
    r = gxx(SRC, exe, [f"-DCASE={case}"])
    assert r.returncode == 0, r.stderr[-3000:]
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)


def test_slice_round_trip_matches_numpy(gxx, tmp_path):
    x = np.arange(3 * 87, dtype=np.float32).reshape(3, 87)
    cols = np.r_[16:40, 47:71]           # two bursts of 24 floats, 7 apart, from column 16 (the page's figure)
    ub = x[[0, 2]][:, cols]              # what the GM -> UB copy must hold (2 x 48)
    want = np.full((3, 87), -1.0, np.float32)
    want[np.ix_([0, 2], cols)] = ub      # the UB -> GM copy puts it back where it came from
    out = _run(gxx, tmp_path, 0)
    assert out.returncode == 0, out.stdout + out.stderr
    got = np.array(out.stdout.split(), dtype=np.float32).reshape(3, 87)
    np.testing.assert_array_equal(got, want)


def test_slice_3d_with_tensor_shapes_matches_numpy(gxx, tmp_path):
    x = np.arange(3 * 87, dtype=np.float32)
    want = np.full(3 * 87, -1.0, np.float32)
    x3, w3 = x[:192].reshape(4, 3, 16), want[:192].reshape(4, 3, 16)   # dimension 0 innermost, as CANN counts
    w3[[0, 2], 1, :] = x3[[0, 2], 1, :]
    out = _run(gxx, tmp_path, 7)
    assert out.returncode == 0, out.stdout + out.stderr
    np.testing.assert_array_equal(np.array(out.stdout.split(), dtype=np.float32), want)


@pytest.mark.parametrize("case, rule, words", [
    (1, "api-argument", "is not (N - 1) * stride + N * 24"),
    (2, "ub-alignment", "16 bytes on the UB side"),
    (3, "api-argument", "burstLen 3 != dstSliceInfo[0].burstLen 2"),
    (4, "api-argument", "beyond dimension 0 it must be 1"),
    (5, "tensor-bounds", "dst (UB)"),
    (6, "gm-bounds", "DataCopy with SliceInfo"),
])
def test_slice_rules_are_enforced(gxx, tmp_path, case, rule, words):
    out = _run(gxx, tmp_path, case)
    text = out.stdout + out.stderr
    assert out.returncode != 0 and f"[{rule}] DataCopy with SliceInfo" in text and words in text, text[-2000:]
