"""System registers, caches and task hooks (opkit_emu/system.h) against their pages (asc-devkit docs/zh/api/
SIMD-API/基础API/ at mirror-cann/asc-devkit 82b89a15; each test names its page), and the data type / format ids
of kernel_type.h."""
from __future__ import annotations

import numpy as np
import pytest

from opkit.errors import EmulatorError


# 特殊寄存器访问/SetCtrlSpr(ISASI).md: A2 has CTRL[48] only; 1 = non-saturating (inf / NaN kept), how the
# emulator computes and every block starts. 0, the saturating mode, is recorded; it changes half / bfloat16
# results only (inf -> +-MAX, NaN -> 0), which the emulator does not model: a vector call on 16-bit lanes while it
# holds is refused rather than computed in the other mode, a float call runs.
def _ctrl_spr(emu, value, op):
    out = np.zeros(2, np.int64)
    emu("system").ctrl_spr([np.array([value, op], np.int64), out])
    return out.tolist()


def test_ctrl_spr_reads_the_mode_the_emulator_computes_in(emu):
    assert _ctrl_spr(emu, 1, 2) == [1, 1]


def test_ctrl_spr_saturating_mode_is_recorded_and_float_calls_run(emu):
    assert _ctrl_spr(emu, 0, 0) == [1, 0]
    assert _ctrl_spr(emu, 0, 1) == [1, 0]


def test_ctrl_spr_saturating_mode_refuses_a_half_call(emu):
    with pytest.raises(EmulatorError) as e:
        _ctrl_spr(emu, 0, 2)
    assert (e.value.rule, e.value.call) == ("not-emulated", "Duplicate")
    assert "CTRL[48] = 0, set at" in e.value.detail and "test_system.cpp:" in e.value.detail


def test_ctrl_spr_value_is_one_bit(emu):
    with pytest.raises(EmulatorError) as e:
        _ctrl_spr(emu, 2, 0)
    assert (e.value.rule, e.value.call) == ("api-argument", "SetCtrlSpr")


def test_ctrl_spr_other_bits_do_not_compile_on_a2(gxx, tmp_path):
    # CANN's A2 build: static_assert(startBit == endBit && startBit == 48) (dav_c220/kernel_operator_common_impl.h)
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\nvoid f() { AscendC::SetCtrlSpr<60, 60>(1); }\n')
    r = gxx(src, tmp_path / "k.o", extra=["-fsyntax-only"], link=False)
    assert r.returncode != 0 and "must be both 48" in r.stderr


# 调试接口/异常检测/Trap.md: "in CPU mode the same as assert".
def test_trap_stops_the_kernel(emu):
    emu("system").trap([np.array([0], np.int32)])
    with pytest.raises(EmulatorError) as e:
        emu("system").trap([np.array([1], np.int32)])
    assert e.value.rule == "kernel-assert" and e.value.call == "Trap"


def test_values_and_no_op_hooks(emu):
    out = np.zeros(4, np.int64)
    emu("system").values([out])
    assert list(out) == [32, 0, 1, 1]


# 缓存控制/DataCacheCleanAndInvalid.md, DataCachePreload.md: the emulator has no data cache, so scalar writes are
# in GM at once; every form of CANN's calls compiles and returns.
def test_data_cache_clean_and_invalid(emu):
    out = np.zeros(8, np.uint64)
    emu("system").dcache([np.array([77], np.uint64), out])
    assert list(out) == [0, 10, 20, 30, 40, 50, 60, 77]


# CANN declares no default for entireType (include/basic_api/kernel_operator_cache_intf.h): a call without the
# template arguments does not compile there, nor here.
def test_data_cache_clean_and_invalid_needs_its_template_arguments(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\n'
                   'void f(AscendC::GlobalTensor<float> g) { AscendC::DataCacheCleanAndInvalid(g); }\n')
    r = gxx(src, tmp_path / "k.o", extra=["-fsyntax-only"], link=False)
    assert r.returncode != 0 and "DataCacheCleanAndInvalid" in r.stderr


# include/basic_api/kernel_type.h (82b89a15): the ids kernels compare template arguments with.
def test_kernel_type_ids(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\n'
                   'static_assert(DT_FLOAT == 0 && DT_BF16 == 27 && DT_HIFLOAT8 == 34 && DT_FLOAT8_E4M3FN == 36 &&\n'
                   '              DT_FLOAT4_E1M2 == 41 && DT_MAX == 42, "dt");\n'
                   'static_assert(FORMAT_ND == 2 && FORMAT_FRACTAL_NZ == 29 && FORMAT_NCL == 47 && FORMAT_MAX == 0xff,\n'
                   '              "format");\n')
    r = gxx(src, tmp_path / "k.o", extra=["-fsyntax-only"], link=False)
    assert r.returncode == 0, r.stderr
