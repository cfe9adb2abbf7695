"""The emulator runtime compiled once (python/opkit/csrc/op/emulator_runtime.cpp, OPKIT_EMU_RT in opkit_emu/config.h):
a kernel module that links the runtime object computes, counts and reports exactly what the header-only module
does; its own compile leaves the runtime to the object; the headers stay header-only by default."""
from __future__ import annotations

import re
import struct
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from conftest import CACHE
from opkit.emulator import host_include_dir, include_dir
from opkit.emulator.abi import KernelModule
from opkit.emulator import modules
from opkit.emulator.modules import RUNTIME_SOURCE, compile_module, module_source, runtime_object
from opkit.errors import EmulatorError

HERE = Path(__file__).resolve().parent
KERNEL = HERE / "test_launch.cpp"          # emu_layer_norm: queues, vector calls, GM copies, GET_TILING_DATA
INC = [f"-I{include_dir()}", f"-I{host_include_dir()}", f"-I{HERE}"]


@pytest.fixture(scope="module")
def pair():
    """dtype -> (header-only module, module linking the runtime object), same flags otherwise."""
    out = {}
    for t in ("float", "half"):
        out[t] = tuple(compile_module(KERNEL, "emu_layer_norm", 6, CACHE / "modules", defines={"DTYPE_X": t},
                                      opt="-O1", runtime=rt) for rt in (False, True))
    return out


