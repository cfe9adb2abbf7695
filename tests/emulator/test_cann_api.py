"""Newer CANN kernel API names found by the API inventory, against float64 references and the doc pages'
own examples (asc-devkit docs/zh/api/SIMD-API/基础API/ at mirror-cann/asc-devkit 82b89a15; each test names
its page). Also: visibility and macro expansion as CANN's CPU-debug headers give them, and the compile-time
rejection of cube-side and non-A2 names (opkit_emu/unsupported.h)."""
from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from opkit import emulator
from opkit.errors import EmulatorError

RNG = np.random.default_rng(24)


# 资源管理/LocalMemAllocator/Alloc.md: tiles follow one another from the start of UB; GetCurAddr.md: the
# next free byte.
def test_local_mem_allocator_tiles(emu):
    x = RNG.standard_normal(256).astype(np.float32)
    y = np.zeros(257, np.float32)
    emu("cann_api").allocator([x, y, np.zeros(1, np.int32)])
    np.testing.assert_array_equal(y[:256], (2.0 * x.astype(np.float64)).astype(np.float32))
    assert y[256] == 2 * 256 * 4


def test_local_mem_allocator_past_ub(emu):
    with pytest.raises(EmulatorError) as e:
        emu("cann_api").allocator([np.zeros(256, np.float32), np.zeros(257, np.float32), np.ones(1, np.int32)])
    assert e.value.rule == "ub-capacity" and "LocalMemAllocator::Alloc" in str(e.value)


def _fused_ref(mode, a, b, d):
    a, b, d = (v.astype(np.float64) for v in (a, b, d))
    relu = lambda v: np.maximum(v, 0.0)  # noqa: E731
    return {0: 0.75 * a + d,                  # Axpy.md: dst = scalar * src + dst
            1: a * b + d,                     # MulAddDst.md: dst = src0 * src1 + dst
            2: a * d + b,                     # FusedMulAdd.md: dst = src0 * dst + src1
            3: relu(a * d + b),               # MulAddRelu.md
            6: relu(a * d + b),
            4: relu(a + b),                   # AddRelu.md
            5: relu(a - b)}[mode]             # SubRelu.md


SAME_TYPE = [(k, t, t, m) for k, t in (("fused_f32", np.float32), ("fused_f16", np.float16)) for m in range(7)]
# A2 has the half -> float form for Axpy and MulAddDst only (复合计算/Axpy.md, MulAddDst.md)
MIXED = [("fused_f16_f32", np.float16, np.float32, m) for m in (0, 1)]


@pytest.mark.parametrize("kernel,src,dst,mode", SAME_TYPE + MIXED)
def test_compound_instructions(emu, kernel, src, dst, mode):
    a, b, d = (RNG.uniform(-2, 2, 128).astype(t) for t in (src, src, dst))
    out = np.zeros(128, dst)
    getattr(emu("cann_api"), kernel)([a, b, d, np.array([mode], np.int32), out])
    ref = _fused_ref(mode, a, b, d)
    # computed in float, rounded once to dst: within one rounding of dst's type (plus float's own)
    tol = np.finfo(dst).eps * np.maximum(np.abs(ref), np.finfo(dst).tiny) + 4 * np.finfo(np.float32).eps * (np.abs(ref) + 4)
    assert np.all(np.abs(out.astype(np.float64) - ref) <= tol), (mode, np.max(np.abs(out - ref)))


