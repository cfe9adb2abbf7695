"""Normalize (lib/normalization/normalize.h), against PyTorch: y = (x - mean) / sqrt(var + eps) x gamma + beta over
the first rLength columns of each row, on the mean / variance given, and rstd = 1 / sqrt(var + eps).

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/归一化操作/Normalize.md; A2 code
impl/adv_api/detail/normalization/normalize/normalize_common_impl.h; the buffer minimum GetNormalizeMaxMinTmpSize
(host stand-in tiling/normalization/normalize_tiling.h, compiled here). Precision: float steps as the A2 code; float
within 2 ulp-ish of torch (1e-6 relative), half outputs within half rounding."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError

HOST = r"""
#include <cstdio>
#include <cstdlib>
#include "tiling/tiling_api.h"
int main(int argc, char** argv) {
  uint32_t mx = 0, mn = 0;
  AscendC::GetNormalizeMaxMinTmpSize(ge::Shape(std::vector<int64_t>{atoi(argv[1]), atoi(argv[2])}), atoi(argv[3]),
                                     atoi(argv[4]), false, true, false, mx, mn);
  printf("%u %u\n", mx, mn);
}
"""
EPS = 1e-5


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("normalize", headers_digest()), "normalize")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("nm_host"))
    return lambda *a: tuple(int(v) for v in subprocess.run([str(exe), *map(str, a)], check=True, capture_output=True,
                                                            text=True).stdout.split())


def test_host_sizes_match_cann(host):
    # [A 4, R 20] float: Rpad 24 -> 96 bytes; min max(32, 2 x 96), max 2 x 96 + 2 x align32(8 x 24 x 4)
    assert host(4, 20, 4, 4) == (2 * 96 + 2 * 768, 192)
    # half T (Rpad 32 -> 128 bytes), half U: min 4 x 128; float U: 2 x 128; A large: the A floats win
    assert host(4, 20, 2, 2)[1] == 512 and host(4, 20, 4, 2)[1] == 256 and host(200, 8, 4, 4)[1] == 800


def run(mod, host, mode, a, r, w, tmp=-1, no_beta=0, seed=0, keep_pad=0, flat=False):
    """flat: every x 1.5 and gamma negative, so x - mean is +0 and y -0 before any closing step."""
    rng = np.random.default_rng(seed + a * r)
    x = (rng.standard_normal((a, w)) * 2 + 1).astype(np.float32)
    g, b = rng.standard_normal(w).astype(np.float32), rng.standard_normal(w).astype(np.float32)
    if flat:
        x, g = np.full((a, w), 1.5, np.float32), -np.abs(g) - 0.5
    if mode:  # the kernel casts x (and gamma / beta for mode 1) to half
        x = x.astype(np.float16).astype(np.float32)
        if mode == 1:
            g, b = g.astype(np.float16).astype(np.float32), b.astype(np.float16).astype(np.float32)
    xt = torch.from_numpy(x[:, :r]).double()
    mean = xt.mean(-1).float().numpy()
    var = xt.var(-1, unbiased=False).float().numpy()
    a8 = -(-a // 8) * 8
    need = host(a, r, 2 if mode == 1 else 4, 4 if mode == 0 else 2)[1]
    case = np.concatenate([np.array([mode, need if tmp < 0 else tmp, no_beta, a, r, w, keep_pad], np.uint32),
                           np.array([EPS], np.float32).view(np.uint32)]).view(np.uint8)
    inp = np.concatenate([x.ravel(), g, b, np.pad(mean, (0, a8 - a)), np.pad(var, (0, a8 - a))])
    out = np.zeros(a * w + a8, np.float32)
    mod.nm_call([inp, out, case.copy()], block_dim=1)
    want = (torch.from_numpy(x).double() - torch.from_numpy(mean).double()[:, None]) / \
        torch.sqrt(torch.from_numpy(var).double()[:, None] + EPS) * torch.from_numpy(g).double()
    if not no_beta:
        want = want + torch.from_numpy(b).double()
    rstd = 1 / torch.sqrt(torch.from_numpy(var).double() + EPS)
    return out[:a * w].reshape(a, w)[:, :r], out[a * w:a * w + a], want[:, :r].numpy(), rstd.numpy()


@pytest.mark.parametrize("mode", [0, 1, 2], ids=["float", "half", "half-float-gamma"])
@pytest.mark.parametrize("a,r", [(4, 64), (5, 20), (9, 100)])
def test_rows_match_torch(mod, host, mode, a, r):
    per = 8 if mode == 0 else 16  # R padded to 32 bytes of T, as the host's query pads it
    w = -(-r // per) * per
    for tmp in (-1, 0):
        y, rstd, want, wrstd = run(mod, host, mode, a, r, w, tmp)
        np.testing.assert_allclose(rstd, wrstd, rtol=1e-6)
        rt, at = (1e-5, 1e-5) if mode == 0 else (2e-3, 2e-3)
        np.testing.assert_allclose(y, want, rtol=rt, atol=at)


def test_no_beta_config_leaves_beta_out(mod, host):
    y, _, want, _ = run(mod, host, 0, 4, 64, 64, no_beta=1)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_a_float_output_of_negative_zero_leaves_as_plus_zero(mod, host):
    # T float leaves through Adds(y, 0) (normalize_common_impl.h:223-225): (x - mean) x rstd x gamma = -0 -> +0
    y, _, want, _ = run(mod, host, 0, 4, 64, 64, no_beta=1, flat=True)
    assert (want == 0).all() and (y == 0).all() and not np.signbit(y).any()


def test_a_reduce_pattern_other_than_ar_is_an_api_argument_error(mod, host):
    # CANN's debug check asserts config.reducePattern == ReducePattern::AR (normalize_check_common.h:58)
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 0, 4, 64, 64, no_beta=2)
    assert (e.value.rule, e.value.call) == ("api-argument", "Normalize") and "ReducePattern::AR" in e.value.detail


def test_the_padding_columns_are_poison(mod, host):
    # the A2 code computes them from a broadcast buffer it fills over rLength only: copying them out is reported
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 0, 5, 20, 24, keep_pad=1)
    assert e.value.rule == "ub-uninitialized" and "element 20" in e.value.detail


def test_tmp_below_cann_minimum_is_a_rule_violation(mod, host):
    need = host(4, 64, 4, 4)[1]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 0, 4, 64, 64, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "Normalize")
    assert "GetNormalizeMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail


def test_unaligned_padded_length_is_an_api_argument_error(mod, host):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 0, 4, 20, 20, tmp=4096)
    assert (e.value.rule, e.value.call) == ("api-argument", "Normalize") and "rLengthWithPadding 20" in e.value.detail


@pytest.mark.parametrize("decl,what", [("LocalTensor<float> t; LocalTensor<half> h; Normalize<half, float>(t, t, t, t, t, h, h, 1e-5f, p);",
                                        "T float with U float, or T half"),
                                       ("LocalTensor<float> t; Normalize<float, float, false, kOnly>(t, t, t, t, t, t, t, 1e-5f, p);",
                                        "isOnlyOutput must be set false")])
def test_forms_not_on_a2_are_compile_errors(gxx, tmp_path, decl, what):
    src = tmp_path / "k.cpp"
    src.write_text('#include "lib/normalization/normalize.h"\nusing namespace AscendC;\n'
                   "constexpr NormalizeConfig kOnly = {ReducePattern::AR, -1, false, false, true};\n"
                   f"void f() {{ NormalizePara p{{}}; {decl} }}\n")
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0 and what in r.stderr
