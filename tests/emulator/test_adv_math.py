"""The advanced API's math library, vector side (lib/math/*.h; opkit_emu/adv_math.h), against PyTorch.

Pages: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/数学计算/<Name>接口/<Name>.md; signatures from
include/adv_api/math/<name>.h; minimum sharedTmpBuffer sizes from impl/adv_api/tiling/math/<name>_tiling*.cpp
(each family header cites its lines). The emulator computes each element with the host's float function rounded to
T; CANN's device algorithms are approximations, so results are compared within a tolerance, never bitwise:
float rtol 1e-5 (a few ulp), half one half-ulp of the result plus the input's rounding (rtol/atol 2e-3..1e-2)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError

HERE = Path(__file__).resolve().parent
SRC = HERE / "test_adv_math.cpp"

# name -> (op id in test_adv_math.cpp, torch reference, input range, forms CANN declares)
FOUR, TWO, NOTMP = (0, 1, 2, 3), (0, 1), (1, 3)
OPS = {
    "Sin": (0, torch.sin, (-6, 6), FOUR), "Cos": (1, torch.cos, (-6, 6), FOUR), "Tan": (2, torch.tan, (-1.4, 1.4), FOUR),
    "Asin": (3, torch.asin, (-0.99, 0.99), FOUR), "Acos": (4, torch.acos, (-0.99, 0.99), FOUR),
    "Atan": (5, torch.atan, (-8, 8), FOUR), "Sinh": (6, torch.sinh, (-5, 5), FOUR), "Cosh": (7, torch.cosh, (-5, 5), FOUR),
    "Tanh": (8, torch.tanh, (-5, 5), FOUR), "Asinh": (9, torch.asinh, (-8, 8), FOUR),
    "Acosh": (10, torch.acosh, (1, 9), FOUR), "Atanh": (11, torch.atanh, (-0.95, 0.95), FOUR),
    "Erf": (12, torch.erf, (-3, 3), FOUR), "Erfc": (13, torch.erfc, (-3, 3), FOUR),
    "Trunc": (14, torch.trunc, (-9, 9), FOUR), "Frac": (15, torch.frac, (-9, 9), FOUR),
    "Sign": (16, torch.sign, (-3, 3), FOUR), "Log2": (17, torch.log2, (0.01, 50), FOUR),
    "Floor": (18, torch.floor, (-9, 9), TWO), "Ceil": (19, torch.ceil, (-9, 9), TWO),
    "Round": (20, torch.round, (-9, 9), TWO), "Log": (21, torch.log, (0.01, 50), NOTMP),
    "Log10": (22, torch.log10, (0.01, 50), NOTMP), "Exp": (23, torch.exp, (-10, 10), TWO),
    "Sigmoid": (28, torch.sigmoid, (-8, 8), FOUR),  # lib/activation/sigmoid.h
}
# CANN's minimum sharedTmpBuffer (bytes) for float / half (GetXxxMaxMinTmpSize, isReuseSource false)
MIN_TMP = {"Sin": (768, 2048), "Cos": (768, 2048), "Tan": (1024, 2560), "Asin": (512, 1536), "Acos": (512, 1536),
           "Atan": (1280, 3072), "Sinh": (256, 1024), "Cosh": (512, 1536), "Tanh": (256, 1024), "Asinh": (768, 768),
           "Acosh": (256, 512), "Atanh": (256, 1024), "Erf": (768, 2048), "Erfc": (1792, 4096), "Trunc": (256, 512),
           "Frac": (0, 1024), "Sign": (768, 768), "Log2": (0, 256), "Floor": (0, 512), "Ceil": (256, 512),
           "Round": (0, 256), "Exp": (768, 1024), "Sigmoid": (256, 256)}
N = 256


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load  # one module, built on its own (cached)
    return load(compile_pybind("adv_math", headers_digest()), "adv_math")


def marker(tag: str) -> int:
    return next(i for i, t in enumerate(SRC.read_text().splitlines(), 1) if t.rstrip().endswith(f"// MATH:{tag}"))


def tiling(op, form, half, cal, tmp, scalar=0.0, poison=0, n=N):
    return np.array([op, form, half, n, cal, tmp, 0, poison], np.int32).view(np.uint8).copy() if False else \
        np.frombuffer(np.array([op, form, half], np.int32).tobytes() + np.array([n, cal, tmp], np.uint32).tobytes() +
                      np.array([scalar], np.float32).tobytes() + np.array([poison], np.int32).tobytes(), np.uint8).copy()


def call(mod, op, form, half, cal, tmp, x, y=None, scalar=0.0, poison=0):
    out = np.zeros(N, np.float32)
    y = np.zeros(N, np.float32) if y is None else y
    mod.math_call([x, y, out, tiling(op, form, half, cal, tmp, scalar, poison)], block_dim=1)
    return out


def inputs(lo, hi, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(lo, hi, N).astype(np.float32)
    x[:4] = [lo, hi, (lo + hi) / 2, np.float32(lo) * 0.5 if lo < 0 else lo]
    return x


def tol(name, half):
    if half:
        return dict(rtol=4e-3, atol=4e-3 if name not in ("Erfc",) else 1e-2)
    return dict(rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_family_matches_torch_in_every_form(mod, name, half):
    op, ref, (lo, hi), forms = OPS[name]
    x = inputs(lo, hi)
    xt = torch.from_numpy(x).to(torch.float16 if half else torch.float32)
    want = ref(xt.float() if not half else xt.float()).to(xt.dtype).float().numpy()
    tmp = max(MIN_TMP.get(name, (0, 0))[half], 32)
    for form in forms:
        cal = N - 13 if form in (0, 1) else N       # a ragged calCount: the rest of dst stays 0
        got = call(mod, op, form, half, cal, tmp, x)
        np.testing.assert_allclose(got[:cal], want[:cal], **tol(name, half), err_msg=f"{name} form {form}")
        assert not got[cal:].any(), f"{name} form {form} wrote past calCount"


def test_rounding_families_are_exact(mod):
    x = np.array([2.5, -2.5, 0.5, -0.5, 1.5, 3.7, -3.7, 0.0] * (N // 8), np.float32)
    for name, ref in (("Round", torch.round), ("Floor", torch.floor), ("Ceil", torch.ceil), ("Trunc", torch.trunc)):
        got = call(mod, OPS[name][0], 1, 0, N, 32, x)
        np.testing.assert_array_equal(got, ref(torch.from_numpy(x)).numpy(), err_msg=name)  # Round: ties to even


def test_sign_of_zero_and_nan_is_zero_as_the_page_shows(mod):
    x = np.array([-np.inf, -2.0, -0.0, 0.0, np.nan, -np.nan, 2.0, np.inf] * (N // 8), np.float32)
    got = call(mod, OPS["Sign"][0], 1, 0, N, 32, x)
    np.testing.assert_array_equal(got[:8], [-1, -1, 0, 0, 0, 0, 1, 1])


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
def test_power_three_operand_shapes(mod, half):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.1, 4, N).astype(np.float32)
    y = rng.uniform(-2, 3, N).astype(np.float32)
    dt = torch.float16 if half else torch.float32
    xt, yt = torch.from_numpy(x).to(dt).float(), torch.from_numpy(y).to(dt).float()
    t = tol("Power", half)
    tmp = 3584 if half else 1536
    for form in (0, 1, 2, 3):
        cal = N - 5 if form in (0, 1) else N
        got = call(mod, 24, form, half, cal, tmp, x, y)
        np.testing.assert_allclose(got[:cal], torch.pow(xt, yt).to(dt).float().numpy()[:cal], **t)
    s = 1.5
    got = call(mod, 25, 0, half, N, tmp, x, scalar=s)
    np.testing.assert_allclose(got, torch.pow(xt, s).to(dt).float().numpy(), **t)
    got = call(mod, 26, 1, half, N, tmp, x, scalar=s)
    np.testing.assert_allclose(got, torch.pow(torch.tensor(s), xt).to(dt).float().numpy(), **t)


def test_power_int32_is_exact(mod):
    rng = np.random.default_rng(2)
    x = rng.integers(-6, 7, N).astype(np.float32)
    y = rng.integers(-2, 8, N).astype(np.float32)
    got = call(mod, 24, 0, 0, N, 1536, x, y, scalar=7.0)[:N // 2]
    xi, yi = x[:N // 2].astype(np.int64), y[:N // 2].astype(np.int64)
    want = [int(a) ** int(b) if b >= 0 else (1 if a == 1 else (-1 if a == -1 and b % 2 else (1 if a == -1 else 0)))
            for a, b in zip(xi, yi)]
    np.testing.assert_array_equal(got, np.array(want, np.float32))


def test_axpy_with_shared_buffer(mod):
    x = inputs(-3, 3)
    got = call(mod, 27, 0, 0, N - 3, 256, x, scalar=0.5)
    np.testing.assert_allclose(got[:N - 3], 1 + 0.5 * x[:N - 3], rtol=1e-6)


def test_axpy_float_runs_with_canns_host_minimum(mod):
    """GetAxpyMaxMinTmpSize gives float 0 bytes (axpy_tiling_impl.cpp:44-52; the A2 code calls the basic Axpy,
    axpy_common_impl.h:153-166): the smallest buffer (32 bytes) runs; half still needs 4 x 256 bytes."""
    x = inputs(-3, 3)
    got = call(mod, 27, 0, 0, N, 32, x, scalar=0.5)
    np.testing.assert_allclose(got, 1 + 0.5 * x, rtol=1e-6)
    with pytest.raises(EmulatorError, match="GetAxpyMaxMinTmpSize") as e:
        call(mod, 27, 0, 1, N, 1024 - 32, x, scalar=0.5)
    assert e.value.rule == "tensor-bounds"
    got = call(mod, 27, 0, 1, N, 1024, x, scalar=0.5)
    xh = torch.from_numpy(x).half().float().numpy()
    np.testing.assert_allclose(got, 1 + 0.5 * xh, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("name,half", [("Sin", 0), ("Sin", 1), ("Erfc", 0), ("Atan", 1), ("Exp", 1), ("Floor", 1),
                                       ("Sigmoid", 0), ("Sigmoid", 1)])
def test_tmp_buffer_below_cann_minimum_is_a_rule_violation(mod, name, half):
    op, _, (lo, hi), _ = OPS[name]
    need = MIN_TMP[name][half]
    with pytest.raises(EmulatorError) as e:
        call(mod, op, 0, half, N, need - 32, inputs(lo, hi))
    err = e.value
    assert err.rule == "tensor-bounds" and err.call == name
    # the kernel's own call site (a MATH_FOUR / MATH_TWO expansion or the Exp line of run_op)
    assert err.file.endswith("test_adv_math.cpp") and marker("four") <= err.line <= marker("exp")
    assert f"Get{name}MaxMinTmpSize" in err.detail and str(need) in err.detail
    call(mod, op, 0, half, N, need, inputs(lo, hi))  # exactly the minimum is enough


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
def test_api_through_cann_function_pointer_type(mod, half):
    """ops-nn's foreach kernels hold an API as a template argument of CANN's exact function type (no `loc`
    parameter): the pointer resolves to the same computation (diag.h OPKIT_NOLOC)."""
    x, y = inputs(-3, 3), inputs(-2, 2, seed=5)
    dt = torch.float16 if half else torch.float32
    xt, yt = torch.from_numpy(x).to(dt), torch.from_numpy(y).to(dt)
    cal = N - 7
    got = call(mod, 29, 1, half, cal, 32, x)
    np.testing.assert_allclose(got[:cal], torch.sin(xt.float()).to(dt).float().numpy()[:cal], **tol("Sin", half))
    assert not got[cal:].any()
    got = call(mod, 30, 1, half, cal, 32, x, y)
    np.testing.assert_array_equal(got[:cal], (xt - yt).float().numpy()[:cal])


def test_power_tmp_minimum(mod):
    with pytest.raises(EmulatorError, match="GetPowerMaxMinTmpSize"):
        call(mod, 24, 0, 0, N, 1024, inputs(0.5, 2))


def test_poison_flows_lane_by_lane(mod):
    with pytest.raises(EmulatorError) as e:
        call(mod, OPS["Sin"][0], 1, 0, N, 32, inputs(-1, 1), poison=1)
    assert e.value.rule == "ub-uninitialized"
    assert str(N - 16) in e.value.detail  # the first poisoned element, not element 0


def test_unimplemented_math_name_fails_naming_it(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                   'void f(LocalTensor<float> d, LocalTensor<float> s) { Lgamma(d, s, 8u); }\n')
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0 and "Lgamma" in r.stderr


# -- Arange / ArithProgression (lib/index/arithprogression.h; Arange-94.md) -----------------------------------------
ARANGE_T = {0: np.float32, 1: np.float16, 2: np.int32, 3: np.int16}


def arange(mod, typ, count, first, diff, older=0):
    out = np.zeros(2048, np.uint8)
    t = np.frombuffer(np.array([typ, count], np.int32).tobytes() + np.array([first, diff], np.float32).tobytes() +
                      np.array([older], np.int32).tobytes(), np.uint8).copy()
    mod.arange_call([out, t], block_dim=1)
    return out.view(ARANGE_T[typ])


def arange_like_cann(dt, count, first, diff):
    """CANN's A2 construction (arithprogression_common_impl.h): block 0 by the scalar unit, then Adds per block /
    per repeat, each addition rounded to the type; the last block written whole."""
    B, R = 32 // np.dtype(dt).itemsize, 256 // np.dtype(dt).itemsize
    n = -(-count // B) * B if count > B else count
    v = np.zeros(n, dt)
    ints = np.issubdtype(dt, np.integer)
    for i in range(min(n, B)):
        v[i] = dt(first + diff * i) if ints else dt(np.float32(dt(first)) + np.float32(dt(diff)) * np.float32(i))
    step = (lambda k: dt(int(diff) * k)) if ints else (lambda k: dt(np.float32(dt(diff)) * np.float32(k)))
    if count > B:
        for i in range(B, R if count > R else n):
            v[i] = v[i - B] + step(B)
        if count > R:
            for i in range(R, n):
                v[i] = v[i - R] + step(R)
    return v


@pytest.mark.parametrize("typ", [0, 1, 2, 3], ids=["float", "half", "int32", "int16"])
@pytest.mark.parametrize("count", [5, 8, 50, 64, 100, 300])
def test_arange_builds_values_as_cann(mod, typ, count):
    dt = ARANGE_T[typ]
    if typ == 3 and count > 256:
        count = 250
    first, diff = (1.25, 0.1) if typ < 2 else (-7, 3)
    got = arange(mod, typ, count, first, diff)
    want = arange_like_cann(dt, count, first, diff)
    np.testing.assert_array_equal(got[:len(want)], want)
    assert not got[len(want):].any()           # nothing past count rounded up to a 32-byte block
    if typ == 0:
        np.testing.assert_allclose(got[:count], first + diff * np.arange(count), rtol=1e-5)


def test_arithprogression_is_the_same_api(mod):
    np.testing.assert_array_equal(arange(mod, 2, 40, 3, 2, older=1)[:40], 3 + 2 * np.arange(40))


def test_arange_count_must_be_positive(mod):
    with pytest.raises(EmulatorError) as e:
        arange(mod, 0, 0, 1.0, 1.0)
    assert (e.value.rule, e.value.call, e.value.line) == ("api-argument", "Arange", marker("arange"))
