"""opkit.emulator.branches: the `#if` branches a kernel takes under the emulator's flags (the A2, CPU-debug), decided
from its text; conditions on anything else keep every branch."""
from opkit.emulator.branches import condition_value, emulator_branch

SRC = """\
#if defined(__CCE_AICORE__) && __CCE_AICORE__ == 310
a950();
#elif __NPU_ARCH__ == 2201
a2();
#else
other();
#endif
#ifndef __CCE_KT_TEST__
npu_only();
#endif
#ifdef USER_FLAG
user();
#else
not_user();
#endif
"""


def test_emulator_branch_keeps_the_a2_cpu_debug_branches():
    out = emulator_branch(SRC)
    assert "a2();" in out and "a950();" not in out and "other();" not in out and "npu_only();" not in out
    assert "user();" in out and "not_user();" in out and "#ifdef USER_FLAG" in out  # undecided: kept whole


def test_condition_value():
    assert condition_value("__CCE_AICORE__ == 220") is True
    assert condition_value("!defined(ASCENDC_CPU_DEBUG)") is False
    assert condition_value("FOO > 1") is None
