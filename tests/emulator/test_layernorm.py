"""LayerNorm (lib/normalization/layernorm.h), against PyTorch's layer_norm, on the tiling of the host stand-in.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/归一化操作/LayerNorm.md; signature
include/adv_api/normalization/layernorm.h:36-60; the tiling: python/opkit/cannproject/include/tiling/normalization/
layernorm_tiling.h (GetLayerNormMaxMinTmpSize / GetLayerNormNDTilingInfo after
impl/adv_api/tiling/normalization/layernorm_tiling_impl.cpp), compiled and run here as a host program, its
LayerNormTiling fed to the kernel; the A2 computation impl/adv_api/detail/normalization/layernorm/
layernorm_common_impl.h (float throughout; mean and variance as sums of x / H and (x - mean)^2 / H).
Precision: float within a few ulp of torch (the sums' order differs from torch's); half: the float result rounded
once to half, so within one half ulp of torch's float computation on the half inputs."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest
import torch

from opkit.errors import EmulatorError

HOST = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include "tiling/tiling_api.h"
int main(int argc, char** argv) {
  const uint32_t b = atoi(argv[1]), s = atoi(argv[2]), h = atoi(argv[3]), oh = atoi(argv[4]);
  const uint32_t size = atoi(argv[5]), reuse = atoi(argv[6]), stack = atoi(argv[7]);
  AscendC::TensorShape shape({b, s, h, oh});
  uint32_t mx = 0, mn = 0;
  uint32_t buf[26] = {};
  if (b == 0) {  // the rstd form: [A, R] = [s, h]
    ge::Shape ar(std::vector<int64_t>{s, h});
    AscendC::GetLayerNormMaxMinTmpSize(ar, size, reuse, true, false, mx, mn);
    optiling::LayerNormSeparateTiling t;
    AscendC::GetLayerNormNDTilingInfo(ar, stack ? stack : mn, size, reuse, true, t);
    t.SaveToBuffer(buf, sizeof buf);
  } else {
    AscendC::GetLayerNormMaxMinTmpSize(shape, size, reuse, mx, mn);
    optiling::LayerNormTiling t;
    AscendC::GetLayerNormNDTilingInfo(shape, stack ? stack : mn, size, reuse, t);
    t.SaveToBuffer(buf, sizeof buf);
  }
  printf("%u %u", mx, mn);
  for (uint32_t v : buf) printf(" %u", v);
  printf("\n");
}
"""


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("layernorm", headers_digest()), "layernorm")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("ln_host"))

    def tiling(b, s, h, oh, size, reuse, stack=0):
        out = subprocess.run([str(exe), *map(str, (b, s, h, oh, size, reuse, stack))], check=True,
                             capture_output=True, text=True).stdout.split()
        v = [int(x) for x in out]
        return v[0], v[1], v[2:]
    return tiling


def test_host_tiling_matches_cann_formulas(host):
    # layernorm_tiling_impl.cpp:76-95: min = 3 x align32(H x 4) + 2 x align32(B x S x 4) (2 x with reuse, float)
    mx, mn, f = host(2, 3, 40, 40, 2, 0)
    assert mn == 3 * 160 + 2 * 32 and mx == 3 * 2 * 3 * 40 * 4 + 2 * 32
    _, mn_r, _ = host(2, 3, 40, 40, 4, 1)
    assert mn_r == 2 * 160 + 2 * 32
    # half keeps mean / variance in the buffer (2 x 8 floats), then three rows of 40 at most
    assert f[:4] == [2, 3, 40, 40] and f[12] == 40 and f[13] == 16 and f[14] == 56 and f[15] == 96
    assert np.uint32(f[25]).view(np.float32) == np.float32(1 / 40)
    # a stack of 5 rows per buffer: rounds of 5 rows, a tail of 1 (6 rows)
    _, _, f = host(2, 3, 40, 40, 4, 0, stack=3 * 5 * 40 * 4)
    assert (f[12], f[16], f[18], f[20], f[21], f[22]) == (200, 1, 40, 5, 1, 5)


def run(mod, host, b, s, h, oh, half, tmp, reuse=0, eps=1e-5, stack=0, calls=1, fields=None, seed=0):
    rng = np.random.default_rng(seed + b * 7 + s * 5 + h + oh)
    x = (rng.standard_normal((b, s, h)) * 2 + 0.5).astype(np.float32)
    x[..., oh:] = 0.0   # the padding the page asks for
    g = rng.uniform(0.5, 1.5, h).astype(np.float32)
    be = rng.uniform(-0.5, 0.5, h).astype(np.float32)
    mx, mn, f = host(b, s, h, oh, 2 if half else 4, reuse, stack)
    if fields is not None:
        f = fields
    case = np.concatenate([np.array([half, tmp if tmp >= 0 else mn, reuse, calls], np.uint32),
                           np.array([eps], np.float32).view(np.uint32), np.array(f, np.uint32)]).view(np.uint8)
    rows, tot = b * s, b * s * h
    out = np.zeros(2 * tot + 2 * rows + 8, np.float32)
    mod.ln_call([np.concatenate([x.ravel(), g, be]), out, case.copy()], block_dim=1)
    res = dict(y=out[:tot].reshape(b, s, h), mean=out[tot:tot + rows], var=out[tot + rows:tot + 2 * rows],
               x_after=out[tot + 2 * rows:2 * tot + 2 * rows].reshape(b, s, h), cur=out[2 * tot + 2 * rows:][:2])
    return x, g, be, res, (mx, mn, f)


