"""ClampMin / ClampMax, Fmod and Xor (lib/math/{clamp,fmod,xor}.h), against PyTorch.

Pages: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/数学计算/{Clamp,Fmod,Xor}接口/; the A2 code each header
cites. Clamp and Xor are exact; Fmod is CANN's a - trunc(a / b) * b with each step rounded to float (half cast in and
out), compared with that formula in torch float32 exactly, and with torch.fmod where the quotient is exact."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError

SRC = Path(__file__).resolve().parent / "test_clamp_fmod_xor.cpp"
N = 256
MIN_TMP = {"ClampMin": (64, 128), "ClampMax": (64, 128), "Fmod": (256, 2048), "Xor": (256, 256)}
OP = {"ClampMin": 0, "ClampMax": 1, "Fmod": 2, "Xor": 3}


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load  # one module, built on its own (cached)
    return load(compile_pybind("clamp_fmod_xor", headers_digest()), "clamp_fmod_xor")


def marker(tag: str) -> int:
    return next(i for i, t in enumerate(SRC.read_text().splitlines(), 1) if t.rstrip().endswith(f"// CFX:{tag}"))


def call(mod, name, form, half, cal, tmp, x, y, scalar=0.0):
    out = np.zeros(N, np.float32)
    t = np.frombuffer(np.array([OP[name], form, half], np.int32).tobytes() +
                      np.array([N, cal, tmp], np.uint32).tobytes() + np.array([scalar], np.float32).tobytes(),
                      np.uint8).copy()
    mod.cfx_call([x, y, out, t], block_dim=1)
    return out


def uniform(lo, hi, seed):
    return np.random.default_rng(seed).uniform(lo, hi, N).astype(np.float32)


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("name", ["ClampMin", "ClampMax"])
def test_clamp_is_exact(mod, name, half):
    x = uniform(-5, 5, 0)
    x[:3] = [np.nan, -np.inf, np.inf]
    dt = torch.float16 if half else torch.float32
    xt = torch.from_numpy(x).to(dt)
    s = 0.75
    want = (torch.clamp(xt, min=s) if name == "ClampMin" else torch.clamp(xt, max=s)).float().numpy()
    for form in (0, 1):
        cal = N - 13
        got = call(mod, name, form, half, cal, MIN_TMP[name][half], x, x, scalar=s)
        np.testing.assert_array_equal(got[:cal], want[:cal], err_msg=f"{name} form {form}")  # NaN stays NaN
        assert not got[cal:].any()


def fmod_like_cann(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a - torch.trunc(a / b) * b  # float32 tensors: each op rounded to float, as the vector unit


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
def test_fmod_every_form(mod, half):
    x, y = uniform(-50, 50, 1), uniform(0.5, 7, 2) * np.where(uniform(-1, 1, 3) < 0, -1, 1).astype(np.float32)
    dt = torch.float16 if half else torch.float32
    xt, yt = torch.from_numpy(x).to(dt).float(), torch.from_numpy(y).to(dt).float()
    want = fmod_like_cann(xt, yt).to(dt).float().numpy()
    for form in (0, 1, 2, 3):
        cal = N - 13 if form in (0, 1) else N
        got = call(mod, "Fmod", form, half, cal, MIN_TMP["Fmod"][half], x, y)
        np.testing.assert_array_equal(got[:cal], want[:cal], err_msg=f"form {form}")
        assert not got[cal:].any()
    # where the quotient is exact, CANN's formula is C's fmod
    np.testing.assert_allclose(want, torch.fmod(xt, yt).to(dt).float().numpy(), rtol=1e-2 if half else 1e-4,
                               atol=2e-2 if half else 1e-4)


def test_fmod_rounded_quotient_differs_from_c_fmod(mod):
    """7 / 0.1 rounds to 70 in float: CANN's steps give 0, C's fmod the true remainder (~0.1)."""
    a, b = np.float32(7.0), np.float32(0.1)
    x, y = np.full(N, a, np.float32), np.full(N, b, np.float32)
    got = call(mod, "Fmod", 1, 0, N, 256, x, y)[0]
    assert got == fmod_like_cann(torch.tensor([a]), torch.tensor([b])).item()
    assert got != torch.fmod(torch.tensor([a]), torch.tensor([b])).item()


@pytest.mark.parametrize("form", [0, 1, 2, 3])
def test_xor_is_exact(mod, form):
    rng = np.random.default_rng(4)
    a = rng.integers(-32768, 32767, 2 * N, dtype=np.int16)
    b = rng.integers(-32768, 32767, 2 * N, dtype=np.int16)
    cal = 2 * N - 13 if form in (0, 1) else 2 * N
    got = call(mod, "Xor", form, 0, cal, 256, a.view(np.float32).copy(), b.view(np.float32).copy()).view(np.int16)
    np.testing.assert_array_equal(got[:cal], (torch.from_numpy(a) ^ torch.from_numpy(b)).numpy()[:cal])
    assert not got[cal:].any()


@pytest.mark.parametrize("name,half", [("ClampMin", 0), ("ClampMax", 1), ("Fmod", 0), ("Fmod", 1), ("Xor", 0)])
def test_tmp_buffer_below_cann_minimum_is_a_rule_violation(mod, name, half):
    need = MIN_TMP[name][half]
    x = uniform(1, 5, 0)
    with pytest.raises(EmulatorError) as e:
        call(mod, name, 0, half, N, need - 32, x, x)
    err = e.value
    assert err.rule == "tensor-bounds" and err.call == name
    assert err.file.endswith("test_clamp_fmod_xor.cpp") and marker("first") <= err.line <= marker("last")
    sizer = "GetClampMaxMinTmpSize" if name.startswith("Clamp") else f"Get{name}MaxMinTmpSize"
    assert sizer in err.detail and str(need) in err.detail
    call(mod, name, 0, half, N, need, x, x)  # exactly the minimum is enough


def test_xor_rejects_other_types_naming_the_page(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                   'void f(LocalTensor<int32_t> d, LocalTensor<int32_t> s) { Xor(d, s, s, 8u); }\n')
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0 and "Xor supports int16_t and uint16_t (Xor-82.md)" in r.stderr


# -- host queries (tiling/opkit_adv_math_more_tmp_sizes.h) in a `.asc` program, against CANN's formulas -----------
PROGRAM = Path(__file__).resolve().parent / "test_clamp_fmod_xor_tmp_sizes.asc"
HOST_EXPECTED = {  # shape [3, 1000] unless named; (max, min), from impl/adv_api/tiling/math/*
    "clamp_f32": (3000, 64),              # clamp_tiling_impl.cpp: one byte per element, at least 64 / 128
    "clamp_f16_16": (128, 128),
    "fmod_f32": (1 * 3000 * 4, 256),      # fmod_tiling_impl.cpp: Trunc's 1 node (float)
    "fmod_f16": (8 * 3000 * 2, 8 * 256),  # Trunc's 2 + 6 for half
    "xor_i16": (3000 * 2, 256),           # xor_tiling.cpp
    "fmod_factor_f16": (8, 0),
    "dropout_f16": (2 * 3000 * 4, 512),   # filter/dropout_tiling_impl.cpp: 2 floats per element, min 2 repeats
}
HOST_FAMILIES = {0: "GetFmodMaxMinTmpSize", 1: "GetClampMaxMinTmpSize", 2: "GetXorMaxMinTmpSize"}


def run_asc(*defines: str):
    from conftest import run_asc
    return run_asc(PROGRAM, defines=defines)


def test_host_tmp_sizes_are_canns_formulas():
    r = run_asc("FAMILY=0")
    assert r.returncode == 0, r.stdout + r.stderr
    got = {ln.split()[0]: (int(ln.split()[1]), int(ln.split()[2])) for ln in r.stdout.splitlines()
           if len(ln.split()) == 3 and ln.split()[1].isdigit()}
    assert got == HOST_EXPECTED


@pytest.mark.parametrize("family", sorted(HOST_FAMILIES))
def test_host_min_is_what_the_kernel_accepts(family):
    ok = run_asc(f"FAMILY={family}")
    assert ok.returncode == 0 and "ran with" in ok.stdout, ok.stdout + ok.stderr
    short = run_asc(f"FAMILY={family}", "SHRINK=32")
    assert short.returncode == 1, short.stdout + short.stderr
    assert "[tensor-bounds]" in short.stderr and HOST_FAMILIES[family] in short.stderr, short.stderr


def test_ascend_950_forms_are_named_compile_errors(gxx, tmp_path):
    """Fmod's FmodConfig form is Ascend 950 only: it stops the build with a message naming the page. Clamp(dst, src,
    min, max, count) is not declared (CANN's header gives it an empty body off the 950): a call is g++'s error naming
    it, and a kernel's own `Clamp` under `using namespace AscendC` stays unambiguous. The A2 forms beside them
    still resolve."""
    for call, words in (("Fmod<float, false, cfg>(d, s, s, 8u);", "Ascend 950 only (Fmod.md"),
                        ("Clamp(d, s, 0.0f, 1.0f, 8u);", "'Clamp' was not declared")):
        src = tmp_path / "k.cpp"
        src.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                       'static constexpr FmodConfig cfg = {FmodAlgo::NORMAL, FMOD_ITERATION_NUM_MAX};\n'
                       'void f(LocalTensor<float> d, LocalTensor<float> s) { Fmod(d, s, s, 8u); ' + call + ' }\n')
        r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
        assert r.returncode != 0 and words in r.stderr.replace("\u2018", "'").replace("\u2019", "'"), r.stderr[-2000:]
        assert r.stderr.count("error:") == 1, r.stderr[-2000:]
    own = tmp_path / "own.cpp"  # a kernel's own Clamp functor, as public kernels write it
    own.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                   'template <class T> struct Clamp { T lo, hi; T operator()(T v) const { return v < lo ? lo : '
                   '(v > hi ? hi : v); } };\nfloat g(float x) { return Clamp<float>{0.0f, 1.0f}(x); }\n')
    r = gxx(own, tmp_path / "own.o", ["-fsyntax-only"], link=False)
    assert r.returncode == 0, r.stderr[-2000:]
