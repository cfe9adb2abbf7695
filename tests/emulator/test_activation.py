"""The activation family (lib/activation/{gelu,geglu,swiglu,swish,silu}.h), against PyTorch.

Pages: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/激活函数/<Name>接口/<Name>.md; formulas from CANN's A2
implementation impl/adv_api/detail/activation/<name>/ (each header cites its lines): Gelu and GeGLU use the tanh
approximation, so they are compared with torch's gelu(approximate="tanh"); FasterGelu / FasterGeluV2 with CANN's
own formulas written in torch. The emulator computes in float and rounds to T; CANN computes half in half (Gelu
family without highPrecision), so half is compared within a few half ulps, float within a few float ulps."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from opkit.errors import EmulatorError

SRC = Path(__file__).resolve().parent / "test_activation.cpp"
N = 256
BETA = 1.5


def faster_gelu(x):
    return x / (1 + torch.exp(-1.702 * x))


def faster_gelu_v2(x):
    c = torch.clamp(torch.abs(0.7071 * x), max=1.769) - 1.769
    return x * (torch.sign(x + 1e-12) * (-0.1444 * c * c + 0.5) + 0.5)


# name -> (op id, reference of (x, y), forms CANN declares, min sharedTmpBuffer float / half)
GELU_FORMS, FOUR, COUNT = (0, 1, 2, 3), (0, 1, 2, 3), (1,)
OPS = {
    "Gelu": (0, lambda x, y: F.gelu(x, approximate="tanh"), GELU_FORMS, (768, 768)),
    "FasterGelu": (1, lambda x, y: faster_gelu(x), GELU_FORMS, (768, 768)),
    "FasterGeluV2": (2, lambda x, y: faster_gelu_v2(x), GELU_FORMS, (768, 768)),
    "GeGLU": (3, lambda x, y: x * F.gelu(y, approximate="tanh"), FOUR, (0, 1024)),
    "SwiGLU": (4, lambda x, y: x * (y * torch.sigmoid(BETA * y)), FOUR, (0, 1536)),
    "Swish": (5, lambda x, y: x * torch.sigmoid(BETA * x), COUNT, (0, 0)),
    "Silu": (6, lambda x, y: F.silu(x), COUNT, (0, 0)),
}


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load  # one module, built on its own (cached)
    return load(compile_pybind("activation", headers_digest()), "activation")


def marker(tag: str) -> int:
    return next(i for i, t in enumerate(SRC.read_text().splitlines(), 1) if t.rstrip().endswith(f"// ACT:{tag}"))


def call(mod, op, form, half, cal, tmp, x, y, n1=N):
    out = np.zeros(N, np.float32)
    t = np.frombuffer(np.array([op, form, half], np.int32).tobytes() + np.array([N, cal, tmp], np.uint32).tobytes() +
                      np.array([BETA], np.float32).tobytes() + np.array([n1], np.uint32).tobytes(), np.uint8).copy()
    mod.act_call([x, y, out, t], block_dim=1)
    return out


def inputs(seed):
    x = np.random.default_rng(seed).uniform(-6, 6, N).astype(np.float32)
    x[:6] = [-6, 6, 0, -0.5, 0.5, 1e-3]
    return x


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_activation_matches_torch_in_every_form(mod, name, half):
    op, ref, forms, mins = OPS[name]
    x, y = inputs(0), inputs(1)
    dt = torch.float16 if half else torch.float32
    xt, yt = torch.from_numpy(x).to(dt).float(), torch.from_numpy(y).to(dt).float()
    want = ref(xt.double(), yt.double()).to(dt).float().numpy()
    tol = dict(rtol=4e-3, atol=4e-3) if half else dict(rtol=1e-5, atol=1e-6)
    for form in forms:
        whole = name in ("GeGLU", "SwiGLU") and form in (2, 3)
        cal = N if whole else N - 13              # a ragged count: the rest of dst stays 0
        got = call(mod, op, form, half, cal, max(mins[half], 32), x, y)
        np.testing.assert_allclose(got[:cal], want[:cal], **tol, err_msg=f"{name} form {form}")
        assert not got[cal:].any(), f"{name} form {form} wrote past the count"


def test_gelu_is_the_tanh_approximation_not_erf(mod):
    """CANN's Gelu is the tanh form; at x = -3 it differs from the erf form by ~3e-4, far above float's tolerance."""
    x = np.full(N, -3.0, np.float32)
    got = call(mod, 0, 1, 0, N, 768, x, x)[0]
    assert got == pytest.approx(F.gelu(torch.tensor(-3.0, dtype=torch.float64), approximate="tanh").item(), rel=1e-5)
    assert abs(got - F.gelu(torch.tensor(-3.0)).item()) > 1e-4


@pytest.mark.parametrize("name,half", [("Gelu", 0), ("FasterGeluV2", 1), ("GeGLU", 1), ("SwiGLU", 1)])
def test_tmp_buffer_below_cann_minimum_is_a_rule_violation(mod, name, half):
    op, _, _, mins = OPS[name]
    need = mins[half]
    with pytest.raises(EmulatorError) as e:
        call(mod, op, 0, half, N, need - 32, inputs(0), inputs(1))
    err = e.value
    assert err.rule == "tensor-bounds" and err.call == name
    assert err.file.endswith("test_activation.cpp") and marker("first") <= err.line <= marker("last")
    sizer = "GetGeluMaxMinTmpSize" if "Gelu" in name else f"Get{name}MaxMinTmpSize"
    assert sizer in err.detail and str(need) in err.detail
    call(mod, op, 0, half, N, need, inputs(0), inputs(1))  # exactly the minimum is enough


def test_float_glu_needs_no_buffer(mod):
    """GetGeGLUMaxMinTmpSize / GetSwiGLUMaxMinTmpSize report 0 for float: a 32-byte buffer (the smallest) runs."""
    for name in ("GeGLU", "SwiGLU"):
        call(mod, OPS[name][0], 0, 0, N, 32, inputs(0), inputs(1))


@pytest.mark.parametrize("name", ["GeGLU", "SwiGLU"])
def test_sources_of_different_size_are_an_argument_error(mod, name):
    with pytest.raises(EmulatorError) as e:
        call(mod, OPS[name][0], 1, 0, N - 16, 1536, inputs(0), inputs(1), n1=N - 32)
    assert e.value.rule == "api-argument" and e.value.call == name
    assert re.search(r"srcTensor0 holds 256 elements and srcTensor1 224", e.value.detail)


def test_swish_and_silu_through_cann_include_paths(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "lib/activation/kernel_operator_swish_intf.h"\n#include "adv_api/activation/silu.h"\n'
                   '#include "lib/activation/kernel_operator_geglu_intf.h"\nusing namespace AscendC;\n'
                   'void f(LocalTensor<half> d, LocalTensor<half> s) { Swish(d, s, 16u, (half)1.0f); Silu(d, s, 16u);'
                   ' GeGLU(d, s, s, 16u); }\n')
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode == 0, r.stderr


# -- host queries (tiling/opkit_adv_activation_tmp_sizes.h) in a `.asc` program, against CANN's formulas ----------
PROGRAM = Path(__file__).resolve().parent / "test_activation_tmp_sizes.asc"
HOST_EXPECTED = {  # shape [3, 1000] unless named; (max, min), from impl/adv_api/tiling/activation/*
    "gelu_f16": (3 * 3000 * 4, 768),            # gelu_tiling_impl.cpp: 3 floats per element, min 3 repeats
    "gelu_min_max": (3 * 512 * 4, 768),         # GetGeluMaxTmpSize / GetGeluMinTmpSize, [512] float
    "geglu_f16": (4 * 3000 * 2, 4 * 256),       # geglu_tiling.cpp: 4 nodes for half
    "geglu_f32": (0, 0),                        # none for float
    "swiglu_f16": (6 * 3000 * 2, 6 * 256),      # swiglu_tiling.cpp: 6 nodes for half
    "swiglu_f32": (0, 0),
    "swish": (0, 0), "silu": (0, 0),            # swish_tiling.cpp / silu_tiling.cpp
    "geglu_factor_f16": (4, 0), "swiglu_factor_f16": (6, 0),  # (maxLiveNodeCount, extraBuf)
}
HOST_FAMILIES = {0: "GetGeluMaxMinTmpSize", 1: "GetGeGLUMaxMinTmpSize", 2: "GetSwiGLUMaxMinTmpSize",
                 3: "GetGeluMaxMinTmpSize"}


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