# 归约计算/ReduceRepeat.md, ReduceDataBlock.md, ReducePairElem.md: the WholeReduce / BlockReduce /
# PairReduce instructions under their current names.
def test_reduce_current_names(emu):
    x = RNG.uniform(-1, 1, 128).astype(np.float32)
    out = np.zeros(88, np.float32)
    emu("cann_api").reduce_names([x, out])
    r = x.reshape(2, 64).astype(np.float64)
    np.testing.assert_allclose(out[0:2], r.sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(out[0:2], out[2:4])           # same instruction as WholeReduceSum
    np.testing.assert_array_equal(out[4:6], r.max(axis=1).astype(np.float32))
    np.testing.assert_array_equal(out[8:24], x.reshape(16, 8).min(axis=1))
    np.testing.assert_allclose(out[24:88], x.reshape(64, 2).astype(np.float64).sum(axis=1), rtol=1e-6)


# 标量计算/{CountLeadingZero,CountBitsCntSameAsSignBit,GetSFFValue,GetBitCount}.md (the pages' own examples),
# Cast（float转half-int32_t）.md, kernel_operator_limits_intf.h, 系统资源与变量/GetArchVersion.md.
def test_scalar_helpers(emu):
    out = np.zeros(16, np.int64)
    emu("cann_api").scalars([out])
    assert out[0] == 7 and out[1] == 6 and out[2] == 8
    assert out[3] == 8 + 100 * 4
    assert out[4] == 64 + 1000 * -1 and out[5] == -1
    assert out[6] == np.array([65504], np.float16).view(np.uint16)[0]
    assert out[7] == -32768
    assert out[8] == np.array([2050.0], np.float16).view(np.uint16)[0]    # 2049 -> CAST_ROUND: ties away from 0
    assert out[9] == -2                                                   # CAST_FLOOR
    assert out[10] == 0x3F80                                              # 1 + 2^-8: tie to even -> 1.0
    assert out[11] == 220 and out[12] == 1 + 10 * 1


# Memory矢量计算/掩码操作/SetVectorMask.md semantics through AscendCUtils::SetMask<T>(len) (CANN's
# impl/basic_api/kernel_utils_base.h): the first len lanes of each repeat, in Normal mode.
@pytest.mark.parametrize("length", [1, 64, 70, 128])
def test_ascendc_utils_set_mask(emu, length):
    out = np.full(256, 7, np.float16)
    emu("cann_api").utils_mask([np.array([length], np.int32), out])
    want = np.zeros(256, np.float16)
    for r in range(2):
        want[r * 128: r * 128 + length] = 1
    np.testing.assert_array_equal(out, want)


# AscendCUtils::SetOverflow (impl/basic_api/kernel_utils_base.h:185-197, A2: CTRL[48]): 1 is the non-saturating
# mode the emulator computes in; 0, the saturating mode, is recorded as SetCtrlSpr<48, 48>(0) is (test_system): a
# half call under it is refused, SetOverflow(1) ends it, and a kernel that ends with SetOverflow(0) runs.
def test_ascendc_utils_set_overflow(emu):
    emu("cann_api").utils_overflow([np.array([1], np.int32)])
    emu("cann_api").utils_overflow([np.array([2], np.int32)])
    with pytest.raises(EmulatorError) as e:
        emu("cann_api").utils_overflow([np.array([0], np.int32)])
    assert (e.value.rule, e.value.call) == ("not-emulated", "Duplicate")
    assert "CTRL[48] = 0, set at" in e.value.detail and "test_cann_api.cpp:" in e.value.detail


def test_prints_and_kernel_log(emu, capfd):
    emu("cann_api").logs([np.zeros(1, np.int32)])
    text = capfd.readouterr().out
    assert "printf 0\n" in text and "PRINTF 1\n" in text and "AscendC::printf\n" in text
    assert re.search(r"\[INFO\]\[Block_0\]\[AIV_0\]\[.*test_cann_api\.cpp:\d+\]\[logs\] log 2", text)


@pytest.mark.parametrize("mode,text", [(1, "assertion 'm != 1' failed"), (2, "assertion 'm != 2' failed: mode is 2")])
def test_ascendc_assert_and_assert_with_message(emu, capfd, mode, text):
    with pytest.raises(EmulatorError) as e:
        emu("cann_api").logs([np.array([mode], np.int32)])
    assert e.value.rule == "kernel-assert" and text in str(e.value)
    if mode == 1:  # ASCENDC_ASSERT runs its behavior before stopping (impl/basic_api/kernel_log.h)
        assert "[ERROR]" in capfd.readouterr().out


# ---- compile-time behaviour: visibility, macro expansion, rejections ----------------------------------
def _compile(gxx, tmp_path, code: str):
    src = tmp_path / "k.cpp"
    src.write_text(code)
    return gxx(src, tmp_path / "k.o", extra=["-fsyntax-only"], link=False)


VISIBLE = """#include "kernel_operator.h"
template <typename T> struct K {          // no using-directive anywhere before: qualified names, and the
  void Run() {                            // global names CANN's CPU-debug headers declare
    int64_t n = AscendC::GetBlockNum() + block_num + block_idx + get_block_idx() + g_coreType;
    printf("%lld\\n", (long long)n);       // printf / PRINTF: global (using namespace __asc_aicore in CANN)
    PRINTF("x\\n");
    if ASCEND_IS_AIV { ASSERT(n >= 0); }
    ascendc_assert(n >= 0, "n is %lld", (long long)n);
  }
};
namespace user { using namespace AscendC; template <typename T> int64_t f() { return GetBlockNum(); } }
int main() { K<float> k; (void)k; return (int)user::f<int>(); }
"""


def test_names_visible_as_in_cann(gxx, tmp_path):
    r = _compile(gxx, tmp_path, VISIBLE)
    assert r.returncode == 0, r.stderr


def test_get_block_num_is_in_ascendc_only(gxx, tmp_path):
    # CANN declares GetBlockNum in namespace AscendC only (include/basic_api/kernel_operator_sys_var_intf.h):
    # a template that calls it unqualified before any using-directive does not compile there either.
    r = _compile(gxx, tmp_path, '#include "kernel_operator.h"\n'
                 'template <typename T> int64_t f() { return GetBlockNum(); }\n'
                 'using namespace AscendC;\nint main() { return (int)f<int>(); }\n')
    assert r.returncode != 0 and "GetBlockNum" in r.stderr


def test_assert_compiles_where_cann_device_builds_do(gxx, tmp_path):
    # CANN CPU mode: #define ASSERT(x) assert(x) (impl/basic_api/kernel_macros.h:28); device builds define it empty
    # (l.34), so `n = x ASSERT(c);` builds for the NPU and users' kernels carry it: it compiles here too, and a
    # statement-form ASSERT still does. (test_compat: both forms are checked at run time.)
    for body in ('this->n = x ASSERT(x != 0 && "x");', 'this->n = x; ASSERT(x != 0 && "x");',
                 'if (x) ASSERT(x > 0); else ASSERT(x == 0);',
                 'constexpr int k = 4 ASSERT(4 > 0); static_assert(k == 4); int& r = n ASSERT(k > 0); r = x;'):
        r = _compile(gxx, tmp_path, '#include "kernel_operator.h"\n'
                     f'struct K {{ int n; void Init(int x) {{ {body} }} }};\n')
        assert r.returncode == 0, (body, r.stderr)


def _rejected():
    text = (emulator.include_dir() / "opkit_emu" / "unsupported.h").read_text()
    return re.findall(r"^OPKIT_EMU_REJECT_(FN_V|FN|TYPE|TEMPLATE_TV|TEMPLATE_V|TEMPLATE|CONST)\(\s*(\w+)", text, flags=re.M)


def test_every_rejected_name_says_so(gxx, tmp_path):
    uses = {"FN": "AscendC::{n}(1);", "FN_V": "AscendC::{n}<1>();", "TYPE": "AscendC::{n} v{i}{{1}};",
            "TEMPLATE": "AscendC::{n}<int> v{i};", "TEMPLATE_V": "AscendC::{n}<1> v{i};",
            "TEMPLATE_TV": "AscendC::{n}<int, 1> v{i};", "CONST": "int v{i} = AscendC::{n};"}
    names = _rejected()
    assert len(names) > 100
    body = "\n".join(uses[k].format(n=n, i=i) for i, (k, n) in enumerate(names))
    r = _compile(gxx, tmp_path, f'#include "kernel_operator.h"\nvoid f() {{\n{body}\n}}\n')
    said = set(re.findall(r"not supported on the emulator: (\w+) \(", r.stderr))
    assert said == {n for _, n in names}


def test_own_function_of_a_rejected_name_wins(gxx, tmp_path):
    r = _compile(gxx, tmp_path, '#include "kernel_operator.h"\nusing namespace AscendC;\n'
                 'void Fill(double* p, long n) { p[0] = n; }\nvoid g(double* p) { Fill(p, 3); }\n')
    assert r.returncode == 0, r.stderr


def test_rejected_name_not_called_compiles(gxx, tmp_path):
    r = _compile(gxx, tmp_path, '#include "kernel_operator.h"\nusing namespace AscendC;\n'
                 'template <class T> void cube(LocalTensor<T>& a) { Mmad(a, a, a, 1); }\n'
                 'void g() { if ASCEND_IS_AIC { } }\n')
    assert r.returncode == 0, r.stderr
