"""`opkit cflags --cann` (python/opkit/cannproject/kernel_include, libs.kernel_flags): a kernel compiled in place with
its op_host tiling header included first, as CANN's CPU tests compile it, reads the header's host includes in the
kernel's view -- log/log.h, register/op_impl_registry.h -- while a header whose inline host code calls CANN's host
API still fails, naming the type (never a silent stub). Fixture written here."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEADER = """#pragma once
#include "register/op_impl_registry.h"
#include "register/tilingdata_base.h"
#include "log/log.h"
#include "tiling/platform/platform_ascendc.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(DemoTilingData)
TILING_DATA_FIELD_DEF(uint32_t, total);
TILING_DATA_FIELD_DEF(float, scale);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(Demo, DemoTilingData)
ge::graphStatus DemoTiling(gert::TilingContext* context);   // host declarations only
}
"""
KERNEL = """#include "kernel_operator.h"
#include "demo_tiling.h"
extern "C" __global__ __aicore__ void demo(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    (void)t.total;
    (void)t.scale;
}
"""
HOST_CODE = """
namespace optiling {
inline uint32_t Cores(gert::TilingContext* context) { return context->GetBlockDim(); }
}
"""


def _flags(*extra):
    r = subprocess.run([sys.executable, "-m", "opkit", "cflags", *extra], capture_output=True, text=True, check=True)
    return r.stdout.split()


def _compile(tmp_path: Path, header: str, flags: list[str]):
    (tmp_path / "demo_tiling.h").write_text(header)
    (tmp_path / "demo.cpp").write_text(KERNEL)
    return subprocess.run(["g++", "-fsyntax-only", "-w", *flags, "-DOPKIT_CANN_OP_TYPE=Demo", f"-I{tmp_path}",
                           str(tmp_path / "demo.cpp")], capture_output=True, text=True)


def test_cann_cflags_kernel_view_of_host_headers(tmp_path):
    plain = _compile(tmp_path, HEADER, _flags())
    # register/op_impl_registry.h resolves for kernels (CANN's kernel compile path has the toolkit's headers, ops-math
    # experimental/math/real); log/log.h is opbase's host header, which only --cann's kernel view stands in for
    assert plain.returncode != 0 and "log/log.h: No such file" in plain.stderr, plain.stderr
    r = _compile(tmp_path, HEADER, _flags("--cann"))
    assert r.returncode == 0, r.stderr
    host = _compile(tmp_path, HEADER + HOST_CODE, _flags("--cann"))
    assert host.returncode != 0 and "incomplete type" in host.stderr and "gert::TilingContext" in host.stderr


def test_cann_cflags_opbase_kernel_library(tmp_path):
    ob = tmp_path / "opbase"
    (ob / "include" / "op_common" / "op_host" / "util").mkdir(parents=True)
    (ob / "include" / "op_common" / "op_host" / "util" / "opbase_export.h").write_text("#pragma once\n")
    (ob / "pkg_inc" / "op_common" / "atvoss").mkdir(parents=True)
    flags = _flags("--cann", "--opbase", str(ob))
    assert f"-I{ob / 'pkg_inc' / 'op_common'}" in flags and f"-I{ob / 'include' / 'op_common'}" in flags
    bad = subprocess.run([sys.executable, "-m", "opkit", "cflags", "--cann", "--opbase", str(tmp_path)],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "not an opbase checkout" in bad.stdout + bad.stderr
