"""The emulator runtime compiled once (python/opkit/csrc/op/emulator_runtime.cpp, OPKIT_EMU_RT in opkit_emu/config.h):
a kernel module that links the runtime object computes, counts and reports exactly what the header-only module
does; its own compile leaves the runtime to the object; the headers stay header-only by default."""
from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import CACHE
from opkit.emulator import host_include_dir, include_dir
from opkit.emulator.abi import KernelModule
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


def test_emulator_runtime_extern_module_leaves_the_runtime_to_the_object(tmp_path):
    tu = tmp_path / "module.cpp"
    tu.write_text(module_source(KERNEL, "emu_layer_norm", 6))
    obj = tmp_path / "module.o"
    subprocess.run(["g++", "-std=c++17", "-O1", "-fPIC", "-fvisibility=hidden", "-c", *INC, "-DDTYPE_X=float",
                    "-DOPKIT_EMU_RUNTIME_EXTERN", str(tu), "-o", str(obj)], check=True)
    rt = runtime_object(["-DDTYPE_X=float"], "-O1", CACHE / "modules")
    mod = subprocess.run(["nm", "-C", str(obj)], capture_output=True, text=True, check=True).stdout
    lib = subprocess.run(["nm", "-C", str(rt)], capture_output=True, text=True, check=True).stdout
    for fn in ("opkit_emu::run_blocks_fn", "opkit_emu::module_launch_fn", "opkit_emu::ApiCall::commit",
               "opkit_emu::HazardState::access", "opkit_emu::Violation::Violation", "AscendC::TPipe::Release"):
        assert _defined(mod, fn) in ("U", ""), f"{fn} was compiled into the module again"
        assert _defined(lib, fn) in ("T", "t"), f"{fn} is not in the runtime object"
    # the kernel's calls reach the runtime through these: referenced, not compiled here
    assert _defined(mod, "opkit_emu::module_launch_fn") == "U" and _defined(mod, "opkit_emu::ApiCall::commit") == "U"


def test_emulator_runtime_headers_stay_header_only_by_default(tmp_path):
    # what `opkit cflags` gives a standalone program: no macro, every runtime function defined inline
    obj = tmp_path / "standalone.o"
    subprocess.run(["g++", "-std=c++17", "-O0", "-c", *INC, "-DDTYPE_X=float", "-x", "c++", "-", "-o", str(obj)],
                   input=module_source(KERNEL, "emu_layer_norm", 6), text=True, check=True)
    syms = subprocess.run(["nm", "-C", str(obj)], capture_output=True, text=True, check=True).stdout
    assert _defined(syms, "opkit_emu::run_blocks_fn") in ("W", "T", "t")


def test_emulator_runtime_impl_and_extern_exclude_each_other():
    r = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", *INC, "-DOPKIT_EMU_RUNTIME_IMPL",
                        "-DOPKIT_EMU_RUNTIME_EXTERN", str(RUNTIME_SOURCE)], capture_output=True, text=True)
    assert r.returncode != 0 and "exclude each other" in r.stderr
