"""SoftmaxFlashV2's kernel-side tiling function SoftMaxFlashV2TilingFunc (asc-devkit 82b89a15
include/adv_api/activation/softmaxflashv2.h:52-64 -> impl/adv_api/detail/activation/softmax/
softmax_flashv2_base_impl.h:42-105; ops-transformer nsa_selected_attention_infer.h:657 calls it in a kernel) and
SoftMaxFlashV2TilingFuncImpl, the work space in floats, which ops-transformer's flash-attention kernels call directly.
Each expected tiling is worked by hand from CANN's A2 arithmetic, the work space W in floats (bytes / 4),
blk = 32 / dataTypeSize2: reduceM = W / (blk + 64) for a float source, W / (2 blk + srcK + 64) for half; with
isBasicBlock (srcK % 64 == 0, srcM % 8 == 0) CalculateNDSplitM (softmax_common_shape_process.h:59-80), which halves
the rows while rows x srcK >= 64 x 256; above 8 rows cut down to a multiple of 8; at most srcM."""
from __future__ import annotations

import re
import subprocess

import pytest

FIELDS = ("srcM srcK srcSize outMaxM outMaxK outMaxSize splitM splitK splitSize reduceM reduceK reduceSize rangeM "
          "tailM tailSplitSize tailReduceSize").split()

# (call arguments after the shape, shape, expected fields)
CASES = [
    # float: W = 576, 576 / (8 + 64) = 8 rows a round, two rounds
    ("{16, 64, 16, 64}, 4, 4, 2304", dict(srcM=16, srcK=64, srcSize=1024, outMaxM=16, outMaxK=8, outMaxSize=128,
                                          splitM=8, splitK=64, splitSize=512, reduceM=8, reduceK=8, reduceSize=64,
                                          rangeM=2, tailM=0, tailSplitSize=0, tailReduceSize=0)),
    # half: blk 16, W = 484, 484 / (32 + 32 + 64) = 3 rows (not above 8: no cut), 3 rounds and a tail of 1
    ("{10, 32, 10, 32}, 2, 2, 1936", dict(srcM=10, srcK=32, srcSize=320, outMaxM=10, outMaxK=16, outMaxSize=160,
                                          splitM=3, splitK=32, splitSize=96, reduceM=3, reduceK=16, reduceSize=48,
                                          rangeM=3, tailM=1, tailSplitSize=32, tailReduceSize=16)),
    # basic block, float: W = 12800, 12800 / 72 = 177 -> 64 rows; 64 x 512 and 32 x 512 reach 64 x 256: 16 rows
    ("{64, 512, 64, 512}, 4, 4, 51200, false, true", dict(srcM=64, srcK=512, srcSize=32768, outMaxM=64, outMaxK=8,
                                                          outMaxSize=512, splitM=16, splitK=512, splitSize=8192,
                                                          reduceM=16, reduceK=8, reduceSize=128, rangeM=4, tailM=0,
                                                          tailSplitSize=0, tailReduceSize=0)),
    # the same without isBasicBlock: 177 rows hold all 64
    ("{64, 512, 64, 512}, 4, 4, 51200", dict(srcM=64, srcK=512, srcSize=32768, outMaxM=64, outMaxK=8, outMaxSize=512,
                                             splitM=64, splitK=512, splitSize=32768, reduceM=64, reduceK=8,
                                             reduceSize=512, rangeM=1, tailM=0, tailSplitSize=0, tailReduceSize=0)),
    # float, W = 1000: 13 rows, above 8 and below srcM: cut to 8
    ("{20, 64, 20, 64}, 4, 4, 4000", dict(srcM=20, srcK=64, srcSize=1280, outMaxM=20, outMaxK=8, outMaxSize=160,
                                          splitM=8, splitK=64, splitSize=512, reduceM=8, reduceK=8, reduceSize=64,
                                          rangeM=2, tailM=4, tailSplitSize=256, tailReduceSize=32)),
]


def _program(body: str) -> str:
    return ('#include "kernel_operator.h"\n#include "lib/activation/softmaxflashv2.h"\n#include <cstdio>\n'
            'using namespace AscendC;\n' + body)


@pytest.mark.parametrize("args,want", CASES, ids=["float", "half_tail", "basic_block", "not_basic", "cut_to_8"])
def test_the_tiling_is_canns(gxx, tmp_path, args, want):
    fmt = " ".join(["%u"] * len(FIELDS))
    src = tmp_path / "k.cpp"
    src.write_text(_program(f"constexpr SoftMaxTiling kT = SoftMaxFlashV2TilingFunc({args});\n"  # constexpr, as CANN's
                            f'int main() {{ std::printf("{fmt}\\n", {", ".join("kT." + f for f in FIELDS)}); }}\n'))
    exe = tmp_path / "k"
    r = gxx(src, exe)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert dict(zip(FIELDS, map(int, out.stdout.split()))) == want