def tiling(rows, cols, blocks):
    return np.frombuffer(struct.pack("IIIf", rows, cols, -(-rows // blocks), 1e-5), np.uint8).copy()


@pytest.mark.parametrize("dtype", ["float", "half"])
def test_emulator_runtime_module_gives_the_header_only_bytes(pair, dtype):
    rows, cols, blocks = 37, 700, 6
    rng = np.random.default_rng(7)
    npt = {"float": np.float32, "half": np.float16}[dtype]
    x = (rng.standard_normal((rows, cols)) * 4 + 1).astype(npt)
    x.flat[::97] = np.nan                                   # NaN payloads travel through the same code
    w, b = rng.random(cols).astype(npt), rng.random(cols).astype(npt)
    til = tiling(rows, cols, blocks)
    for threads in (1, 3):
        for fast in (False, True):
            ys, stats = [], []
            for path in pair[dtype]:
                y = np.zeros_like(x)
                stats.append(KernelModule(path).launch([x, w, b, y, None, til], blocks, threads=threads, fast=fast))
                ys.append(y)
            assert ys[0].tobytes() == ys[1].tobytes(), (threads, fast)
            assert stats[0] == stats[1]
            assert stats[0]["blocks"] == blocks and stats[0]["vector_repeats"] > 0


def test_emulator_runtime_module_reports_what_the_header_only_module_reports(pair):
    for path in pair["float"]:
        m = KernelModule(path)
        with pytest.raises(RuntimeError, match="takes 6 GM arguments, launch passed 2"):
            m.launch([np.zeros(8, np.float32), None], 1)
        with pytest.raises(RuntimeError, match="block_dim is 0"):
            m.launch([None] * 6, 0)
    errs = []
    for path in pair["float"]:
        with pytest.raises(EmulatorError) as e:
            KernelModule(path).launch([None, None, None, None, None, np.zeros(4, np.uint8)], 2)
        errs.append(e.value)
    assert [(e.rule, e.call, e.line, e.block, str(e)) for e in errs[:1]] == \
        [(e.rule, e.call, e.line, e.block, str(e)) for e in errs[1:]]
    assert (errs[0].rule, errs[0].call) == ("gm-bounds", "GET_TILING_DATA")


def _defined(nm_out: str, name: str) -> str:
    """nm's type letter for `name` ('U' undefined, 'T'/'t' defined text), '' if absent."""
    for line in nm_out.splitlines():
        parts = line.split(None, 2) if not line.startswith(" ") else ["", *line.split(None, 1)]
        if len(parts) == 3 and parts[2].startswith(name + "("):
            return parts[1]
    return ""


def _extern_module_and_runtime(tmp_path) -> tuple[str, str]:
    """`nm -C` of a float LayerNorm module compiled with OPKIT_EMU_RUNTIME_EXTERN and of its runtime object."""
    tu = tmp_path / "module.cpp"
    tu.write_text(module_source(KERNEL, "emu_layer_norm", 6))
    obj = tmp_path / "module.o"
    subprocess.run(["g++", "-std=c++17", "-O1", "-fPIC", "-fvisibility=hidden", "-c", *INC, "-DDTYPE_X=float",
                    "-DOPKIT_EMU_RUNTIME_EXTERN", str(tu), "-o", str(obj)], check=True)
    rt = runtime_object(["-DDTYPE_X=float"], "-O1", CACHE / "modules")
    return tuple(subprocess.run(["nm", "-C", str(f)], capture_output=True, text=True, check=True).stdout
                 for f in (obj, rt))


def test_emulator_runtime_extern_module_leaves_the_runtime_to_the_object(tmp_path):
    mod, lib = _extern_module_and_runtime(tmp_path)
    for fn in ("opkit_emu::run_blocks_fn", "opkit_emu::module_launch_fn", "opkit_emu::ApiCall::commit",
               "opkit_emu::HazardState::access", "opkit_emu::Violation::Violation", "AscendC::TPipe::Release",
               # the queue protocol, TBuf's record, the flags and the violations' throw: not per module either
               "opkit_emu::QueCore::alloc_buf", "opkit_emu::QueCore::enque_buf", "opkit_emu::QueCore::deque_buf",
               "opkit_emu::QueCore::free_buf", "opkit_emu::TBufCore::rec", "AscendC::TPipeAllocator::init_queue",
               "opkit_emu::set_flag_event", "opkit_emu::wait_flag_event", "opkit_emu::BlockCtx::fail",
               "opkit_emu::TensorMeta::not_live", "opkit_emu::reset_block"):
        assert _defined(mod, fn) in ("U", ""), f"{fn} was compiled into the module again"
        assert _defined(lib, fn) in ("T", "t"), f"{fn} is not in the runtime object"
    # the kernel's calls reach the runtime through these: referenced, not compiled here
    assert _defined(mod, "opkit_emu::module_launch_fn") == "U" and _defined(mod, "opkit_emu::ApiCall::commit") == "U"
    for fn in ("opkit_emu::QueCore::alloc_buf", "opkit_emu::QueCore::enque_buf", "opkit_emu::set_flag_event"):
        assert _defined(mod, fn) == "U", f"{fn}: the module's queue / flag calls do not reach the runtime object"


def _loop_symbols(nm_out: str, kind: str) -> set[str]:
    """The opkit_emu element-loop instantiations nm lists with this type letter ('U', 'W', ...)."""
    out = set()
    for line in nm_out.splitlines():
        m = re.match(r"\s*(?:[0-9a-f]+\s+)?(\w)\s+(.*)$", line)
        if m and m.group(1) == kind and re.search(r"opkit_emu::\w+_loop\w*<", m.group(2)):
            out.add(m.group(2))
    return out


def test_emulator_runtime_extern_module_leaves_the_common_loops_to_the_object(tmp_path):
    # opkit_emu/hot_instances.h: the float element loops a LayerNorm runs are the object's, not generated again
    mod, lib = _extern_module_and_runtime(tmp_path)
    called = _loop_symbols(mod, "U")
    assert any("bin_loop_distinct<opkit_emu::OpAdd, float>" in s for s in called), sorted(called)
    assert any("reduce_sum_loop<float>" in s for s in called), sorted(called)
    assert not {s for s in _loop_symbols(mod, "W") if "float>" in s and "cast" not in s}, "float loops compiled again"
    assert called <= _loop_symbols(lib, "W") | _loop_symbols(lib, "T"), sorted(called - _loop_symbols(lib, "W"))
    # header-only (`opkit cflags`): the module instantiates them itself, as before
    tu, obj = tmp_path / "module.cpp", tmp_path / "alone.o"
    subprocess.run(["g++", "-std=c++17", "-O1", "-fPIC", "-c", *INC, "-DDTYPE_X=float", str(tu), "-o", str(obj)],
                   check=True)
    alone = subprocess.run(["nm", "-C", str(obj)], capture_output=True, text=True, check=True).stdout
    assert not _loop_symbols(alone, "U") and called <= _loop_symbols(alone, "W")


NAIVE = ["-DOPKIT_NAIVE_COMPUTE", "-DOPKIT_EMU_ALLOW_BF16_MATH"]   # cmake/opkit_emulator.cmake's naive flavour


def test_emulator_runtime_naive_flavour_leaves_the_16bit_loops_to_the_object(tmp_path):
    # hot_instances.h's half / bfloat16_t lists (behind OPKIT_EMU_ALLOW_BF16_MATH): a naive module, which computes
    # in its I/O dtype, calls the object's loops; if that guard or list broke it would compile them again itself
    tu = tmp_path / "naive.cpp"
    tu.write_text('#include "kernel_operator.h"\n'
                  "void naive_math(half* h, bfloat16_t* b, uint32_t n) {\n"
                  "  opkit_emu::bin_loop_distinct<opkit_emu::OpAdd, half>(h, h + n, h + 2 * n, n);\n"
                  "  opkit_emu::bin_loop_distinct<opkit_emu::OpAdd, bfloat16_t>(b, b + n, b + 2 * n, n);\n"
                  "  opkit_emu::exp_loop_fp16<bfloat16_t>(b, b + n, n);\n}\n")
    obj = tmp_path / "naive.o"
    subprocess.run(["g++", "-std=c++17", "-O1", "-fPIC", "-fvisibility=hidden", "-c", *INC, *NAIVE,
                    "-DDTYPE_X=half", "-DOPKIT_EMU_RUNTIME_EXTERN", str(tu), "-o", str(obj)], check=True)
    rt = runtime_object([*NAIVE, "-DDTYPE_X=half"], "-O1", CACHE / "modules")
    mod = subprocess.run(["nm", "-C", str(obj)], capture_output=True, text=True, check=True).stdout
    lib = subprocess.run(["nm", "-C", str(rt)], capture_output=True, text=True, check=True).stdout
    called = _loop_symbols(mod, "U")
    for want in ("bin_loop_distinct<opkit_emu::OpAdd, half>", "bin_loop_distinct<opkit_emu::OpAdd, bfloat16_t>",
                 "exp_loop_fp16<bfloat16_t>"):
        assert any(want in s for s in called), (want, sorted(called))
    assert not _loop_symbols(mod, "W"), "16-bit loops compiled again in the module"
    assert called <= _loop_symbols(lib, "W") | _loop_symbols(lib, "T"), sorted(called - _loop_symbols(lib, "W"))


def test_emulator_runtime_headers_stay_header_only_by_default(tmp_path):
    # what `opkit cflags` gives a standalone program: no macro, every runtime function defined inline
    obj = tmp_path / "standalone.o"
    subprocess.run(["g++", "-std=c++17", "-O0", "-c", *INC, "-DDTYPE_X=float", "-x", "c++", "-", "-o", str(obj)],
                   input=module_source(KERNEL, "emu_layer_norm", 6), text=True, check=True)
    syms = subprocess.run(["nm", "-C", str(obj)], capture_output=True, text=True, check=True).stdout
    assert _defined(syms, "opkit_emu::run_blocks_fn") in ("W", "T", "t")


def test_emulator_runtime_cold_throw_stays_out_of_line_header_only(tmp_path):
    # TensorMeta::not_live (tensor.h) is noinline in every build: header-only at -O2, check_live keeps a call to it
    # instead of its string formatting inlined (the `opkit cflags` case). One caller: without noinline GCC inlines a
    # function called once, so this kernel tells the two apart (test_launch.cpp's many callers would not).
    src = ('#include "kernel_operator.h"\nusing namespace AscendC;\n'
           'extern "C" __global__ __aicore__ void k(GM_ADDR) {\n'
           '  TPipe pipe; TQue<TPosition::VECIN, 1> q; pipe.InitBuffer(q, 1, 256);\n'
           '  LocalTensor<float> t = q.AllocTensor<float>(); q.FreeTensor(t); Adds(t, t, 1.0f, 64);\n}\n')
    obj = tmp_path / "standalone.o"
    subprocess.run(["g++", "-std=c++17", "-O2", "-c", *INC, "-x", "c++", "-", "-o", str(obj)], input=src, text=True,
                   check=True)
    syms = subprocess.run(["nm", "-C", str(obj)], capture_output=True, text=True, check=True).stdout
    assert _defined(syms, "opkit_emu::TensorMeta::not_live") in ("W", "T", "t"), "not_live was inlined"


def test_emulator_runtime_functions_are_declared_once_for_object_and_modules():
    # every runtime function's definition in the object follows the one declaration an EXTERN module sees: a
    # definition whose signature drifted from it has no prior declaration (-Wmissing-declarations), instead of
    # becoming an overload the modules never call (undefined reference at link time, or worse)
    r = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-Werror=missing-declarations", *INC,
                        "-DOPKIT_EMU_RUNTIME_IMPL", str(RUNTIME_SOURCE)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    # and header-only (what `opkit cflags` gives) compiles clean with them: no inline / noinline clash
    r = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", *INC, "-DDTYPE_X=float",
                        "-x", "c++", "-"], input=module_source(KERNEL, "emu_layer_norm", 6), capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr[-3000:]


def test_emulator_runtime_impl_and_extern_exclude_each_other():
    r = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", *INC, "-DOPKIT_EMU_RUNTIME_IMPL",
                        "-DOPKIT_EMU_RUNTIME_EXTERN", str(RUNTIME_SOURCE)], capture_output=True, text=True)
    assert r.returncode != 0 and "exclude each other" in r.stderr


