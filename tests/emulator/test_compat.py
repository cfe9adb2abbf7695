"""CANN CPU-debug compatibility names (core_info.h, debug.h, utils.h): what CANN's CPU mode declares, where it declares it.
Sources: mirror-cann/asc-devkit impl/utils/sys_macros.h (g_coreType, ASCEND_IS_AIV),
impl/basic_api/kernel_macros.h (ASSERT), impl/basic_api/utils/kernel_utils_macros.h (likely),
impl/basic_api/utils/kernel_utils_ceil_oom_que.h (AlignUp, DivCeil), docs 调试接口/CPU孪生调试/SetKernelMode.md,
调试接口/异常检测/ascendc_assert.md; the device compiler predefines __CCE_AICORE__ 220 for dav-c220 (A2).
`tensor(i)`: include/basic_api/kernel_tensor.h (`PrimType& operator()(offset)`, a scalar access); CacheLine /
DcciDst: impl/basic_api/kernel_reg.h; global min / max: opkit_emu/device_builtins.h."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from opkit.errors import EmulatorError

SRC = Path(__file__).resolve().parent / "test_compat.cpp"


def test_block_and_chip_names(emu):
    out = np.zeros(8 * 3, np.int32)
    emu("compat").facts([out], block_dim=3)
    for b in range(3):
        assert out[8 * b: 8 * b + 8].tolist() == [b, 3, 1, 220, 64 + 3, 1, 99, 2]


def test_element_access_min_max_and_cache_names(emu):
    io = np.zeros(16, np.float32)
    io[2] = 0.25
    io[12:14].view(np.float16)[0] = 1.5
    emu("compat").elems([io])
    assert io[3] == 3 * 0.25 + 0.5 and io[4] == 12 and io[5] == 0.25 and io[6] == 3.0


def test_element_read_of_unwritten_ub_is_checked(emu):
    io = np.zeros(16, np.float32)
    io[0] = 1.0
    with pytest.raises(EmulatorError) as e:
        emu("compat").elems([io])
    line = next(i for i, t in enumerate(SRC.read_text().splitlines(), 1) if t.rstrip().endswith("// ELEM:uninit"))
    assert (e.value.rule, e.value.call, e.value.line) == ("ub-uninitialized", "LocalTensor::GetValue", line)


def test_lower_case_flags_pair(emu):
    emu("compat").flags([np.zeros(1, np.int32)])
    with pytest.raises(EmulatorError) as e:
        emu("compat").flags([np.ones(1, np.int32)])
    assert e.value.rule == "sync-pairing" and "MTE2_V" in str(e.value)


@pytest.mark.parametrize("mode,text", [(1, "assertion 'm != 1' failed"), (2, "assertion 'm != 2' failed: mode is 2"),
                                       (3, "assertion 'm != 3 && \"mode 3\"' failed")])
def test_assertions_stop_the_launch(emu, mode, text):
    ok = np.zeros(1, np.int32)
    emu("compat").asserts([ok])
    assert ok[0] == -3  # the value before a postfix ASSERT comes through it unchanged
    with pytest.raises(EmulatorError) as e:
        emu("compat").asserts([np.array([mode], np.int32)])
    assert e.value.rule == "kernel-assert" and text in str(e.value) and e.value.file.endswith("test_compat.cpp")


def test_cce_aicore_per_profile(gxx, tmp_path):
    src = tmp_path / "aicore.cpp"
    src.write_text('#include "kernel_operator.h"\n'
                   'static_assert(__CCE_AICORE__ == EXPECT, "wrong __CCE_AICORE__");\nint main() { return 0; }\n')
    for profile, want in (("ascend910b", 220), ("ascend310p", 200)):
        r = gxx(src, tmp_path / "a.out", extra=[f"-DEXPECT={want}", "-fsyntax-only"], profile=profile, link=False)
        assert r.returncode == 0, r.stderr


# SyncAll.md (mirror-cann/asc-devkit 7359511d, 同步控制/核间同步/SyncAll.md): all blocks wait until every
# block reached it; GM written before it is visible after it.
@pytest.mark.parametrize("blocks", [2, 8])
def test_sync_all_meets_every_block(emu, blocks):
    out = np.zeros(blocks, np.int32)
    emu("compat").syncall([np.zeros(blocks, np.int32), out, np.zeros(1, np.int32)], block_dim=blocks)
    assert out.tolist() == [blocks * (blocks + 1) // 2] * blocks


def test_sync_all_block_ending_early_is_reported(emu):
    with pytest.raises(EmulatorError) as e:
        emu("compat").syncall([np.zeros(4, np.int32), np.zeros(4, np.int32), np.ones(1, np.int32)], block_dim=4)
    assert e.value.rule == "sync-all" and "block 1 ended without reaching this SyncAll" in str(e.value)


def test_sync_all_reports_the_real_error_not_the_waiters(emu):
    with pytest.raises(EmulatorError) as e:
        emu("compat").syncall([np.zeros(4, np.int32), np.zeros(4, np.int32), np.full(1, 2, np.int32)], block_dim=4)
    assert e.value.rule == "gm-bounds" and e.value.block == 2
