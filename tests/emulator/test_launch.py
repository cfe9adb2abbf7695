"""The two launch paths (issue items 5, 6, 8, 9): kernel modules through the C launch ABI
(OPKIT_EMU_DEFINE_MODULE, python/opkit/include/opkit/launch_abi.h) and CANN-style CPU-debug programs
(tikicpulib.h + ICPU_RUN_KF, built with `opkit cflags`); chip profiles; counters."""
from __future__ import annotations

import re
import shutil
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import CACHE, ROOT
from opkit.emulator import cflags
from opkit.emulator.abi import KernelModule
from opkit.emulator.modules import compile_module
from opkit.errors import EmulatorError

HERE = Path(__file__).resolve().parent
KERNEL = HERE / "test_launch.cpp"
VARIANTS = {"float": ("float", "ascend910b"), "half": ("half", "ascend910b"), "bf16": ("bfloat16_t", "ascend910b"),
            "float_310p": ("float", "ascend310p")}
NP = {"float": np.float32, "half": np.float16}


@pytest.fixture(scope="module")
def modules():
    with ThreadPoolExecutor(2) as ex:
        futs = {k: ex.submit(compile_module, KERNEL, "emu_layer_norm", 6, CACHE / "modules",
                             defines={"DTYPE_X": t}, profile=p, opt="-O1") for k, (t, p) in VARIANTS.items()}
        return {k: f.result() for k, f in futs.items()}