# ---- SyncAll + atomics across the two translation units ---------------------------------------------------------
# test_sync_all.cpp's reduce_ws: SyncAll's registry and kernel_uses_sync_all() are set in the module's TU and read
# by the launch in the runtime object's; its atomic adds / maxes are applied by the runtime object's launch, the
# code whose NaN choice once differed between the two builds (atomic_apply.h).
F32_SNAN, F32_NEG_SNAN, F32_NEG_QNAN = 0x7F800001, 0xFF800002, 0xFFC00003


@pytest.fixture(scope="module")
def sync_pair(tmp_path_factory):
    text = (HERE / "test_sync_all.cpp").read_text()
    start = text.index('extern "C" __global__ __aicore__ void reduce_ws')
    kernel = tmp_path_factory.mktemp("reduce_ws") / "reduce_ws.cpp"
    kernel.write_text("using namespace AscendC;\n" + text[start:text.index("// The same reduction over a GroupBarrier")])
    # -O2: the opkit flavour's level (the LayerNorm pair above is the naive flavour's -O1)
    return tuple(compile_module(kernel, "reduce_ws", 4, CACHE / "modules", opt="-O2", runtime=rt)
                 for rt in (False, True))


def nan_inputs(blocks: int):
    rng = np.random.default_rng(blocks)
    x = (rng.standard_normal((blocks, 64)) * 10.0 ** rng.uniform(-8, 8, (blocks, 64))).astype(np.float32)
    ws = (rng.standard_normal(64) * 1e3).astype(np.float32)
    xb, wb = x.view(np.uint32), ws.view(np.uint32)
    wb[0], xb[:, 0] = F32_NEG_QNAN, 0x7FC00000        # GM -NaN + src +NaN: GM's
    wb[1] = F32_SNAN                                   # a signalling NaN in GM: quieted, sign and payload kept
    xb[0, 2] = F32_NEG_SNAN                            # a signalling NaN added into a number: it, quieted
    xb[1, 3], xb[2, 3] = 0x7FC00000, 0xFFC00000        # +NaN then -NaN added: the first to land stays
    return x, ws


