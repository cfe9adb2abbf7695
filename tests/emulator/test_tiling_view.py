"""opkit.cannproject.tiling_view: the kernel's view of an op's tiling data, what CANN's build generates from the
op_host registrations -- the BEGIN_TILING_DATA_DEF blocks of the op's own tiling headers, a registration of the op
type in a shared header of its family (ops-nn's foreach ops on ForeachCommonTilingData), nested structs before their
users, the constants their array sizes name from the block's own file, and nothing of the host side (its includes,
its classes), which CANN never compiles with the kernel."""
from __future__ import annotations

import subprocess

from opkit.cannproject.tiling_view import kernel_view

SHARED = """\
#pragma once
#include "register/tilingdata_base.h"
#include "op_host/tiling_templates_registry.h"   // host-only: never reaches the kernel
namespace optiling {
constexpr uint16_t MAX_N = 50;
BEGIN_TILING_DATA_DEF(SharedTiling)
TILING_DATA_FIELD_DEF(uint64_t, ubSize);
TILING_DATA_FIELD_DEF_ARR(int64_t, MAX_N, counts);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(FooOp, SharedTiling)
REGISTER_TILING_DATA_CLASS(BarOp, SharedTiling)
}  // namespace optiling
"""
DECOY = "namespace optiling {\nconstexpr uint16_t MAX_N = 64;  // another family's constant of the same name\n}\n"
OWN = """\
#pragma once
#include "register/op_impl_registry.h"
#include "log/log.h"
#include "op_host/tiling_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(FooInner)
TILING_DATA_FIELD_DEF(uint8_t, mode);
END_TILING_DATA_DEF;
BEGIN_TILING_DATA_DEF(FooExtra)
TILING_DATA_FIELD_DEF(uint32_t, n);
TILING_DATA_FIELD_DEF_STRUCT(FooInner, inner);
END_TILING_DATA_DEF;
class FooTiling : public TilingBaseClass {   // the host's tiling class
 public:
  ge::graphStatus DoOpTiling() override { OP_LOGD(context_, "tiling"); return ge::GRAPH_SUCCESS; }
};
}  // namespace optiling
"""
KERNEL = """\
#include "kernel_operator.h"
#include "VIEW"
extern "C" __global__ __aicore__ void foo(GM_ADDR tiling) {
  GET_TILING_DATA(t, tiling);                      // the op type's registered struct: SharedTiling
  static_assert(sizeof(t.counts) / sizeof(t.counts[0]) == 50, "MAX_N of the block's own file");
  static_assert(sizeof(FooExtra) == 16 && offsetof(FooExtra, inner) == 8, "CANN's host layout");
  AscendC::printf("%d\\n", int(t.counts[49] + t.ubSize));
}
int main() {
  struct { uint64_t ub; int64_t c[50]; } host{};
  host.ub = 2; host.c[49] = 40;
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  auto* gm = (uint8_t*)AscendC::GmAlloc(sizeof(host));
  memcpy(gm, &host, sizeof(host));
  ICPU_RUN_KF(foo, 1, gm);
  AscendC::GmFree(gm);
}
"""


def _repo(tmp_path):
    for rel, text in (("fam/shared/op_host/shared_tiling_def.h", SHARED), ("other/x/op_host/x_tiling.h", DECOY),
                      ("fam/foo/op_host/foo_tiling.h", OWN)):
        p = tmp_path / "repo" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path / "repo"


def test_kernel_view_holds_only_the_tiling_data(tmp_path):
    repo = _repo(tmp_path)
    view = kernel_view("FooOp", [repo / "fam/foo/op_host/foo_tiling.h"], [repo])
    assert "MAX_N = 50" in view and "MAX_N = 64" not in view
    assert view.index("BEGIN_TILING_DATA_DEF(FooInner)") < view.index("BEGIN_TILING_DATA_DEF(FooExtra)")
    assert "REGISTER_TILING_DATA_CLASS(FooOp, SharedTiling)" in view and "BarOp" not in view
    for host_only in ("log/log.h", "op_impl_registry", "tiling_base", "FooTiling", "OP_LOGD"):
        assert host_only not in view