def want(x, g, be, h, oh, half, eps=1e-5):
    xs, gs, bs = (torch.from_numpy(a) for a in (x[..., :oh], g[:oh], be[:oh]))
    if half:
        xs, gs, bs = xs.half().float(), gs.half().float(), bs.half().float()
    y = torch.nn.functional.layer_norm(xs, (oh,), gs, bs, eps=eps)
    return y.numpy(), xs.mean(-1).numpy().ravel(), xs.var(-1, unbiased=False).numpy().ravel()


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("b,s,h", [(1, 1, 64), (2, 3, 32), (2, 4, 48), (1, 20, 208), (1, 3, 1024)])
def test_layernorm_matches_torch(mod, host, b, s, h, half):
    for tmp in (-1, 0, 4096 * 4):  # the minimum, the framework form, a larger buffer
        if tmp > 0 and tmp < host(b, s, h, h, 2 if half else 4, 0)[1]:
            continue
        x, g, be, r, _ = run(mod, host, b, s, h, h, half, tmp, stack=max(tmp, 0))
        y, m, v = want(x, g, be, h, h, half)
        if half:
            np.testing.assert_allclose(r["y"], y, rtol=4e-3, atol=4e-3)
            np.testing.assert_allclose(r["mean"], m, rtol=2e-3, atol=2e-3)
            np.testing.assert_allclose(r["var"], v, rtol=2e-3, atol=2e-3)
            assert np.array_equal(r["y"], r["y"].astype(np.float16).astype(np.float32))
        else:
            np.testing.assert_allclose(r["y"], y, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(r["mean"], m, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(r["var"], v, rtol=1e-5, atol=1e-6)


def test_padded_h_adds_the_padding_to_the_variance_as_the_device_does(mod, host):
    """originalHLength < hLength: the device sums over all hLength columns, each scaled by 1 / originalHLength, so
    the zero padding adds (0 - mean)^2 / originalHLength to the variance (layernorm_common_basic_impl.h:363-388)."""
    x, g, be, r, _ = run(mod, host, 1, 4, 48, 40, 0, -1)
    m = x[..., :40].sum(-1).ravel() / 40
    v = ((x - m.reshape(1, 4, 1)) ** 2).sum(-1).ravel() / 40
    np.testing.assert_allclose(r["mean"], m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r["var"], v, rtol=1e-5, atol=1e-6)
    assert (v > x[..., :40].var(-1).ravel()).all()


def test_reuse_source_leaves_the_work_in_input_x(mod, host):
    x, g, be, r, _ = run(mod, host, 2, 3, 32, 32, 0, -1, reuse=1)
    y, _, _ = want(x, g, be, 32, 32, 0)
    np.testing.assert_allclose(r["y"], y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r["x_after"], y - be, rtol=1e-5, atol=1e-5)


def test_tail_round_rewrites_the_callers_tiling(mod, host):
    """6 rows in rounds of 5: the tail round leaves bshCurLength / bsCurLength at the tail's (40 / 1) in the caller's
    tiling (layernorm_common_impl.h:161-163), so a second call with it computes one row per round: rows 1-4 keep the
    first call's values only because the outputs are the same tensors."""
    x, g, be, r, (_, _, f) = run(mod, host, 2, 3, 40, 40, 0, 3 * 5 * 40 * 4, stack=3 * 5 * 40 * 4)
    assert f[20] == 5 and f[21] == 1
    assert list(r["cur"]) == [40.0, 1.0]
    y, _, _ = want(x, g, be, 40, 40, 0)
    np.testing.assert_allclose(r["y"], y, rtol=1e-5, atol=1e-5)


def test_tmp_below_cann_minimum_is_a_rule_violation(mod, host):
    _, need, _ = host(2, 3, 64, 64, 2, 0)
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 3, 64, 64, 1, need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "LayerNorm")
    assert "GetLayerNormMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_layernorm.cpp")


def test_unfilled_tiling_is_refused(mod, host):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 1, 2, 32, 32, 0, -1, fields=[1, 2, 32, 32] + [0] * 22)
    assert (e.value.rule, e.value.call) == ("api-argument", "LayerNorm")
    assert "GetLayerNormNDTilingInfo" in e.value.detail


def test_original_h_beyond_h_is_refused(mod, host):
    _, _, f = host(1, 2, 32, 32, 4, 0)
    f = list(f)
    f[3] = 40
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 1, 2, 32, 32, 0, -1, fields=f)
    assert (e.value.rule, e.value.call) == ("api-argument", "LayerNorm") and "originalHLength 40" in e.value.detail


