"""Every hardware rule the emulator enforces (issue item 7; facts sheet §1-3): a violating kernel raises
EmulatorError naming the rule, the API call and the kernel's file:line, never returns a wrong answer.
Compile-time rules (bf16 arithmetic, Cast pairs/modes, 310P gaps) are checked by compiling small TUs."""
from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from opkit.errors import EmulatorError

HERE = Path(__file__).resolve().parent
SRC = HERE / "test_rules.cpp"
SCENARIOS = re.search(r"enum Scenario : int32_t \{(.*?)\};", SRC.read_text(), re.S)[1].replace("\n", " ")
SCENARIO_IDS = {name.strip(): i for i, name in enumerate(SCENARIOS.split(","))}


def marker_line(tag: str) -> int:
    for i, line in enumerate(SRC.read_text().splitlines(), 1):
        if line.rstrip().endswith(f"// RULE:{tag}"):
            return i
    raise AssertionError(f"no marker {tag}")


# scenario -> (rule, call, words the detail must contain)
CASES = {
    "kUbCapacity": ("ub-capacity", "TPipe::InitBuffer", "allows 196608 bytes"),
    "kUbCapacityMulti": ("ub-capacity", "TPipe::InitBuffer", "brings UB use to 196640 bytes"),
    "kUbAlignVector": ("ub-alignment", "Adds", "not 32-byte aligned"),
    "kUbAlignCopy": ("ub-alignment", "DataCopy", "UB offset 16"),
    "kDataCopyLength": ("datacopy-length", "DataCopy", "silently copy only 384 bytes"),
    "kDataCopyLengthOut": ("datacopy-length", "DataCopy", "48 bytes is not a multiple of 32"),
    "kGmBoundsSize": ("gm-bounds", "DataCopy", "byte 1024 is past the end of the GM buffer of kernel argument 0 (1024 bytes); the access covers bytes [800, 1056)"),
    "kGmBoundsBuffer": ("gm-bounds", "DataCopy", "not inside any GM buffer"),
    "kGmBoundsArg": ("gm-bounds", "DataCopy", "byte 1024 is past the end of the GM buffer of kernel argument 0 (1024 bytes); the access covers bytes [896, 1152)"),
    "kGmBoundsGetValue": ("gm-bounds", "GlobalTensor::GetValue", "byte 1024 is past the end of the GM buffer of kernel argument 0 (1024 bytes); the access covers bytes [1024, 1028)"),
    "kGmBoundsPad": ("gm-bounds", "DataCopyPad", "byte 1024 is past the end of the GM buffer of kernel argument 1 (1024 bytes); the access covers bytes [1020, 1028)"),
    "kDequeEmpty": ("queue-protocol", "TQue::DeQue", "empty queue"),
    "kAllocTooMany": ("queue-protocol", "TQue::AllocTensor", "all 2 buffers"),
    "kDoubleFree": ("queue-protocol", "TQue::FreeTensor", "double free"),
    "kUseAfterFree": ("queue-protocol", "Adds", "after FreeTensor"),
    "kLeakAtEnd": ("queue-protocol", "TQue::AllocTensor", "never freed"),
    "kEnqueTooDeep": ("queue-protocol", "TQue::EnQue", "depth is 1"),
    "kFreeQueued": ("queue-protocol", "TQue::FreeTensor", "still in the queue"),
    "kUninitVector": ("ub-uninitialized", "DataCopyPad", "element 100"),
    "kUninitCopyOut": ("ub-uninitialized", "DataCopy", "element 56"),
    "kUninitGetValue": ("ub-uninitialized", "LocalTensor::GetValue", "never written"),
    "kUninitStaleAlloc": ("ub-uninitialized", "DataCopy", "element 0"),
    "kUninitTail": ("ub-uninitialized", "DataCopy", "element 32"),
    "kCompareLength": ("compare-length", "Compare", "384 bytes is not a multiple of 256"),
    "kWaitWithoutSet": ("sync-pairing", "WaitFlag", "MTE2_V"),
    "kSetNeverWaited": ("sync-pairing", "SetFlag", "never matched"),
    "kTbufGet": ("tbuf-bounds", "TBuf::Get", "65 elements"),
    "kTbufOffset": ("tbuf-bounds", "TBuf::GetWithOffset", "offset 160"),
    "kTensorBoundsCount": ("tensor-bounds", "Duplicate", "holds only 256 bytes"),
    "kTensorBoundsIndex": ("tensor-bounds", "LocalTensor::SetValue", "index 64"),
    "kTensorBoundsView": ("tensor-bounds", "LocalTensor::operator[]", "offset 72"),
    "kBufferLimit": ("buffer-limit", "TPipe::InitBuffer", "at most 8"),
    "kQueueNoInit": ("queue-protocol", "TQue::AllocTensor", "before TPipe::InitBuffer"),
    "kCastMode": ("dtype-unsupported", "Cast", "CAST_FLOOR"),
}


