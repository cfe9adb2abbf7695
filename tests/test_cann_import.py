"""`opkit import-cann`: CANN custom-op projects as they are (docs/cann.md). The two projects written here
(examples/cann: msOpGen layout ScaledAdd, ops-math layout ScaleShift) go through import, build and the quick
matrix unchanged; the host runner runs their own TilingFunc / InferShape on the CPU context; what a project
gets wrong is reported by stage, op and cause."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from opkit.cannproject import layout
from opkit.cannproject.op import CannOp
from opkit.errors import EmulatorError, OpkitError
from opkit.opspec import load_spec

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "cann"
OPKIT = [sys.executable, "-m", "opkit"]


def _run(args, cwd):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run(OPKIT + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("example,op,reference", [
    ("msopgen", "scaled_add", "x + alpha * y"),
    ("opsmath", "scale_shift", "x * scale + shift"),
])
def test_project_imports_unchanged_builds_and_passes(tmp_path, example, op, reference):
    r = _run(["import-cann", str(EXAMPLES / example), "--reference", reference], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "runs on the emulator (" in r.stdout
    dest = tmp_path / "ops" / op
    for sub in ("op_host", "op_kernel"):        # copied byte for byte
        for f in (EXAMPLES / example / sub).rglob("*"):
            if f.is_file():
                assert (dest / sub / f.relative_to(EXAMPLES / example / sub)).read_bytes() == f.read_bytes()
    spec = load_spec(dest / "op.yaml")
    assert spec.lang == "cann" and set(spec.dtypes) == {"float16", "float32"}
    for cmd in (["build"], ["test", "--quick"]):
        r = _run(cmd, tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
    assert "verdict: PASS" in r.stdout and " 0 failed" in r.stdout
    report = json.loads((tmp_path / "build/opkit/reports/report-quick.json").read_text())
    assert report["cases"] and all(c["verdict"] == "pass" for c in report["cases"])


@pytest.fixture(scope="module")
def scale_shift(tmp_path_factory):
    op = CannOp(layout.find(EXAMPLES / "opsmath"), "ScaleShift", tmp_path_factory.mktemp("ss"))
    yield op
    op.close()


def test_template_key_decodes_to_the_selected_instance(scale_shift):
    op = scale_shift
    # ASCENDC_TPL_SEL: D_T_X in {float, float16} x ALIGNED in {0, 1}, declaration order
    assert sorted(op.instances()) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    aligned = op.tiling([torch.zeros(48 * 64)], {"scale": 2.0, "shift": 1.0})
    ragged = op.tiling([torch.zeros(77, dtype=torch.float16)], {"scale": 2.0, "shift": 1.0})
    assert op.decode_key(aligned["tiling_key"]) == (0, 1)      # fp32 (DT_FLOAT = 0), 8 bits; then ALIGNED
    assert op.decode_key(ragged["tiling_key"]) == (1, 0)
    assert aligned["block_dim"] == 48 and aligned["data_size"] == 32    # GetTilingData<T>: sizeof(T)
    x = torch.randn(77, dtype=torch.float16)
    y, = op([x], {"scale": 2.0, "shift": 1.0})
    torch.testing.assert_close(y, (x.float() * 2 + 1).half(), rtol=1e-3, atol=1e-3)


def test_host_layout_matches_the_kernel_struct(tmp_path):
    """msOpGen: set_ + SaveToBuffer on the host, GET_TILING_DATA in the kernel: the float alpha sits at byte
    12 of 16 (CANN pads to 8), so a wrong layout would scale by garbage."""
    op = CannOp(layout.find(EXAMPLES / "msopgen"), "ScaledAdd", tmp_path)
    try:
        r = op.tiling([torch.zeros(4, 1000), torch.zeros(4, 1000)], {"alpha": 0.5})
        raw = bytes.fromhex(r["tiling"])
        assert r["data_size"] == 16 and raw[12:16] == torch.tensor([0.5]).numpy().tobytes()
        assert r["outputs"] == [{"dtype": 0, "shape": [4, 1000]}]      # InferShape ran
        x, y = torch.randn(3, 77), torch.randn(3, 77)
        z, = op([x, y], {"alpha": -2.0})
        torch.testing.assert_close(z, x - 2 * y)
        assert r["tiling_key"] == 1 and op.tiling([x, y], {"alpha": 1.0})["tiling_key"] == 2
    finally:
        op.close()


def _broken_project(tmp_path: Path, body: str) -> layout.Project:
    root = tmp_path / "proj"
    shutil.copytree(EXAMPLES / "msopgen", root)
    src = root / "op_host" / "scaled_add.cpp"
    text = src.read_text()
    src.write_text(text.replace("    ScaledAddTilingData tiling;\n", "    ScaledAddTilingData tiling;\n" + body, 1))
    return layout.find(root)


def test_tiling_failure_and_crash_are_reported(tmp_path):
    op = CannOp(_broken_project(tmp_path / "a", "    if (context->GetInputShape(0)->GetStorageShape().GetDim(0) "
                                "== 5) return ge::GRAPH_FAILED;\n    if (context->GetInputShape(0)->GetStorageShape()"
                                ".GetDim(0) == 6) { volatile int* p = nullptr; *p = 1; }\n"), "ScaledAdd", tmp_path)
    try:
        with pytest.raises(OpkitError, match=r"op ScaledAdd: tiling failed: TilingFunc returned GRAPH_FAILED"):
            op([torch.zeros(5, 8), torch.zeros(5, 8)], {"alpha": 1.0})
        with pytest.raises(OpkitError, match=r"the op's host code crashed \(signal 11\)"):
            op([torch.zeros(6, 8), torch.zeros(6, 8)], {"alpha": 1.0})
        z, = op([torch.ones(4, 8), torch.ones(4, 8)], {"alpha": 1.0})     # the runner restarts
        assert torch.equal(z, torch.full((4, 8), 2.0))
    finally:
        op.close()


def test_project_errors_name_the_file(tmp_path):
    with pytest.raises(OpkitError, match="not a CANN custom-op project"):
        layout.find(tmp_path)
    bad = _broken_project(tmp_path, "    tiling.set_noSuchField(1);\n")
    with pytest.raises(OpkitError, match=r"(?s)op_host: the op_host sources do not compile.*scaled_add.cpp:13:12: error: .*set_noSuchField"):
        CannOp(bad, "ScaledAdd", tmp_path / "b")
    with pytest.raises(OpkitError, match=r"no OpDef registers Nope \(OP_ADD\); registered: ScaledAdd"):
        CannOp(layout.find(EXAMPLES / "msopgen"), "Nope", tmp_path / "c")


def _contest_style_project(tmp_path: Path, extra: int) -> layout.Project:
    """The example kernel rewritten the way many public kernels are: every tile, the last one too, moved with
    DataCopy rounded up to whole 32-byte blocks (plus `extra` elements), so a ragged tensor is read and
    written past its end (`extra` more elements on a ragged tile)."""
    root = tmp_path / "proj"
    shutil.copytree(EXAMPLES / "msopgen", root)
    src = root / "op_kernel" / "scaled_add.cpp"
    text = src.read_text().replace("if (TILING_KEY_IS(1))", "if (true)")
    text = text.replace("uint32_t n = length - done < tileLength ? length - done : tileLength;\n",
                        "uint32_t n = length - done < tileLength ? length - done : tileLength;\n"
                        f"            n = (n + 32 / sizeof(T) - 1) / (32 / sizeof(T)) * (32 / sizeof(T)) + "
                        f"(n % (32 / sizeof(T)) ? {extra} : 0);\n")
    src.write_text(text)
    return layout.find(root)


def test_rounded_up_tail_stays_inside_the_device_allocation(tmp_path):
    """GM tensors are launched as aclrtMalloc allocates them (ALIGN_UP(size, 32) + 32 bytes): a whole last
    32-byte block read and written past a ragged tensor is legal and computes right; going further is
    gm-bounds, as it would overrun the allocation on the device."""
    op = CannOp(_contest_style_project(tmp_path / "a", 0), "ScaledAdd", tmp_path / "a")
    try:
        for shape in ((3, 77), (1, 3079)):
            x, y = torch.randn(shape), torch.randn(shape)
            z, = op([x, y], {"alpha": 0.5})
            torch.testing.assert_close(z, x + 0.5 * y)
    finally:
        op.close()
    op = CannOp(_contest_style_project(tmp_path / "b", 16), "ScaledAdd", tmp_path / "b")
    try:
        with pytest.raises(EmulatorError, match=r"\[gm-bounds\] DataCopy .*past the end of the GM buffer of kernel "
                                                r"argument 0 \(12352 bytes\)"):
            op([torch.randn(1, 3079), torch.randn(1, 3079)], {"alpha": 0.5})   # 12316 bytes of data
    finally:
        op.close()


def test_entry_named_like_a_c_library_function_compiles(tmp_path):
    """On the device `extern "C" __global__ __aicore__ void div(...)` is an ordinary kernel (public contest
    kernels are named div, asinh, fmax); on the CPU ::div is <cstdlib>'s. The build renames the entry for the
    kernel file, so the project compiles and runs unchanged."""
    root = tmp_path / "proj"
    for f in (EXAMPLES / "msopgen").rglob("*"):
        if f.is_file():
            dest = root / str(f.relative_to(EXAMPLES / "msopgen")).replace("scaled_add", "div")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(f.read_text().replace("ScaledAdd", "Div").replace("scaled_add", "div")
                            .replace("SCALED_ADD", "DIV"))
    assert 'extern "C" __global__ __aicore__ void div(' in (root / "op_kernel" / "div.cpp").read_text()
    op = CannOp(layout.find(root), "Div", tmp_path / "build")
    try:
        x, y = torch.randn(3, 77), torch.randn(3, 77)
        z, = op([x, y], {"alpha": 2.0})
        torch.testing.assert_close(z, x + 2 * y)
    finally:
        op.close()


def test_advanced_api_tiling_softmax(tmp_path):
    """tiling/tiling_api.h on both sides: the project's TilingFunc nests optiling::SoftMaxTiling and fills it with
    SoftMaxTilingFunc (CANN's algorithm: rows per pass from the work buffer), the kernel reads the same struct
    and runs SoftMax on it (tests/cann_projects/row_softmax, written here)."""
    op = CannOp(layout.find(ROOT / "tests" / "cann_projects" / "row_softmax"), "RowSoftmax", tmp_path)
    try:
        r = op.tiling([torch.zeros(13, 77)], {})
        raw = bytes.fromhex(r["tiling"])
        head = torch.frombuffer(bytearray(raw[:20]), dtype=torch.int32).tolist()
        sm = torch.frombuffer(bytearray(raw[24:88]), dtype=torch.int32).tolist()    # the nested struct at 8
        assert head == [13, 77, 80, 8, (8 + 80 + 64) * 4] and r["data_size"] == 88
        # srcM srcK srcSize outMaxM outMaxK outMaxSize splitM splitK splitSize reduceM reduceK reduceSize
        # rangeM tailM tailSplitSize tailReduceSize: a one-row work buffer gives one row per pass
        assert sm == [8, 80, 640, 8, 8, 64, 1, 80, 80, 1, 8, 8, 8, 0, 0, 0]
        for dtype, tol in ((torch.float32, 1e-6), (torch.float16, 1e-3)):
            for shape in ((13, 77), (16, 256)):
                x = torch.randn(shape, dtype=dtype) * 3
                y, = op([x], {})
                torch.testing.assert_close(y.float(), torch.softmax(x.float(), -1), rtol=tol, atol=tol)
    finally:
        op.close()


def test_cube_tiling_is_rejected_by_name(tmp_path):
    """A tiling header nesting TCubeTiling (Matmul) stops the host build with the name. (The kernel side declares
    TCubeTiling since issue 39 round 4: a vector kernel's tiling struct may hold one it never reads; using Matmul
    stays rejected -- tests/emulator/test_cann_build.py.)"""
    root = tmp_path / "proj"
    shutil.copytree(ROOT / "tests" / "cann_projects" / "row_softmax", root)
    hdr = root / "op_host" / "row_softmax_tiling.h"
    hdr.write_text(hdr.read_text().replace("TILING_DATA_FIELD_DEF_STRUCT(SoftMaxTiling, softmax);",
                                           "TILING_DATA_FIELD_DEF_STRUCT(SoftMaxTiling, softmax);\n"
                                           "TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cube);"))
    with pytest.raises(OpkitError, match=r"not supported on the emulator: TCubeTiling \(tiling of the cube unit"):
        CannOp(layout.find(root), "RowSoftmax", tmp_path / "b")