@pytest.mark.parametrize("call,name", [
    ("LocalTensor<float> t; LayerNormPara p{}; LayerNormSeparateTiling s{}; "
     "LayerNorm<float, float, false, kOnly>(t, t, t, t, t, t, 1e-5f, p, s);", "LayerNorm with config.isOnlyOutput")])
def test_forms_not_implemented_are_compile_errors_naming_them(gxx, tmp_path, call, name):
    src = tmp_path / "k.cpp"
    src.write_text('#include "lib/normalization/layernorm.h"\n#include "kernel_tiling/kernel_tiling.h"\n'
                   'using namespace AscendC;\nconstexpr LayerNormConfig kOnly = {false, false, true, true};\n'
                   f'void f() {{ {call} }}\n')
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0 and f"not supported on the emulator: {name}" in r.stderr


# ---- the rstd form: LayerNorm<U, T>(output, mean, rstd, x, gamma, beta, eps[, tmp], LayerNormPara, tiling) ----

def run_rstd(mod, host, a, r, mode, tmp=-1, eps=1e-5, fields=None, seed=0):
    half = mode in (1, 2)
    per = 16 if half else 8
    w = -(-r // per) * per
    rng = np.random.default_rng(seed + a * 7 + r)
    x = (rng.standard_normal((a, w)) * 2 + 0.5).astype(np.float32)
    g = rng.uniform(0.5, 1.5, r).astype(np.float32)
    be = rng.uniform(-0.5, 0.5, r).astype(np.float32)
    if half:
        x = x.astype(np.float16).astype(np.float32)
        if mode == 1:
            g, be = g.astype(np.float16).astype(np.float32), be.astype(np.float16).astype(np.float32)
    mx, mn, f = host(0, a, r, r, 2 if half else 4, 0)
    f = f if fields is None else fields
    case = np.concatenate([np.array([mode, mn if tmp < 0 else tmp, a, r, w], np.uint32),
                           np.array([eps], np.float32).view(np.uint32), np.array(f, np.uint32)]).view(np.uint8)
    n = a * w
    out = np.zeros(2 * n + 2 * a, np.float32)
    mod.lnr_call([np.concatenate([x.ravel(), g, be]), out, case.copy()], block_dim=1)
    return x, g, be, w, dict(y=out[:a * r].reshape(a, r), mean=out[n:n + a], rstd=out[n + a:n + 2 * a],
                             x_after=out[n + 2 * a:].reshape(a, w)), (mx, mn, f)


def test_rstd_form_host_tiling_matches_cann_formulas(host):
    # layernorm_tiling_impl.cpp:266-322: mv + max(2 x align32(R x 4), Normalize's max(mv, 2 (float) / 4 (half) R))
    _, mn, f = host(0, 5, 40, 40, 4, 0)
    assert mn == 32 + 2 * 160 and f[:2] == [5, 40] and np.uint32(f[25]).view(np.float32) == np.float32(1 / 40)
    _, mn_h, _ = host(0, 5, 40, 40, 2, 0)
    assert mn_h == 32 + 4 * 192  # half pads R to 48


@pytest.mark.parametrize("mode", [0, 1, 2, 3], ids=["float", "half", "half-float-gamma", "float-no-beta"])
@pytest.mark.parametrize("a,r", [(1, 64), (3, 32), (4, 40), (5, 200), (2, 1024)])
def test_rstd_form_matches_torch(mod, host, a, r, mode):
    x, g, be, w, got, _ = run_rstd(mod, host, a, r, mode)
    xt = torch.from_numpy(x[:, :r]).double()
    gt, bt = torch.from_numpy(g).double(), torch.from_numpy(be).double()
    if mode == 3:
        bt = torch.zeros_like(bt)
    y = torch.nn.functional.layer_norm(xt, (r,), gt, bt, eps=1e-5).numpy()
    rstd = 1 / torch.sqrt(xt.var(-1, unbiased=False) + 1e-5)
    tol = 4e-3 if mode in (1, 2) else 2e-5
    np.testing.assert_allclose(got["y"], y, rtol=tol, atol=tol)
    np.testing.assert_allclose(got["mean"], xt.mean(-1).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["rstd"], rstd.numpy(), rtol=1e-4)
    assert (got["x_after"][:, r:] == 0).all()  # the padding zeroed in place (LayerNormPreProc)


def test_rstd_form_tmp_below_cann_minimum_is_a_rule_violation(mod, host):
    _, need, _ = host(0, 3, 64, 64, 4, 0)
    with pytest.raises(EmulatorError) as e:
        run_rstd(mod, host, 3, 64, 0, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "LayerNorm")
    assert "GetLayerNormMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail


def test_rstd_form_unfilled_tiling_is_refused(mod, host):
    with pytest.raises(EmulatorError) as e:
        run_rstd(mod, host, 3, 64, 0, fields=[0] * 26)
    assert (e.value.rule, e.value.call) == ("api-argument", "LayerNorm") and "isComputeRstd" in e.value.detail