# x and y are two 256-float views of one allocation with a gap between them, so an address past x
# (kGmBoundsBuffer reads x[512..576)) deterministically lies outside every kernel buffer.
_GM = np.zeros(4096, np.float32)


def buffers(scenario: str):
    return [_GM[:256], _GM[-256:], np.array([SCENARIO_IDS[scenario]], np.int32).view(np.uint8)]


@pytest.mark.parametrize("scenario", sorted(CASES))
def test_rule_violation_reported(emu, scenario):
    rule, call, words = CASES[scenario]
    with pytest.raises(EmulatorError) as e:
        emu("rules").rules(buffers(scenario), block_dim=2)
    err = e.value
    assert (err.rule, err.call) == (rule, call), str(err)
    assert Path(err.file).name == "test_rules.cpp" and err.line == marker_line(scenario), str(err)
    assert err.block == 0
    assert words in err.detail, str(err)
    # The message is the one documented format, parseable back into the same fields.
    again = EmulatorError.from_message(str(err))
    assert (again.rule, again.call, again.line, again.block) == (rule, call, err.line, 0)


@pytest.mark.parametrize("scenario,holds", [("kGmSizeInside", "56 elements"), ("kGmSizeInsideOne", "1 element;")])
def test_past_the_set_global_buffer_size_inside_the_buffer_is_a_warning(emu, capfd, scenario, holds):
    # The size is bookkeeping (GetSize); neither the NPU nor CANN's CPU-debug checks read it, so a kernel that
    # declares too small a size but stays inside its GM buffer runs (the public Xlogy kernel in docs/cann.md).
    x, y, tiling = buffers(scenario)
    x[:] = np.arange(256, dtype=np.float32)
    try:
        emu("rules").rules([x, y, tiling], block_dim=2)
        assert np.array_equal(y[:64], x[:64])
    finally:
        x[:] = 0
        y[:] = 0
    err = capfd.readouterr().err
    assert err.count("warning: [gm-bounds] DataCopy") == 1, err  # once per call site, not per block
    assert f"test_rules.cpp:{marker_line(scenario)}" in err and f"this view holds {holds}" in err, err


def test_ub_past_the_compiler_reservation_is_a_warning(emu, capfd):
    # 196608 bytes: the whole 910B UB. CANN's CPU-debug TPipe accepts it (its limit is the whole UB); the
    # device build needs the 8 KB compiler reservation turned off, so the emulator warns, naming the flag.
    emu("rules").rules(buffers("kUbReserved"), block_dim=2)
    err = capfd.readouterr().err
    assert err.count("warning: [ub-capacity]") == 1, err  # once per call site, not per block
    assert f"test_rules.cpp:{marker_line('kUbReserved')}" in err and "--cce-disable-asc-reserved-ubuf" in err
    assert "196608 bytes" in err and "188160" in err


def test_clean_kernel_passes(emu):
    """The same kernel body, written correctly, raises nothing and computes the right answer."""
    x, y, tiling = buffers("kOk")
    x[:] = np.arange(256, dtype=np.float32) - 100
    try:
        emu("rules").rules([x, y, tiling], block_dim=4)
        assert np.array_equal(y, x + 1)
    finally:
        x[:] = 0
        y[:] = 0


def test_tiling_struct_larger_than_buffer(emu):
    with pytest.raises(EmulatorError) as e:
        emu("rules").rules_big_tiling(buffers("kOk"))
    assert (e.value.rule, e.value.call, e.value.line) == ("gm-bounds", "GET_TILING_DATA", marker_line("kTilingTooSmall"))


def test_violation_names_the_block(emu):
    bufs = buffers("kOk")
    for threads in (1, 2):
        with pytest.raises(EmulatorError) as e:
            emu("rules").fail_in_block3(bufs, block_dim=6, threads=threads)
        assert (e.value.rule, e.value.block, e.value.line) == ("ub-uninitialized", 3, marker_line("block3"))


def test_plain_exception_is_not_a_rule(emu):
    with pytest.raises(RuntimeError) as e:
        emu("rules").throws(buffers("kOk"))
    assert not isinstance(e.value, EmulatorError) and "boom" in str(e.value)


# ---- compile-time rules ----------------------------------------------------------------------