def ln_tiling(rows, cols, blocks, eps=1e-5):
    return np.frombuffer(struct.pack("IIIf", rows, cols, -(-rows // blocks), eps), np.uint8).copy()


def to_bf16_bits(a: np.ndarray) -> np.ndarray:
    return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)


def from_bf16_bits(b: np.ndarray) -> np.ndarray:
    return torch.from_numpy(b.view(np.int16)).view(torch.bfloat16).float().numpy()


@pytest.mark.parametrize("variant", ["float", "half", "bf16"])
def test_module_layer_norm_numerics_and_stats(modules, variant):
    rows, cols, blocks = 33, 1000, 5
    rng = np.random.default_rng(5)
    x32, w32, b32 = rng.standard_normal((rows, cols)) * 3 + 1, rng.random(cols), rng.random(cols)
    if variant == "bf16":
        x, w, b = to_bf16_bits(x32), to_bf16_bits(w32), to_bf16_bits(b32)
        as_f = from_bf16_bits
    else:
        x, w, b = (a.astype(NP[variant]) for a in (x32, w32, b32))
        as_f = lambda a: a.astype(np.float32)  # noqa: E731
    y = np.zeros_like(x)
    st = KernelModule(modules[variant]).launch([x, w, b, y, None, ln_tiling(rows, cols, blocks)], blocks)
    xf, wf, bf = (torch.from_numpy(as_f(a)).double() for a in (x, w, b))
    ref = torch.nn.functional.layer_norm(xf, (cols,), wf, bf, 1e-5).numpy()
    tol = {"float": 1e-5, "half": 2e-3, "bf16": 1.6e-2}[variant]
    np.testing.assert_allclose(as_f(y), ref, rtol=tol, atol=tol)
    esz = x.itemsize
    assert st["blocks"] == blocks
    assert st["gm_read_bytes"] == rows * cols * esz + blocks * (2 * cols * esz + 16)
    assert st["gm_write_bytes"] == rows * cols * esz
    assert st["ub_high_water"] == 2 * 2 * (-(-cols * esz // 32) * 32) + 4 * cols * 4 + 64
    assert st["vector_repeats"] > 0 and st["max_block_gm_bytes"] > 0


def test_module_results_independent_of_threads(modules):
    rows, cols, blocks = 40, 512, 9
    x = np.random.default_rng(1).standard_normal((rows, cols)).astype(np.float16)
    w, b = np.ones(cols, np.float16), np.zeros(cols, np.float16)
    outs = []
    for threads in (1, 2, 4):
        y = np.zeros_like(x)
        KernelModule(modules["half"]).launch([x, w, b, y, None, ln_tiling(rows, cols, blocks)], blocks, threads=threads)
        outs.append(y)
    assert all(np.array_equal(outs[0], o) for o in outs)


def initbuffer_line() -> int:
    return next(i for i, l in enumerate(KERNEL.read_text().splitlines(), 1) if "pipe->InitBuffer(xf_" in l)


@pytest.mark.parametrize("variant,fails", [("float", True), ("float_310p", False)])
def test_ub_capacity_per_profile(modules, variant, fails):
    # 6496 float columns need 203 KiB of UB: over A2's whole 192 KiB UB (CANN's TPipe limit), inside 310P's 256 KiB.
    rows, cols = 2, 6496
    x, w, b = np.ones((rows, cols), np.float32), np.ones(cols, np.float32), np.zeros(cols, np.float32)
    y = np.zeros_like(x)
    m = KernelModule(modules[variant])
    if fails:
        with pytest.raises(EmulatorError) as e:
            m.launch([x, w, b, y, None, ln_tiling(rows, cols, 1)], 1)
        assert (e.value.rule, e.value.call, e.value.block) == ("ub-capacity", "TPipe::InitBuffer", 0)
        assert Path(e.value.file) == KERNEL and e.value.line >= initbuffer_line()
        assert "ascend910b allows 196608 bytes" in e.value.detail
    else:
        st = m.launch([x, w, b, y, None, ln_tiling(rows, cols, 1)], 1)
        assert st["ub_high_water"] > 188160
        np.testing.assert_allclose(y, 0.0, atol=1e-6)


def test_module_bad_arguments_are_errors_not_crashes(modules):
    m = KernelModule(modules["float"])
    with pytest.raises(RuntimeError, match="takes 6 GM arguments, launch passed 2"):
        m.launch([np.zeros(8, np.float32), None], 1)
    with pytest.raises(RuntimeError, match="block_dim is 0"):
        m.launch([None] * 6, 0)
    # a tiling buffer too small for the struct is a GM bounds violation, reported, not a crash
    with pytest.raises(EmulatorError) as e:
        m.launch([None, None, None, None, None, np.zeros(4, np.uint8)], 2)
    assert (e.value.rule, e.value.call) == ("gm-bounds", "GET_TILING_DATA")


def test_module_exports_only_the_entry_point(modules):
    nm = shutil.which("nm")
    assert nm, "binutils nm is needed for this check"
    for path in modules.values():
        syms = subprocess.run([nm, "-D", "--defined-only", str(path)], capture_output=True, text=True).stdout
        names = [l.split()[-1] for l in syms.splitlines() if l.strip()]
        assert "opkit_kernel_launch" in names
        leaked = [n for n in names if "opkit_emu" in n or "EmuLayerNorm" in n or "emu_layer_norm" in n]
        assert not leaked, leaked


# ---- CANN CPU-debug style program ------------------------------------------------------------

EXAMPLE = ROOT / "examples" / "cpu_debug" / "add_custom.cpp"


def build_program(src: Path, out: Path, profile="ascend910b") -> subprocess.CompletedProcess:
    cmd = ["g++", *cflags(profile=profile), str(src), *cflags(libs=True), "-o", str(out)]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_cpu_debug_example_builds_and_runs(tmp_path):
    r = build_program(EXAMPLE, tmp_path / "add_custom")
    assert r.returncode == 0, r.stderr[-3000:]
    run = subprocess.run([str(tmp_path / "add_custom")], capture_output=True, text=True,
                         env={"OPKIT_EMU_STATS": "1"})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "16384 elements, 0 mismatches" in run.stdout
    assert "opkit emulator: add_custom: 8 blocks, GM read 65536 B, GM write 32768 B" in run.stderr


def test_a_launchs_blocks_reuse_the_threads_block_context(tmp_path):
    # Issue 38: every block used to build its context afresh (hazard log, buffer and queue records, queue fifos,
    # flags): ~60 of a small LayerNorm call's ~106 heap allocations. Now a thread's blocks reuse one context, so
    # once warm a launch of 8 blocks on one thread allocates as often as a launch of 1 (per-launch records only).
    src = HERE / "test_launch_allocs.cpp"
    r = build_program(src, tmp_path / "allocs")
    assert r.returncode == 0, r.stderr[-3000:]
    run = subprocess.run([str(tmp_path / "allocs")], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "mismatches 0" in run.stdout, run.stdout
    # The reuse must not carry state over: block 0 leaves a buffer in a queue's fifo, block 1 (same thread) must
    # not DeQue it.
    assert "stale queue 0 " in run.stdout, run.stdout
    # A launch from inside a block on the same thread leaves the outer block's context and UB intact.
    assert "nested 0 " in run.stdout, run.stdout
    # A long checked block's hazard log (MiBs) is given back at the block's end, not kept with the context.
    kept = re.search(r"long status 0 0 log (\d+) KiB, next block starts with (\d+) KiB", run.stdout)
    assert kept and int(kept.group(1)) >= 256 and int(kept.group(2)) <= 64, run.stdout
    counts = {(int(f), int(b)): int(n) for f, b, n in
              (line.split()[1:] for line in run.stdout.splitlines() if line.startswith("allocs "))}
    assert set(counts) == {(0, 1), (0, 8), (1, 1), (1, 8)}, run.stdout
    for flags in (0, 1):   # checked, fast
        assert counts[flags, 8] == counts[flags, 1], run.stdout


def test_cpu_debug_violation_exits_nonzero(tmp_path):
    src = tmp_path / "add_custom_bad.cpp"
    text = EXAMPLE.read_text()
    assert "kTile = 256" in text
    src.write_text(text.replace("kTile = 256", "kTile = 250"))  # 500-byte copies: not a multiple of 32 B
    r = build_program(src, tmp_path / "bad")
    assert r.returncode == 0, r.stderr[-3000:]
    run = subprocess.run([str(tmp_path / "bad")], capture_output=True, text=True)
    assert run.returncode == 1
    err = EmulatorError.from_message(run.stderr)
    assert err is not None, run.stderr
    assert (err.rule, err.call, Path(err.file).name) == ("datacopy-length", "DataCopy", src.name)
    assert "silently copy only 480 bytes" in err.detail


def test_opkit_cli_cflags_builds_example(tmp_path):
    """The documented command line, through the real CLI, in a narrow terminal (output must not wrap)."""
    import os
    import sys
    env = dict(os.environ, COLUMNS="40", PYTHONPATH=str(ROOT / "python"))
    cli = f"{sys.executable} -m opkit cflags"
    script = f"g++ -std=c++17 $({cli}) {EXAMPLE} $({cli} --libs) -o {tmp_path / 'ex'} && {tmp_path / 'ex'}"
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert "0 mismatches" in r.stdout
    printed = subprocess.run([sys.executable, "-m", "opkit", "cflags"], capture_output=True, text=True, env=env).stdout
    assert printed.split() == cflags()


def test_cflags_shape():
    flags = cflags()
    assert flags[0] == "-std=c++17"
    assert any(f.endswith("emulator/include") for f in flags) and any(f.endswith("opkit/include") for f in flags)
    assert "-DASCENDC_CPU_DEBUG=1" in flags and "-D__NPU_ARCH__=2201" in flags
    assert not any("__CCE_AICORE__" in f for f in flags)
    assert "-D__NPU_ARCH__=2002" in cflags(profile="ascend310p")
    assert cflags(libs=True) == ["-lpthread"]
