"""AscendC scalar helpers (opkit_emu/scalar_convert.h, tests/emulator/test_scalar_convert.cpp): IsSameType and
friends compile as in CANN, ToFloat widens exactly, ToBfloat16 rounds to nearest even with CANN's NaN 0x7FFF
(mirror-cann/asc-devkit 82b89a15, impl/basic_api/kernel_scalar_convert.h)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent


def test_scalar_convert(gxx, tmp_path):
    exe = tmp_path / "scalar_convert"
    r = gxx(HERE / "test_scalar_convert.cpp", exe)
    assert r.returncode == 0, r.stderr[-3000:]
    rng = np.random.default_rng(7)
    pats = [0x3F800000, 0x3F808000, 0x3F818000, 0x3F80FFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000,
            0x7FC00000, 0xFFC00001, 0x7F800001, 0x00000001, 0x80000000, 0x007FFFFF, 0x00008000, 0x00018000,
            *rng.integers(0, 2**32, 200, dtype=np.uint64).tolist()]
    out = subprocess.run([str(exe), *(f"{p:08x}" for p in pats)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines()]
    assert len(rows) == len(pats)
    for p, (u, b, back) in zip(pats, rows):
        f = torch.from_numpy(np.array([p], dtype=np.uint32).view(np.float32))
        assert int(u, 16) == p
        if torch.isnan(f).item():
            assert b == "7fff", (hex(p), b)                     # CANN: every NaN -> bf16AbsMax
        else:                                                   # round to nearest even, as torch's bf16 cast
            want = f.to(torch.bfloat16).view(torch.int16).item() & 0xFFFF
            assert int(b, 16) == want, (hex(p), b, hex(want))
        assert int(back, 16) == int(b, 16) << 16                # ToFloat: the 16 bits moved up, exactly


def test_list_tensor_intf_header_exists(gxx, tmp_path):
    """kernel_operator_list_tensor_intf.h (CANN include/basic_api/): kernels include it by name."""
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator_list_tensor_intf.h"\n'
                   "static_assert(AscendC::IsSameType<bfloat16_t, bfloat16_t>::value, \"\");\n")
    r = gxx(src, tmp_path / "k.o", extra=["-fsyntax-only"], link=False)
    assert r.returncode == 0, r.stderr[-2000:]