@pytest.mark.parametrize("blocks", [4, 8])
def test_emulator_runtime_sync_all_and_atomics_give_the_header_only_bytes(sync_pair, blocks):
    x, ws0 = nan_inputs(blocks)
    for mode in (0, 1, 3):           # SetAtomicAdd + SyncAll, SetAtomicMax + SyncAll, SyncAll(gm, ub, cores)
        got = []
        for path in sync_pair:
            ws, out = ws0.copy(), np.full(64, np.nan, np.float32)
            KernelModule(path).launch([x.reshape(-1).copy(), ws, out, np.array([mode], np.int32)], blocks)
            got.append((ws.tobytes(), out.tobytes()))
        assert got[0] == got[1], mode
    # the add rule itself (atomic_apply.h), on the runtime object's launch: GM's NaN first, quieted bits
    ws, out = ws0.copy(), np.zeros(64, np.float32)
    KernelModule(sync_pair[1]).launch([x.reshape(-1).copy(), ws, out, np.array([0], np.int32)], blocks)
    assert [hex(v) for v in out.view(np.uint32)[:4]] == \
        [hex(F32_NEG_QNAN), hex(F32_SNAN | 0x400000), hex(F32_NEG_SNAN | 0x400000), hex(0x7FC00000)]


def test_emulator_runtime_sync_all_reports_what_the_header_only_module_reports(sync_pair):
    x, ws0 = nan_inputs(4)
    errs = []
    for path in sync_pair:
        with pytest.raises(EmulatorError) as e:
            KernelModule(path).launch([x.reshape(-1).copy(), ws0.copy(), np.zeros(64, np.float32),
                                       np.array([2], np.int32)], 4)
        errs.append((e.value.rule, e.value.call, e.value.line, e.value.block, str(e.value)))
    assert errs[0] == errs[1] and errs[0][0] == "gm-bounds"


