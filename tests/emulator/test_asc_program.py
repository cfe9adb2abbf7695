"""`opkit run-asc` on a CANN-style `.asc` program written here (test_asc_program.asc): host tiling, the ACL
runtime (acl/acl_rt.h), a `<<<>>>` launch over 8 blocks, copies both ways and its own comparison; planted faults
through -D; bad input; the `<<<>>>` transform itself (python/opkit/cannproject/asc_program.py)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from opkit import emulator
from opkit.cannproject import asc_program

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "test_asc_program.asc"


def run_asc(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    from conftest import run_asc
    return run_asc(*args, cwd=cwd)


def test_asc_program_runs_right():
    r = run_asc(str(PROGRAM))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "test pass!" in r.stdout
    assert "opkit emulator" not in r.stderr and "opkit acl" not in r.stderr, r.stderr


def test_asc_program_async_copies_streams_and_events():
    r = run_asc(str(PROGRAM), "-D", "USE_ASYNC")
    assert r.returncode == 0 and "test pass!" in r.stdout, r.stdout + r.stderr
    assert "opkit acl" not in r.stderr, r.stderr


def test_aclrtmalloc_gives_the_devices_padding_and_it_is_garbage():
    """aclrtMalloc allocates ALIGN_UP(size, 32) + 32 bytes and does not clear them (CANN runtime API; acl/acl_rt.h):
    a last tile copied out 8 floats long lands in z's padding and the program passes (before: gm-bounds, the
    allocation was exactly `size`); x's padding, which nothing wrote, read into the last tile and computed into z's
    data fails where it reaches the data (before: gm-bounds)."""
    r = run_asc(str(PROGRAM), "-D", "PLANT_TAIL_INTO_PADDING")
    assert r.returncode == 0 and "test pass!" in r.stdout, r.stdout + r.stderr
    r = run_asc(str(PROGRAM), "-D", "PLANT_PADDING_USE")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "[ub-uninitialized] DataCopy" in r.stderr and "element 56 " in r.stderr, r.stderr


def test_asc_program_planted_gm_overrun_names_the_rule():
    r = run_asc(str(PROGRAM), "-D", "PLANT_GM_OVERRUN")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "[gm-bounds]" in r.stderr and "test_asc_program.asc:" in r.stderr, r.stderr
    assert "test pass!" not in r.stdout


def test_asc_program_memcpy_past_the_allocation_is_acl_bounds():
    r = run_asc(str(PROGRAM), "-D", "PLANT_MEMCPY_OVERRUN")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "[acl-bounds]" in r.stderr and "aclrtMemcpy" in r.stderr and "allocation of 8192 bytes" in r.stderr
    line = next(i for i, s in enumerate(PROGRAM.read_text().splitlines(), 1) if "big.size() * sizeof(float), zDev" in s)
    assert f"test_asc_program.asc:{line}" in r.stderr, r.stderr


def test_asc_program_wrong_memcpy_kind_returns_cann_error():
    r = run_asc(str(PROGRAM), "-D", "PLANT_WRONG_KIND")
    assert r.returncode == 3, r.stdout + r.stderr  # the program's own CHECK_ACL saw the error code
    assert "failed: 100000" in r.stdout  # ACL_ERROR_INVALID_PARAM
    assert "ACL_MEMCPY_HOST_TO_DEVICE: dst is host" in r.stderr, r.stderr


def test_asc_program_read_before_synchronize_is_flagged():
    r = run_asc(str(PROGRAM), "-D", "PLANT_NO_SYNC")
    assert "[acl-unsynchronized]" in r.stderr, r.stderr
    assert r.returncode == 0 and "test pass!" in r.stdout  # the work ran before the copy, loudly


def test_asc_program_write_before_synchronize_is_flagged():
    r = run_asc(str(PROGRAM), "-D", "PLANT_WRITE_NO_SYNC")
    assert "[acl-unsynchronized]" in r.stderr and "aclrtMemcpy writes device memory" in r.stderr, r.stderr
    assert r.returncode == 0 and "test pass!" in r.stdout  # the kernel ran before the write, loudly


def test_asc_program_async_copy_checks_its_parameters_at_the_call():
    """CANN checks an *Async call's parameters when it is made: the error is its return value (the program's
    CHECK_ACL exits 3), not a message printed later while the program exits 0."""
    r = run_asc(str(PROGRAM), "-D", "PLANT_ASYNC_OVER_DEST")
    assert r.returncode == 3, r.stdout + r.stderr
    assert "failed: 100000" in r.stdout and "aclrtMemcpyAsync: count" in r.stderr, r.stdout + r.stderr


def test_asc_program_rebuilds_when_its_own_header_changes(tmp_path):
    """The cached executable is reused only while every file the compile read is unchanged -- the program's own
    headers too; also a literal `nullptr` stream and a C++14 digit separator before the launch."""
    (tmp_path / "local.h").write_text("#define MAGIC 1\n")
    prog = tmp_path / "magic.asc"
    prog.write_text('#include "acl/acl.h"\n#include "kernel_operator.h"\n#include "local.h"\n#include <cstdio>\n'
                    "__global__ __vector__ void k(GM_ADDR x) {}\n"
                    "int main() { const int n = 1'000; aclInit(nullptr); aclrtSetDevice(0);\n"
                    "  k<<<1, nullptr, nullptr>>>(nullptr); aclrtSynchronizeDevice();\n"
                    '  std::printf("MAGIC=%d n=%d\\n", MAGIC, n); return 0; }\n')
    work = tmp_path / "cache"
    r = subprocess.run([str(asc_program.build(prog, work))], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "MAGIC=1 n=1000" in r.stdout, r.stdout + r.stderr
    first = asc_program.build(prog, work)
    built = first.stat().st_mtime_ns
    assert asc_program.build(prog, work) == first and first.stat().st_mtime_ns == built  # unchanged: not rebuilt
    (tmp_path / "local.h").write_text("#define MAGIC 2\n")
    r = subprocess.run([str(asc_program.build(prog, work))], capture_output=True, text=True, timeout=120)
    assert "MAGIC=2" in r.stdout, r.stdout + r.stderr


def test_asc_program_runs_in_cwd(tmp_path):
    prog = tmp_path / "writes.asc"
    prog.write_text(PROGRAM.read_text().replace('std::printf("test pass!\\n");',
                                                'std::printf("test pass!\\n"); std::fopen("ran_here", "w");'))
    other = tmp_path / "other"
    other.mkdir()
    r = run_asc(str(prog), "--cwd", str(other))
    assert r.returncode == 0, r.stderr
    assert (other / "ran_here").exists() and not (tmp_path / "ran_here").exists()


def test_asc_program_bad_input(tmp_path):
    r = run_asc(str(tmp_path / "nope.asc"))
    assert r.returncode == 1 and "nope.asc: no such file" in r.stderr

    r = run_asc(str(PROGRAM), "-D", "1BAD")
    assert r.returncode == 1 and "-D '1BAD': expected NAME or NAME=VALUE" in r.stderr, r.stderr

    plain = tmp_path / "plain.asc"
    plain.write_text('#include "acl/acl.h"\n// kernel<<<1, nullptr, s>>>(x) only in a comment\nint main() { return 0; }\n')
    r = run_asc(str(plain))
    assert r.returncode == 1 and "plain.asc: no kernel launch" in r.stderr, r.stderr

    unknown = tmp_path / "unknown.asc"
    unknown.write_text(PROGRAM.read_text().replace("CHECK_ACL(aclrtSetDevice(0));",
                                                   "CHECK_ACL(aclrtSetDeviceMagic(0));"))
    r = run_asc(str(unknown))
    line = next(i for i, s in enumerate(unknown.read_text().splitlines(), 1) if "aclrtSetDeviceMagic" in s)
    assert r.returncode == 1
    assert f"unknown.asc:{line}: the ACL function aclrtSetDeviceMagic is not implemented" in r.stderr, r.stderr


def test_asc_program_cube_kernel_is_a_named_error(tmp_path):
    cube = tmp_path / "cube.asc"
    cube.write_text("\n\n__global__ __cube__ void mm(GM_ADDR a) {}\nint main() { mm<<<1, nullptr, nullptr>>>(0); }\n")
    with pytest.raises(asc_program.AscError, match=r"cube\.asc:3: a `__cube__` kernel runs on the cube unit"):
        asc_program.build(cube, tmp_path)
    mix = tmp_path / "mix.asc"
    mix.write_text("__global__ __mix__(1, 2) void mm(GM_ADDR a) {}\nint main() { mm<<<1, nullptr, nullptr>>>(0); }\n")
    with pytest.raises(asc_program.AscError, match=r"mix\.asc:1: a `__mix__` kernel"):
        asc_program.build(mix, tmp_path)


def test_asc_program_transform_keeps_lines_and_skips_comments():
    src = ('int a; // k<<<1,2,3>>>(x)\n/* k<<<1>>>() */ const char* s = "k<<<2>>>(y)";\n'
           "ns::kern<float, 4>  <<<blocks, nullptr,\n stream>>>(p,\n q);\nk2<<<1, 0, s>>>();\n")
    out, launches = asc_program.transform(src, Path("/x/f.asc"))
    assert out.splitlines()[0] == '#line 1 "/x/f.asc"'
    body = out.split("\n", 1)[1]
    assert body.count("\n") == src.count("\n")  # no line added or removed
    assert [(x.kernel, x.line) for x in launches] == [("ns::kern<float,4>", 3), ("k2", 6)]
    assert ('::opkit_acl::launch_config("ns::kern<float,4>", __FILE__, __LINE__, blocks, nullptr,\n stream)'
            ".run([](auto... a_) { ns::kern<float,4>(a_...); }, p,\n q);") in body
    assert ('::opkit_acl::launch_config("k2", __FILE__, __LINE__, 1, 0, s).run([](auto... a_) { k2(a_...); });'
            in body)
    assert "// k<<<1,2,3>>>(x)" in body and '"k<<<2>>>(y)"' in body  # comments and strings untouched


def test_asc_program_icpu_route_keeps_acl_without_runtime(tmp_path):
    """Without OPKIT_ASC_PROGRAM (a CPU-debug program), acl/acl.h still declares no runtime function."""
    src = tmp_path / "cpu_debug.cpp"
    src.write_text('#include "acl/acl.h"\nint main() { void* p; return aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST); }\n')
    r = subprocess.run(["g++", "-fsyntax-only", *emulator.cflags(), str(src)], capture_output=True, text=True)
    assert r.returncode != 0 and "aclrtMalloc" in r.stderr and "not declared" in r.stderr, r.stderr


SYNC_ALL = r'''
#include "acl/acl.h"
#include "kernel_operator.h"
__global__ __vector__ void k(GM_ADDR x, GM_ADDR w) {
  AscendC::TPipe pipe;
  AscendC::TBuf<AscendC::TPosition::VECCALC> b;
  pipe.InitBuffer(b, 256);
  auto t = b.Get<float>();
  AscendC::GlobalTensor<float> xg, wg;
  xg.SetGlobalBuffer((__gm__ float*)x, 64);
  wg.SetGlobalBuffer((__gm__ float*)w + 64 * AscendC::GetBlockIdx(), 64);
  AscendC::DataCopy(t, xg, 64);
  AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);
  AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);
  AscendC::Adds(t, t, 1.0f, 64);
  AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);
  AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);
  AscendC::DataCopy(wg, t, 64);  // MTE3 reads t
  BETWEEN
  AscendC::Adds(t, t, 1.0f, 64);  // V writes t: ordered only by what stands in BETWEEN
}
int main() {
  aclrtStream s;
  aclrtCreateStream(&s);
  void *x, *w;
  aclrtMalloc(&x, 256, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMalloc(&w, 512, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMemset(x, 256, 0, 256);  // aclrtMalloc'ed memory is garbage until written (the kernel uses x)
  k<<<2, nullptr, s>>>((uint8_t*)x, (uint8_t*)w);
  return aclrtSynchronizeStream(s);
}
'''


def test_asc_program_sync_all_orders_pipes(tmp_path):
    """CANN's A2 SyncAll() begins with PipeBarrier<PIPE_ALL> (opkit_emu/sync_all.h); without it the race stands."""
    with_sync = tmp_path / "with_sync.asc"
    with_sync.write_text(SYNC_ALL.replace("BETWEEN", "AscendC::SyncAll();"))
    r = run_asc(str(with_sync))
    assert r.returncode == 0, r.stderr
    without = tmp_path / "without.asc"
    without.write_text(SYNC_ALL.replace("BETWEEN", ""))
    r = run_asc(str(without))
    assert r.returncode == 1 and "[pipe-race]" in r.stderr, r.stderr
