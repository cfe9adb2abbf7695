"""Tiling macros as CANN's CPU-debug build expands them (test_tiling_macros.cpp): an op_host tiling header
(BEGIN_TILING_DATA_DEF ... REGISTER_TILING_DATA_CLASS in namespace optiling) compiled with the kernel gives
the struct CANN's build generates -- CANN's host byte layout, at global scope -- and GET_TILING_DATA,
GET_TILING_DATA_MEMBER, GET_TILING_DATA_PTR_WITH_STRUCT, TILING_KEY_IS and TILING_KEY_LIST read it.
Sources: hicann/metadef inc/external/register/tilingdata_base.h, base/asc/tilingdata_base_impl.cc;
mirror-cann/asc-devkit tools/build/asc_op_compile_base/adapter/get_op_tiling.py,
impl/basic_api/utils/kernel_utils_macros.h, include/utils/tiling/template_argument.h."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def program(gxx, tmp_path_factory):
    out = tmp_path_factory.mktemp("tiling_macros") / "prog"
    r = gxx(HERE / "test_tiling_macros.cpp", out)   # the static_asserts check CANN's layout at compile time
    assert r.returncode == 0, r.stderr
    return out


def test_kernel_reads_the_host_layout(program):
    r = subprocess.run([str(program)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    fields, default = r.stdout.split("|")
    # flag, total, big, sum(lens), scale*4, inner.rows, tail, TILING_KEY_IS(7), LIST(1,7,9), LIST(2,3)
    assert fields.split() == ["3", "1000", "-5000000000", "6", "10", "77", "9", "1", "1", "0"]
    assert default.split() == ["3"]     # REGISTER_TILING_DEFAULT(InnerTiling): rows = first 4 bytes


def test_short_tiling_buffer_is_a_gm_bounds_violation(program):
    r = subprocess.run([str(program), "short"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert "[gm-bounds] GET_TILING_DATA" in r.stderr and "test_tiling_macros.cpp" in r.stderr


TWO_OPS = """#include "kernel_operator.h"
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(A)
TILING_DATA_FIELD_DEF(uint32_t, a);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(OpA, A)
REGISTER_TILING_DATA_CLASS(OpA_3, A)   // a per-tiling-key registration is never the default
BEGIN_TILING_DATA_DEF(B)
TILING_DATA_FIELD_DEF(uint64_t, b);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(OpB, B)
}
extern "C" __global__ __aicore__ void k(GM_ADDR t) {
  GET_TILING_DATA(td, t);
  static_assert(sizeof(td) == 8 && offsetof(decltype(td), WANT) == 0, "the op's struct");
}
int main() { return 0; }
"""


def test_two_ops_in_one_header_need_the_op_type(gxx, tmp_path):
    src = tmp_path / "two.cpp"
    src.write_text(TWO_OPS)
    r = gxx(src, tmp_path / "a", extra=["-fsyntax-only", "-DWANT=a"], link=False)
    assert r.returncode != 0 and "ambiguating new declaration" in r.stderr   # two ops: say which
    for op, field in (("OpA", "a"), ("OpB", "b")):
        r = gxx(src, tmp_path / "a", extra=["-fsyntax-only", f"-DWANT={field}", f"-DOPKIT_CANN_OP_TYPE={op}"],
                link=False)
        assert r.returncode == 0, r.stderr


def test_nothing_registered_says_so(gxx, tmp_path):
    src = tmp_path / "none.cpp"
    src.write_text('#include "kernel_operator.h"\nextern "C" __global__ __aicore__ void k(GM_ADDR t) '
                   '{ GET_TILING_DATA(td, t); }\nint main() { return 0; }\n')
    r = gxx(src, tmp_path / "a", extra=["-fsyntax-only"], link=False)
    assert r.returncode != 0 and "no tiling struct is registered" in r.stderr