# ---- SetFlag / WaitFlag, the queue protocol and their violations, run from the runtime object -------------------
# set_flag_event / wait_flag_event (sync.h) and QueCore (tpipe.h) are compiled once in the runtime object; no
# bundled op uses flags or reaches a queue violation, so these kernels are their only run in that build.
# mode 0: block i writes x_i + 1 (queues in, flags out), SyncAll, then 2 * its neighbour's row; 1: DeQue of an empty
# queue; 2: WaitFlag with no SetFlag.
FLAGS_KERNEL = r"""
using namespace AscendC;
extern "C" __global__ __aicore__ void flags_queues(GM_ADDR x, GM_ADDR y, GM_ADDR mode) {
  constexpr int32_t L = 64;
  const int64_t n = GetBlockNum(), i = GetBlockIdx();
  const int32_t md = ((__gm__ int32_t*)mode)[0];
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, L * n);
  yg.SetGlobalBuffer((__gm__ float*)y, 2 * L * n);
  TPipe pipe;
  TQue<TPosition::VECIN, 1> qin;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(qin, 1, L * sizeof(float));
  pipe.InitBuffer(buf, L * sizeof(float));
  LocalTensor<float> t = buf.Get<float>();
  if (md == 1) { LocalTensor<float> none = qin.DeQue<float>(); }
  if (md == 2) WaitFlag<HardEvent::MTE2_V>(3);
  LocalTensor<float> in = qin.AllocTensor<float>();
  DataCopy(in, xg[L * i], L);
  qin.EnQue(in);
  in = qin.DeQue<float>();
  Adds(t, in, 1.0f, L);
  qin.FreeTensor(in);
  SetFlag<HardEvent::V_MTE3>(1);
  WaitFlag<HardEvent::V_MTE3>(1);
  DataCopy(yg[L * i], t, L);
  SyncAll();
  DataCopy(t, yg[L * ((i + 1) % n)], L);
  SetFlag<HardEvent::MTE2_V>(2);
  WaitFlag<HardEvent::MTE2_V>(2);
  Muls(t, t, 2.0f, L);
  SetFlag<HardEvent::V_MTE3>(1);
  WaitFlag<HardEvent::V_MTE3>(1);
  DataCopy(yg[L * (n + i)], t, L);
}
"""


