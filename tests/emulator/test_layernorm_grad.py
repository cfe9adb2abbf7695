"""LayerNormGrad and LayerNormGradBeta (lib/normalization/layernormgrad.h, layernormgradbeta.h), against PyTorch's
autograd of layer_norm, on the tilings of the host stand-in.

Pages: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/归一化操作/LayerNormGrad.md, LayerNormGradBeta.md; the
tilings: python/opkit/cannproject/include/tiling/normalization/layernorm_grad_tiling.h and
layernorm_grad_beta_tiling.h (after impl/adv_api/tiling/normalization/layernorm_grad_tiling_impl.cpp and
layernorm_grad_beta_tiling_impl.cpp), compiled and run here as a host program; the A2 computation
impl/adv_api/detail/normalization/layernormgrad/layernormgrad_common_impl.h and layernormgradbeta_common_impl.h
(float throughout). Precision: float within 1e-4 relative of torch's float autograd (the sums' orders differ);
half: within the half rounding of the inputs and one rounding of each output."""
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
  const uint32_t b = atoi(argv[1]), s = atoi(argv[2]), h = atoi(argv[3]), oh = atoi(argv[4]);
  const uint32_t size = atoi(argv[5]), reuse = atoi(argv[6]), stack = atoi(argv[7]), stackb = atoi(argv[8]);
  AscendC::TensorShape shape({b, s, h, oh});
  uint32_t mx = 0, mn = 0, mxb = 0, mnb = 0;
  AscendC::GetLayerNormGradMaxMinTmpSize(shape, size, reuse, mx, mn);
  AscendC::GetLayerNormGradBetaMaxMinTmpSize(shape, size, reuse, mxb, mnb);
  optiling::LayerNormGradTiling t;
  optiling::LayerNormGradBetaTiling tb;
  AscendC::GetLayerNormGradNDTilingInfo(shape, stack ? stack : mn, size, reuse, t);
  AscendC::GetLayerNormGradBetaNDTilingInfo(shape, stackb ? stackb : mnb, size, reuse, tb);
  uint32_t buf[30] = {}, bufb[20] = {};
  t.SaveToBuffer(buf, sizeof buf);
  tb.SaveToBuffer(bufb, sizeof bufb);
  printf("%u %u %u %u", mx, mn, mxb, mnb);
  for (uint32_t v : buf) printf(" %u", v);
  for (uint32_t v : bufb) printf(" %u", v);
  printf("\n");
}
"""


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("layernorm_grad", headers_digest()), "layernorm_grad")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("lng_host"))

    def tiling(b, s, h, oh, size, reuse, stack=0, stackb=0):
        out = subprocess.run([str(exe), *map(str, (b, s, h, oh, size, reuse, stack, stackb))], check=True,
                             capture_output=True, text=True).stdout.split()
        v = [int(x) for x in out]
        return dict(mx=v[0], mn=v[1], mxb=v[2], mnb=v[3], g=v[4:34], gb=v[34:54])
    return tiling


def test_host_tilings_match_cann_formulas(host):
    # layernorm_grad_tiling_impl.cpp:128-144: min(B x S x H, H x H) x (9 half / 6 float / 4 reuse) x sizeof(T)
    r = host(2, 3, 32, 32, 4, 0)
    assert (r["mn"], r["mx"]) == (6 * 192 * 4, 6 * 1024 * 4)
    assert host(2, 3, 32, 32, 4, 1)["mn"] == 4 * 192 * 4 and host(2, 3, 32, 32, 2, 0)["mn"] == 9 * 192 * 2
    # oneCalSize: the buffer's floats / 6 rounded to rows (6), rows rounded up to a block of 8: 8 rows
    g = r["g"]
    assert (g[5], g[6], g[7], g[8], g[9]) == (256, 8, 0, 192, 6)
    assert np.uint32(g[28]).view(np.float32) == np.float32(1 / 32)
    assert np.uint32(g[29]).view(np.float32) == np.float32(2 / 32)
    # layernorm_grad_beta_tiling_impl.cpp:63-76: 2 x H x 4 (float), 4 x H x 4 (half)
    assert (r["mnb"], r["mxb"]) == (2 * 32 * 4, 2 * 192 * 4)
    gb = host(2, 3, 32, 32, 2, 0)["gb"]
    assert gb[0] == 4 * 32 and gb[7] == 32 and gb[8] == 2 and gb[16:19] == [32, 64, 96]


def run(mod, host, b, s, h, half, tmp=-1, tmpb=-1, reuse=0, eps=1e-5, stack=0, stackb=0, fields=None, seed=0):
    rng = np.random.default_rng(seed + b * 7 + s * 5 + h)
    x = (rng.standard_normal((b, s, h)) * 2 + 0.5).astype(np.float32)
    dy = rng.standard_normal((b, s, h)).astype(np.float32)
    g = rng.uniform(0.5, 1.5, h).astype(np.float32)
    if half:
        x, dy, g = (a.astype(np.float16).astype(np.float32) for a in (x, dy, g))
    m = x.mean(-1, dtype=np.float64).astype(np.float32)
    v = x.var(-1, dtype=np.float64).astype(np.float32)
    if half:
        m, v = m.astype(np.float16).astype(np.float32), v.astype(np.float16).astype(np.float32)
    if stack < 0:  # whole blocks of rows (see test_half_minimum_with_few_rows_reaches_past_the_buffer)
        mn = host(b, s, h, h, 2 if half else 4, reuse)["mn"]
        unit = (9 if half else 4 if reuse else 6) * (16 if half else 8) * h * 4
        stack = -(-mn // unit) * unit
        tmp = stack if tmp < 0 else tmp
    r = host(b, s, h, h, 2 if half else 4, reuse, stack, stackb)
    tg, tb = (r["g"], r["gb"]) if fields is None else fields
    case = np.concatenate([np.array([half, r["mn"] if tmp < 0 else tmp, r["mnb"] if tmpb < 0 else tmpb, reuse],
                                    np.uint32), np.array([eps], np.float32).view(np.uint32),
                           np.array(tg, np.uint32), np.array(tb, np.uint32)]).view(np.uint8)
    rows, tot = b * s, b * s * h
    out = np.zeros(4 * tot + 2 * h, np.float32)
    mod.lng_call([np.concatenate([dy.ravel(), x.ravel(), m.ravel(), v.ravel(), g]), out, case.copy()], block_dim=1)
    res = dict(pdx=out[:tot].reshape(b, s, h), rfg=out[tot:2 * tot].reshape(b, s, h), pg=out[2 * tot:2 * tot + h],
               pb=out[2 * tot + h:2 * tot + 2 * h], dy_after=out[2 * tot + 2 * h:3 * tot + 2 * h].reshape(b, s, h),
               x_after=out[3 * tot + 2 * h:].reshape(b, s, h))
    return x, dy, g, m.reshape(b, s, 1), v.reshape(b, s, 1), res


def want(x, dy, g, eps=1e-5):
    xt = torch.from_numpy(x).double().requires_grad_()
    gt = torch.from_numpy(g).double().requires_grad_()
    bt = torch.zeros_like(gt, requires_grad=True)
    y = torch.nn.functional.layer_norm(xt, (x.shape[-1],), gt, bt, eps=eps)
    y.backward(torch.from_numpy(dy).double())
    return xt.grad.numpy(), gt.grad.numpy(), bt.grad.numpy()


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("b,s,h", [(1, 1, 64), (2, 3, 32), (2, 4, 48), (1, 20, 144), (1, 2, 256)])
def test_layernorm_grad_matches_torch(mod, host, b, s, h, half):
    for tmp in (-1, 0):  # the minimum (as the tiling was made for), the framework form
        x, dy, g, m, v, r = run(mod, host, b, s, h, half, tmp=tmp, tmpb=tmp, stack=-1)
        px, pg, pb = want(x, dy, g)
        rfg = (x - m) / np.sqrt(v + 1e-5)
        if half:
            # the mean / variance inputs are rounded to half: compare with torch where they are exact
            np.testing.assert_allclose(r["rfg"], rfg, rtol=4e-3, atol=4e-3)
            np.testing.assert_allclose(r["pb"], pb, rtol=2e-3, atol=2e-3)
            assert np.array_equal(r["pdx"], r["pdx"].astype(np.float16).astype(np.float32))
            np.testing.assert_allclose(r["pdx"], px, rtol=0.05, atol=0.05)
            np.testing.assert_allclose(r["pg"], pg, rtol=0.02, atol=0.05)
        else:
            np.testing.assert_allclose(r["pdx"], px, rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(r["rfg"], rfg, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(r["pg"], pg, rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(r["pb"], pb, rtol=1e-5, atol=1e-5)


def test_rounds_and_tail_cover_every_row(mod, host):
    """40 rows of 32: LayerNormGrad's minimum (H x H = 1024 floats per buffer) is one round of 32 rows and a tail of
    8; LayerNormGradBeta on 8 rows per round makes five rounds."""
    t = host(1, 40, 32, 32, 4, 0, stackb=8 * 32 * 4)
    assert (t["g"][6], t["g"][7], t["g"][9], t["gb"][9]) == (32, 1, 8, 5)
    x, dy, g, m, v, r = run(mod, host, 1, 40, 32, 0, tmpb=8 * 32 * 4, stackb=8 * 32 * 4)
    px, pg, pb = want(x, dy, g)
    np.testing.assert_allclose(r["pdx"], px, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(r["pg"], pg, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(r["pb"], pb, rtol=1e-5, atol=1e-5)


def test_reuse_source_leaves_the_work_in_dy_and_x(mod, host):
    x, dy, g, m, v, r = run(mod, host, 2, 3, 32, 0, reuse=1, stack=-1)
    px, _, _ = want(x, dy, g)
    np.testing.assert_allclose(r["pdx"], px, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(r["x_after"], x - m, rtol=1e-6, atol=1e-6)
    # inputDy holds pdX minus x1 x rstd (x3): pdVar x 2/H x (x - mean) + pdMean / H
    x3 = dy * g / np.sqrt(v + 1e-5)
    np.testing.assert_allclose(r["dy_after"], px - x3, rtol=1e-4, atol=1e-4)


def test_half_minimum_with_few_rows_reaches_past_the_buffer(mod, host):
    """GetLayerNormGradNDTilingInfo rounds nohCalSize up to 16 rows for half: a tiling made for the minimum of a
    2-row shape lays its nine float buffers 16 rows apart, beyond the buffer it was made for -- the device would
    write there (layernorm_grad_tiling_impl.cpp:172-180)."""
    r = host(1, 2, 32, 32, 2, 0)
    assert r["g"][6] == 16 and r["g"][5] == 16 * 32
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 1, 2, 32, 1)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "LayerNormGrad")
    assert "rounded nohCalSize up to 16 rows" in e.value.detail and e.value.file.endswith("test_layernorm_grad.cpp")


def test_tmp_below_cann_minimum_is_a_rule_violation(mod, host):
    need = host(2, 3, 32, 32, 4, 0)["mn"]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 3, 32, 0, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "LayerNormGrad")
    assert "GetLayerNormGradMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail
    needb = host(2, 3, 32, 32, 2, 0)["mnb"]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 8, 32, 1, tmpb=needb - 32, tmp=0)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "LayerNormGradBeta")
    assert "GetLayerNormGradBetaMaxMinTmpSize" in e.value.detail


def test_unfilled_tilings_are_refused(mod, host):
    r = host(1, 2, 32, 32, 4, 0)
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 1, 2, 32, 0, tmp=0, fields=([0, 1, 2, 32, 32] + [0] * 25, r["gb"]))
    assert (e.value.rule, e.value.call) == ("api-argument", "LayerNormGrad")
    assert "GetLayerNormGradNDTilingInfo" in e.value.detail
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 1, 2, 32, 0, tmp=0, tmpb=0, fields=(r["g"], [0, 1, 2, 32, 32] + [0] * 15))
    assert (e.value.rule, e.value.call) == ("api-argument", "LayerNormGradBeta")
    assert "GetLayerNormGradBetaNDTilingInfo" in e.value.detail
