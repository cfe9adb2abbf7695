"""Gatherb (opkit_emu/gather.h) against the page's reference (asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/
Memory矢量计算/离散与聚合/Gatherb(ISASI).md): repeat i, block j copies src's 32 bytes at offset[i*8+j] to dst block
i*dstRepStride + j*dstBlkStride (dstBlkStride 0 counts as 1); an offset not naming a 32-byte aligned block is
ub-alignment."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parent / "test_gatherb.cpp"


def _run(gxx, tmp_path, off):
    r = gxx(SRC, tmp_path / f"gb{off}", [f"-DOFF={off}"])
    assert r.returncode == 0, r.stderr[-3000:]
    return subprocess.run([str(tmp_path / f"gb{off}")], capture_output=True, text=True, timeout=60)


def test_gatherb_matches_the_page_reference(gxx, tmp_path):
    src = np.arange(128, dtype=np.uint32)
    offset = [(15 - k) * 32 for k in range(16)]
    dst = np.zeros(128, np.uint32)
    for i in range(2):          # the page's pseudo-code, dstBlkStride 0 -> 1, dstRepStride 8
        for j in range(8):
            s = offset[i * 8 + j] // 4
            d = (i * 32 * 8 + j * 32 * 1) // 4
            dst[d:d + 8] = src[s:s + 8]
    out = _run(gxx, tmp_path, 0)
    assert out.stdout.split() == [str(dst[0]), str(dst[8]), str(dst[127])], out.stdout + out.stderr


def test_gatherb_offset_off_a_block_is_reported(gxx, tmp_path):
    out = _run(gxx, tmp_path, 4)
    assert "[ub-alignment] Gatherb" in out.stdout + out.stderr and "484 bytes" in out.stdout + out.stderr