@pytest.fixture(scope="module")
def flags_pair(tmp_path_factory):
    kernel = tmp_path_factory.mktemp("flags_queues") / "flags_queues.cpp"
    kernel.write_text(FLAGS_KERNEL)
    return tuple(compile_module(kernel, "flags_queues", 3, CACHE / "modules", opt="-O2", runtime=rt)
                 for rt in (False, True))


def _flags_launch(path: Path, mode: int, blocks: int = 4):
    x = np.arange(64 * blocks, dtype=np.float32) * 0.25 - 7
    y = np.full(2 * 64 * blocks, np.nan, np.float32)
    KernelModule(path).launch([x, y, np.array([mode], np.int32)], blocks)
    return x, y


def test_emulator_runtime_flags_queues_and_sync_all_compute(flags_pair):
    got = []
    for path in flags_pair:
        x, y = _flags_launch(path, 0)
        first = (x + 1).reshape(4, 64)
        np.testing.assert_array_equal(y[:256].reshape(4, 64), first)
        np.testing.assert_array_equal(y[256:].reshape(4, 64), 2 * np.roll(first, -1, axis=0))
        got.append(y.tobytes())
    assert got[0] == got[1]


@pytest.mark.parametrize("mode, rule, call, detail", [
    (1, "queue-protocol", "TQue::DeQue", "DeQue of an empty queue (the NPU would wait forever)"),
    (2, "sync-pairing", "WaitFlag",
     "WaitFlag<HardEvent::MTE2_V>(3) has no matching SetFlag before it (the NPU would wait forever)")])
def test_emulator_runtime_queue_and_flag_violations_report_from_the_object(flags_pair, mode, rule, call, detail):
    errs = []
    for path in flags_pair:
        with pytest.raises(EmulatorError) as e:
            _flags_launch(path, mode, blocks=1)    # one block: the one that reports is block 0
        errs.append(e.value)
    for e in errs:
        assert (e.rule, e.call, e.block, e.detail) == (rule, call, 0, detail), str(e)
        assert e.file.endswith("flags_queues.cpp"), str(e)
    assert errs[0].line == errs[1].line