def test_a_work_space_below_one_row_is_refused_by_name(gxx, tmp_path):
    """CANN divides by the zero reduceM; the emulator names the call and the sizes."""
    src = tmp_path / "k.cpp"
    src.write_text(_program("int main() { return SoftMaxFlashV2TilingFunc({16, 64, 16, 64}, 4, 4, 64).rangeM; }\n"))
    exe = tmp_path / "k"
    r = gxx(src, exe)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    # the wrapper's name and the kernel's line, not the Impl's
    assert re.search(r"\[api-argument\] SoftMaxFlashV2TilingFunc at \S*k\.cpp:", out.stderr)
    assert "16 floats (64 bytes)" in out.stderr


def _run(gxx, tmp_path, call: str):
    src = tmp_path / "k.cpp"
    src.write_text(_program(f"int main() {{ return {call}.rangeM; }}\n"))
    exe = tmp_path / "k"
    r = gxx(src, exe)
    assert r.returncode == 0, r.stderr
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)


def test_isflashoutputbrc_with_unaligned_rows_is_canns_assert(gxx, tmp_path):
    """float, W = 360: reduceM = 360 / 72 = 5 (not above 8: no cut), 4 rounds; 5 % 8 != 0 is CANN's ASCENDC_ASSERT
    (softmax_flashv2_base_impl.h:93-101). The same call without isFlashOutputBrc is a valid tiling."""
    out = _run(gxx, tmp_path, "SoftMaxFlashV2TilingFunc({20, 64, 20, 64}, 4, 4, 1440, false, false, false, true)")
    assert out.returncode != 0
    assert "[api-argument] SoftMaxFlashV2TilingFunc" in out.stderr and "reduceM 5 is not a multiple of 8" in out.stderr
    assert _run(gxx, tmp_path, "SoftMaxFlashV2TilingFunc({20, 64, 20, 64}, 4, 4, 1440)").returncode == 4


def test_an_element_size_of_0_is_the_emulators_guard(gxx, tmp_path):
    """CANN divides ONE_BLK_SIZE by dataTypeSize2 without a check; the emulator names the call instead."""
    out = _run(gxx, tmp_path, "SoftMaxFlashV2TilingFunc({16, 64, 16, 64}, 4, 0, 2304)")
    assert out.returncode != 0
    assert "[api-argument] SoftMaxFlashV2TilingFunc" in out.stderr and "dataTypeSize2 0" in out.stderr


def test_the_impl_takes_the_work_space_in_floats(gxx, tmp_path):
    """SoftMaxFlashV2TilingFuncImpl(srcM, srcK, ...) as prompt_flash_attention_s1s2_bns1_mla.h:1504 calls it
    (isBasicBlock, isFlashOutputBrc), constexpr: W = 12800 floats is the basic_block case above (16 rows, 4 rounds,
    16 % 8 == 0 passes the assert); the bytes a wrapper would take, 51200, give 4 x the rows, capped at srcM."""
    fmt = " ".join(["%u"] * len(FIELDS))
    src = tmp_path / "k.cpp"
    src.write_text(_program(
        "constexpr SoftMaxTiling kT = SoftMaxFlashV2TilingFuncImpl(64, 512, 4, 4, 12800, false, true, false, true);\n"
        "constexpr SoftMaxTiling kB = AscendC::SoftMaxFlashV2TilingFuncImpl(64, 512, 4, 4, 51200);\n"
        f'int main() {{ std::printf("{fmt} %u\\n", {", ".join("kT." + f for f in FIELDS)}, kB.reduceM); }}\n'))
    exe = tmp_path / "k"
    r = gxx(src, exe)
    assert r.returncode == 0, r.stderr
    got = list(map(int, subprocess.run([str(exe)], capture_output=True, text=True, timeout=60).stdout.split()))
    assert dict(zip(FIELDS, got[:-1])) == CASES[2][1]
    assert got[-1] == 64  # 51200 / 72 = 711 rows, at most srcM


def test_the_impls_errors_name_the_impl(gxx, tmp_path):
    out = _run(gxx, tmp_path, "SoftMaxFlashV2TilingFuncImpl(16, 64, 4, 4, 16)")
    assert out.returncode != 0
    assert re.search(r"\[api-argument\] SoftMaxFlashV2TilingFuncImpl at \S*k\.cpp:", out.stderr)
    assert "16 floats (64 bytes)" in out.stderr