def test_kernel_view_compiles_and_reads_the_registered_struct(gxx, tmp_path):
    repo = _repo(tmp_path)
    (tmp_path / "view.h").write_text(kernel_view("FooOp", [repo / "fam/foo/op_host/foo_tiling.h"], [repo]))
    src = tmp_path / "k.cpp"
    src.write_text('#include "tikicpulib.h"\n' + KERNEL.replace("VIEW", str(tmp_path / "view.h")))
    r = gxx(src, tmp_path / "k", ["-DOPKIT_CANN_OP_TYPE=FooOp"])
    assert r.returncode == 0, r.stderr[-3000:]
    out = subprocess.run([str(tmp_path / "k")], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "42", out.stdout + out.stderr


# CANN's build rules beyond the op_host headers (tiling_view's docstring, asc-devkit citations there)
KERNEL_SIDE = """\
#ifndef NEG_TILING_DATA_H
#define NEG_TILING_DATA_H
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(NegTilingData)
TILING_DATA_FIELD_DEF(int64_t, total);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(Neg, NegTilingData)
}
#endif
"""
NEG_KERNEL = """\
#include "kernel_operator.h"
#include "VIEW"
#include "OWN"   // included by the kernel as well: the view's include of it leaves one definition
extern "C" __global__ __aicore__ void neg(GM_ADDR tiling) {
  GET_TILING_DATA(t, tiling);
  AscendC::printf("%d\\n", int(t.total));
}
int main() {
  int64_t host = 42;
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  auto* gm = (uint8_t*)AscendC::GmAlloc(sizeof(host));
  memcpy(gm, &host, sizeof(host));
  ICPU_RUN_KF(neg, 1, gm);
  AscendC::GmFree(gm);
}
"""


def test_op_kernel_header_included_by_op_host_registers_the_struct(gxx, tmp_path):
    from opkit.cannproject.tiling_view import host_kernel_headers, view_for
    op = tmp_path / "repo/math/neg"
    (op / "op_kernel").mkdir(parents=True)
    (op / "op_host").mkdir()
    (op / "op_kernel/neg_tiling_data.h").write_text(KERNEL_SIDE)
    (op / "op_kernel/plain_struct.h").write_text("struct Plain { int a; };\n")  # no registration: not taken
    (op / "op_host/neg_tiling.cpp").write_text('#include "log/log.h"\n#include "../op_kernel/neg_tiling_data.h"\n'
                                               '#include "../op_kernel/plain_struct.h"\n')
    kernel = op / "op_kernel/neg.cpp"
    kernel.write_text(NEG_KERNEL.replace("OWN", str(op / "op_kernel/neg_tiling_data.h")))
    assert host_kernel_headers(op / "op_host") == [(op / "op_kernel/neg_tiling_data.h").resolve()]
    view = view_for("Neg", None, tmp_path / "repo", kernel=kernel)
    assert view is not None and "neg_tiling_data.h" in view and "BEGIN_TILING_DATA_DEF" not in view
    assert view_for("Neg", None, tmp_path / "repo") is None  # without the kernel's path: no op_host to follow
    (tmp_path / "view.h").write_text(view)
    src = tmp_path / "k.cpp"
    src.write_text('#include "tikicpulib.h"\n' + kernel.read_text().replace("VIEW", str(tmp_path / "view.h")))
    r = gxx(src, tmp_path / "k", ["-DOPKIT_CANN_OP_TYPE=Neg"])
    assert r.returncode == 0, r.stderr[-3000:]
    out = subprocess.run([str(tmp_path / "k")], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "42", out.stdout + out.stderr


def test_kernel_with_its_own_struct_gets_no_registered_class(tmp_path):
    from opkit.cannproject.tiling_view import custom_view, kernel_structs, registers_own_struct, view_for
    repo = _repo(tmp_path)
    own = "extern \"C\" __global__ __aicore__ void foo(GM_ADDR t) {\n  REGISTER_TILING_DEFAULT(MyTiling);\n}\n"
    assert registers_own_struct(own)
    assert not registers_own_struct("// REGISTER_TILING_DEFAULT(MyTiling) read in a comment only\n")
    k = repo / "fam/foo/op_kernel/foo.cpp"
    k.parent.mkdir(parents=True)
    k.write_text(own)
    view = view_for("FooOp", repo / "fam/foo/op_host/foo_tiling.h", repo, kernel=k)
    assert view == custom_view() and "SharedTiling" not in view and "kernel_tiling/kernel_tiling.h" in view
    # a struct the kernel defines itself (the CPU-debug branch of ops-nn chamfer_distance_grad) is left out
    assert kernel_structs("struct SharedTiling {\n  uint64_t ubSize;\n};\nstruct B : A { };") == {"SharedTiling", "B"}
    view = kernel_view("FooOp", [], [repo], kernel_defines={"SharedTiling"})
    assert "SharedTiling" not in view
    assert "BEGIN_TILING_DATA_DEF(SharedTiling)" in kernel_view("FooOp", [], [repo])


def test_if_0_block_in_a_tiling_header_is_not_the_registration(tmp_path):
    # a contest entry (hansheng1001/AscendCContest FastGelu) keeps an old BEGIN_TILING_DATA_DEF under `#if 0` above
    # the real one: the host compiler never sees it, so the kernel's struct is the second, with its fields
    text = ("#pragma once\n#include \"register/tilingdata_base.h\"\n#if 0\nnamespace optiling {\n"
            "BEGIN_TILING_DATA_DEF(GeluTiling)\nTILING_DATA_FIELD_DEF(uint32_t, size);\nEND_TILING_DATA_DEF;\n"
            "REGISTER_TILING_DATA_CLASS(Gelu, GeluTiling)\n}\n#endif\nnamespace optiling {\n"
            "BEGIN_TILING_DATA_DEF(GeluTiling)\nTILING_DATA_FIELD_DEF(uint32_t, blockLength);\n"
            "TILING_DATA_FIELD_DEF(uint32_t, tileNum);\nEND_TILING_DATA_DEF;\n"
            "REGISTER_TILING_DATA_CLASS(Gelu, GeluTiling)\n}\n")
    h = tmp_path / "repo/gelu/op_host/gelu_tiling.h"
    h.parent.mkdir(parents=True)
    h.write_text(text)
    view = kernel_view("Gelu", [h], [tmp_path / "repo"])
    assert "blockLength" in view and "tileNum" in view and "size" not in view
    assert view.count("BEGIN_TILING_DATA_DEF(GeluTiling)") == 1
