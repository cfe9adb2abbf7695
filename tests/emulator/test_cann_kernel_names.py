"""Names CANN's ops-transformer / ops-cv kernels use that the emulator lacked (issue 39, round 17): bisheng's pipe
annotations (`__inout_pipe__(MTE2)`, ops-transformer moe_sort_base.h:102; asc-devkit 82b89a15
include/basic_api/kernel_tensor.h:159), `DEFAULT_BLK_STRIDE` (impl/basic_api/utils/kernel_utils_constants.h:32),
`GetScalarBitcodeValue` (impl/basic_api/utils/kernel_utils_struct_norm_sort.h:221-245) and the float bit patterns
`F32_INF` / `F32_NEG_INF` / `F32_NAN` (kernel_utils_constants.h:53-55)."""
from __future__ import annotations

import subprocess


def test_pipe_annotations_compile_as_function_attributes(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\n'
                   '__aicore__ inline __inout_pipe__(MTE2) void CopyIn() {}\n'
                   '__aicore__ inline __in_pipe__(S) __out_pipe__(V, S) int Mixed() { return 3; }\n'
                   'int main() { CopyIn(); return Mixed() == 3 ? 0 : 1; }\n')
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode == 0, r.stderr


def test_default_blk_stride_is_canns(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\n#include <type_traits>\n'
                   'static_assert(AscendC::DEFAULT_BLK_STRIDE == 1);\n'
                   'static_assert(std::is_same_v<std::remove_cv_t<decltype(AscendC::DEFAULT_BLK_STRIDE)>, int32_t>);\n'
                   'using namespace AscendC;\nint s = DEFAULT_BLK_STRIDE;\n')
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode == 0, r.stderr


def test_get_scalar_bitcode_value_gives_the_bits(gxx, tmp_path):
    """The one-type form zero-extends the scalar's bits to 64; the two-type form reinterprets them as U."""
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\n#include <cstdio>\nusing namespace AscendC;\n'
                   'int main() {\n'
                   '  std::printf("%llx %llx %llx %llx %x %g\\n",\n'
                   '    (unsigned long long)GetScalarBitcodeValue(1.0f),\n'
                   '    (unsigned long long)GetScalarBitcodeValue((half)-2.0f),\n'
                   '    (unsigned long long)GetScalarBitcodeValue((int16_t)-1),\n'
                   '    (unsigned long long)GetScalarBitcodeValue(0.0f),\n'
                   '    (unsigned)GetScalarBitcodeValue<uint16_t, uint16_t>(0x7FFFu),\n'
                   '    (double)GetScalarBitcodeValue<uint32_t, float>(0x40490fdbu));\n'
                   '  DataCopyPadParams p;\n  p.paddingValue = GetScalarBitcodeValue((float)0);\n'
                   '  return p.paddingValue == 0 ? 0 : 1;\n}\n')
    exe = tmp_path / "k"
    r = gxx(src, exe)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3f800000", "c000", "ffff", "0", "7fff", "3.14159"]


def test_float_special_bit_patterns_are_canns(gxx, tmp_path):
    """F32_INF / F32_NEG_INF / F32_NAN: const uint32_t in namespace AscendC on every chip (asc-devkit 82b89a15
    impl/basic_api/utils/kernel_utils_constants.h:53-55); ops-transformer moe_gating_top_k/op_kernel/common.h:22
    reads F32_NEG_INF through a float pointer. A kernel's own constant of that name in its own scope still wins."""
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\n#include <cmath>\n#include <type_traits>\nusing namespace AscendC;\n'
                   'static_assert(std::is_same_v<std::remove_cv_t<decltype(AscendC::F32_NEG_INF)>, uint32_t>);\n'
                   'const float MIN_FP32 = *(float *)(&F32_NEG_INF);\n'
                   'struct Own { static constexpr int32_t F32_NAN = 7; int get() const { return F32_NAN; } };\n'
                   'int main() {\n'
                   '  const float inf = *(const float *)(&F32_INF), nan = *(const float *)(&F32_NAN);\n'
                   '  return (std::isinf(MIN_FP32) && MIN_FP32 < 0 && std::isinf(inf) && inf > 0 && std::isnan(nan)\n'
                   '          && Own().get() == 7) ? 0 : 1;\n}\n')
    exe = tmp_path / "k"
    r = gxx(src, exe)
    assert r.returncode == 0, r.stderr
    assert subprocess.run([str(exe)], timeout=60).returncode == 0