KERNEL_TEMPLATE = """
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void k(GM_ADDR x) {{
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 4096);
  GlobalTensor<{T}> g;
  g.SetGlobalBuffer((__gm__ {T}*)x, 64);
  LocalTensor<float> f = b.Get<float>();
  LocalTensor<half> h = b.GetWithOffset<half>(64, 1024);
  LocalTensor<bfloat16_t> bf = b.GetWithOffset<bfloat16_t>(64, 2048);
  LocalTensor<int32_t> i32 = b.GetWithOffset<int32_t>(64, 3072);
  (void)f; (void)h; (void)bf; (void)i32;
  {body}
}}
"""

COMPILE_CASES = {
    # name: (body, element type of g, profile, extra flags, expected diagnostic or None for "compiles")
    "bf16_add": ("Add(bf, bf, bf, 64);", "float", "ascend910b", [], "no bfloat16_t form"),
    "bf16_exp": ("Exp(bf, bf, 64);", "float", "ascend910b", [], "no bfloat16_t form"),
    "bf16_reduce": ("ReduceSum(bf, bf, bf, 64);", "float", "ascend910b", [], "no bfloat16_t form"),
    "bf16_add_naive_amp": ("Add(bf, bf, bf, 64);", "float", "ascend910b", ["-DOPKIT_EMU_ALLOW_BF16_MATH"], None),
    "int_div": ("Div(i32, i32, i32, 64);", "float", "ascend910b", [], "does not support this element type"),
    "cast_pair_missing": ("Cast(bf, h, RoundMode::CAST_RINT, 64);", "float", "ascend910b", [],
                          "Cast between these element types does not exist"),
    # an unsupported RoundMode compiles, as in CANN, and is refused when the Cast runs (test_cast_mode_at_run)
    "cast_mode_constant": ("Cast(f, h, RoundMode::CAST_RINT, 64);", "float", "ascend910b", [], None),
    "cast_bf16_none": ("Cast(bf, f, RoundMode::CAST_NONE, 64);", "float", "ascend910b", [], None),
    "cast_ok": ("Cast(h, f, RoundMode::CAST_ODD, 64); Cast(f, bf, RoundMode::CAST_NONE, 64);", "float",
                "ascend910b", [], None),
    "pipe_s_barrier": ("PipeBarrier<PIPE_S>();", "float", "ascend910b", [], "PipeBarrier<PIPE_S> is not allowed"),
    "310p_datacopypad": ("DataCopyPad(f, g, DataCopyExtParams{1, 4, 0, 0, 0}, DataCopyPadExtParams<float>{});",
                         "float", "ascend310p", [], "DataCopyPad does not exist on ascend310p"),
    "310p_bf16_copy": ("DataCopy(bf, g, 64);", "bfloat16_t", "ascend310p", [], "bfloat16_t does not exist on ascend310p"),
    "310p_cast_rint": ("Cast(h, f, RoundMode::CAST_RINT, 64);", "float", "ascend310p", [], None),
    "310p_cast_bf16": ("Cast(f, bf, RoundMode::CAST_NONE, 64);", "float", "ascend310p", [],
                       "Cast between these element types does not exist"),
    "310p_naive_bf16_still_rejected": ("Add(bf, bf, bf, 64);", "float", "ascend310p",
                                       ["-DOPKIT_EMU_ALLOW_BF16_MATH"], "no bfloat16_t form"),
    "310p_ok": ("Cast(h, f, RoundMode::CAST_NONE, 64); DataCopy(f, g, 64);", "float", "ascend310p", [], None),
}


@pytest.fixture(scope="module")
def compiled(gxx, tmp_path_factory):
    """Compiles every case once, two at a time (g++ runs dominate this file's time)."""
    d = tmp_path_factory.mktemp("compile_rules")

    def one(name):
        body, t, profile, extra, diag = COMPILE_CASES[name]
        src = d / f"{name}.cpp"
        src.write_text(KERNEL_TEMPLATE.format(T=t, body=body))
        # static_asserts fire in the front end (-fsyntax-only); the constant-RoundMode check and the
        # "compiles" cases need the optimiser and code generation (-O2 -c).
        needs_codegen = diag is None or "RoundMode" in diag
        flags = ["-O2", "-c"] if needs_codegen else ["-fsyntax-only"]
        return gxx(src, d / f"{name}.o", extra=[*flags, *extra], profile=profile, link=False)

    with ThreadPoolExecutor(2) as ex:
        return dict(zip(COMPILE_CASES, ex.map(one, COMPILE_CASES)))


@pytest.mark.parametrize("name", sorted(COMPILE_CASES))
def test_compile_time_rule(compiled, name):
    diag = COMPILE_CASES[name][4]
    r = compiled[name]
    if diag is None:
        assert r.returncode == 0, r.stderr[-3000:]
    else:
        assert r.returncode != 0 and diag in r.stderr, r.stderr[-3000:]
