"""The host's GetXxxMaxMinTmpSize (python/opkit/cannproject/include/tiling/opkit_adv_tmp_sizes.h), run in a `.asc`
program (test_adv_tmp_sizes.asc): its figures are CANN's formulas (worked out here by hand from asc-devkit 82b89a15
impl/adv_api/tiling/**, the file each row names), and its `min` is what the kernel side accepts -- a sharedTmpBuffer
of exactly `min` bytes runs, 32 bytes fewer is `tensor-bounds`."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "test_adv_tmp_sizes.asc"

# shape [3, 1000] (3000 elements) unless named; (max, min)
EXPECTED = {
    "exp_f32": (3 * 3000 * 4, 3 * 256),          # math/exp_tiling_impl.cpp: 3 float buffers (fp32)
    "exp_f32_reuse": (2 * 3000 * 4, 2 * 256),    # 2 with isReuseSource
    "exp_f16": (4 * 3000 * 4, 4 * 256),          # 4 float buffers for half
    "acosh_f16": (2 * 3000 * 2, 2 * 256),        # math/acosh_tiling.cpp: max(2 n, 256) x size
    "ceil_f16": (2 * 3000 * 2, 2 * 256),         # math/ceil_tiling_impl.cpp: 2 x max(n x size, 256)
    "frac_f32": (0, 0),                          # math/frac_tiling_impl.cpp: float needs none
    "sigmoid_f32": (3000 * 4, 256),              # activation/sigmoid_tiling_impl.cpp
    "axpy_f16": (4 * 3000 * 2, 4 * 256),         # math/axpy_tiling_impl.cpp
    "sum_f16_1000": (32, 32),                    # reduce/sum_tiling.cpp: 8 repeats -> one 16-half block
    "quant": (6016, 512),                        # quantization/ascend_quant_tiling_impl.cpp: 6000 up to 32
    "dequant_4x64": ((64 + 256 + 72) * 4, (64 + 64 + 72) * 4),  # ascend_dequant_tiling_impl.cpp
    "cumsum_last_f16": (64 * 32 * 2 + 32 * 64 * 2 * 2, 64 * 16 * 2 + 16 * 64 * 2 * 2),  # math/cumsum_tiling.cpp
    "cumsum_first_f16": (20 * 64 * 4, 20 * 64 * 4),
    "power_tt_f32": (4 * 12000 + 256, 4 * 256 + 256),     # math/power_tiling_impl.cpp, DAV_2201
    "power_ts_f16": (14 * 6000 + 256, 14 * 256 // 2 + 256),
}
FAMILIES = {0: "GetExpMaxMinTmpSize", 1: "GetAcoshMaxMinTmpSize", 2: "GetCeilMaxMinTmpSize",
            3: "GetSigmoidMaxMinTmpSize", 4: "GetFracMaxMinTmpSize"}


def run(*defines: str) -> subprocess.CompletedProcess:
    args = [x for d in defines for x in ("-D", d)]
    return subprocess.run([sys.executable, "-m", "opkit", "run-asc", str(PROGRAM), *args], capture_output=True,
                          text=True, timeout=600)


def test_adv_tmp_sizes_are_canns_formulas():
    r = run("FAMILY=0")
    assert r.returncode == 0, r.stdout + r.stderr
    got = {ln.split()[0]: (int(ln.split()[1]), int(ln.split()[2])) for ln in r.stdout.splitlines()
           if len(ln.split()) == 3 and ln.split()[1].isdigit()}
    assert got == EXPECTED


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_adv_tmp_sizes_min_is_what_the_kernel_accepts(family):
    ok = run(f"FAMILY={family}")
    assert ok.returncode == 0 and "ran with" in ok.stdout, ok.stdout + ok.stderr
    short = run(f"FAMILY={family}", "SHRINK=32")
    assert short.returncode == 1, short.stdout + short.stderr
    assert "[tensor-bounds]" in short.stderr and FAMILIES[family] in short.stderr, short.stderr