# ---- the flavour a module was compiled for must be the runtime object's -----------------------------------------
def test_emulator_runtime_flavour_mismatch_fails_the_link(tmp_path):
    tu = tmp_path / "module.cpp"
    tu.write_text(module_source(KERNEL, "emu_layer_norm", 6))
    obj = tmp_path / "module.o"
    subprocess.run(["g++", "-std=c++17", "-O0", "-fPIC", "-fvisibility=hidden", "-c", *INC, "-DDTYPE_X=float",
                    "-DOPKIT_EMU_NO_AUTO_SYNC", "-DOPKIT_EMU_RUNTIME_EXTERN", str(tu), "-o", str(obj)], check=True)
    autosync = runtime_object(["-DDTYPE_X=float"], "-O0", CACHE / "modules")
    r = subprocess.run(["g++", "-shared", str(obj), str(autosync), "-o", str(tmp_path / "m.so"), "-lpthread"],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "opkit_emu_runtime_flavour_ascend910b_npu2201_nosync_nobf16math_f16c" in r.stderr, r.stderr
    # the object of its own flavour links
    nosync = runtime_object(["-DDTYPE_X=float", "-DOPKIT_EMU_NO_AUTO_SYNC"], "-O0", CACHE / "modules")
    subprocess.run(["g++", "-shared", str(obj), str(nosync), "-o", str(tmp_path / "m.so"), "-lpthread"], check=True)


@pytest.mark.parametrize("flags,name", [
    ([], "ascend910b_npu2201_autosync_nobf16math_f16c"),
    (["-DOPKIT_EMU_NO_AUTO_SYNC"], "ascend910b_npu2201_nosync_nobf16math_f16c"),
    (["-DOPKIT_NAIVE_COMPUTE", "-DOPKIT_EMU_ALLOW_BF16_MATH"], "ascend910b_npu2201_autosync_bf16math_f16c"),
    (["-DOPKIT_CHIP_ASCEND310P", "-D__NPU_ARCH__=2002"], "ascend310p_npu2002_autosync_nobf16math_f16c"),
    (["-D__NPU_ARCH__=2002"], "ascend310p_npu2002_autosync_nobf16math_f16c"),
])
def test_emulator_runtime_flavour_names_the_macros_the_runtime_reads(flags, name):
    # the preprocessor only: the name the runtime object defines and an EXTERN module references
    r = subprocess.run(["g++", "-std=c++17", "-E", "-P", *INC, *flags, "-DOPKIT_EMU_RUNTIME_IMPL", "-x", "c++", "-"],
                       input='#include "opkit_emu/config.h"\n', capture_output=True, text=True, check=True)
    assert re.findall(r"opkit_emu_runtime_flavour_\w+", r.stdout) == [f"opkit_emu_runtime_flavour_{name}"] * 2


# ---- concurrent writers of one cached object ----------------------------------------------------------------------
def test_emulator_runtime_object_written_by_concurrent_callers(tmp_path, monkeypatch):
    # a tiny source in place of the runtime, so many writers overlap cheaply; every one must get the complete object
    src = tmp_path / "rt.cpp"
    src.write_text("".join(f"int opkit_race_{i}(int x) {{ return x * {i} + {i}; }}\n" for i in range(400)))
    monkeypatch.setattr(modules, "RUNTIME_SOURCE", src)
    for round_ in range(3):
        out_dir = tmp_path / f"r{round_}"
        start, results, errors = threading.Barrier(6), [], []

        def ask():
            start.wait()
            try:
                results.append(runtime_object([], "-O0", out_dir))
            except Exception as e:  # noqa: BLE001 -- the failure the test looks for
                errors.append(e)
        threads = [threading.Thread(target=ask) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert len(set(results)) == 1
        syms = subprocess.run(["nm", str(results[0])], capture_output=True, text=True, check=True).stdout
        assert syms.count("opkit_race_") == 400
        assert sorted(p.name for p in out_dir.iterdir()) == [results[0].name]   # no temp left behind


def _read_syscalls() -> int:
    return int(re.search(r"^syscr: (\d+)$", Path("/proc/self/io").read_text(), re.M).group(1))


def test_launches_read_no_file_for_the_thread_count(pair, monkeypatch):
    """default_threads asks for the host's CPU count once per process: glibc's hardware_concurrency opens and reads
    /sys/devices/system/cpu/online, ~3 us of syscalls, a tenth of a small launch when it ran on every one (issue 38
    item 1). OPKIT_EMU_THREADS set, as bench_host_isa's one-thread rows have it, takes the path that asks."""
    if not Path("/proc/self/io").is_file():
        pytest.skip("no /proc/self/io (the read-syscall count) on this host")
    monkeypatch.setenv("OPKIT_EMU_THREADS", "1")
    rows, cols, blocks = 8, 64, 4
    x = np.ones((rows, cols), np.float32)
    w, b = np.ones(cols, np.float32), np.zeros(cols, np.float32)
    til = tiling(rows, cols, blocks)
    for path in pair["float"]:
        m = KernelModule(path)
        y = np.zeros_like(x)
        m.launch([x, w, b, y, None, til], blocks, fast=True)
        before = _read_syscalls()
        for _ in range(50):
            m.launch([x, w, b, y, None, til], blocks, fast=True)
        reads = _read_syscalls() - before
        assert reads < 10, f"{path.name}: {reads} read syscalls in 50 launches"
