"""Basic-API type names CANN's examples use (opkit_emu/scalar_convert.h: Conditional, ConditionalMulti;
opkit_emu/group_barrier.h: PipeMode), after asc-devkit 82b89a15 impl/basic_api/utils/kernel_utils_constants.h:535-551
and kernel_utils_cube_group.h:23."""
from __future__ import annotations


def test_conditional_picks_types_as_cann(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text(
        '#include "kernel_operator.h"\n#include <type_traits>\n'
        'static_assert(std::is_same_v<AscendC::Conditional<true, float, half>::type, float>);\n'
        'static_assert(std::is_same_v<AscendC::Conditional<false, float, half>::type, half>);\n'
        'static_assert(std::is_same_v<AscendC::ConditionalMulti<false, true, int8_t, int16_t, int32_t, int64_t>::type,'
        ' int32_t>);\n'
        'static_assert(std::is_same_v<AscendC::ConditionalMulti<true, false, int8_t, int16_t, int32_t, int64_t>::type,'
        ' int16_t>);\n'
        'static_assert(static_cast<int>(AscendC::PipeMode::MTE3_MODE) == 1);\n')
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode == 0, r.stderr


def test_rmsnorm_tiling_at_global_scope_from_kernel_operator(gxx, tmp_path):
    """CANN's kernel_operator.h reaches RmsNormTiling globally (normalization/rmsnorm.h:25 includes kernel_tiling.h):
    its RmsNorm example declares `RmsNormTiling tiling;` with nothing else included. A kernel's own PadTiling still
    compiles (the other advanced tiling structs stay out of the global scope), and kernel_tiling.h, which exports
    them all, repeats the same declaration without a clash."""
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\n'
                   'struct PadTiling { int mine; };\n'
                   'RmsNormTiling t;\n'
                   'static_assert(sizeof(RmsNormTiling) == 48);\n')
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode == 0, r.stderr
    src.write_text('#include "kernel_operator.h"\n#include "kernel_tiling/kernel_tiling.h"\n'
                   'static_assert(std::is_same_v<RmsNormTiling, AscendC::tiling::RmsNormTiling>);\n'
                   'PadTiling p;\n')
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode == 0, r.stderr
