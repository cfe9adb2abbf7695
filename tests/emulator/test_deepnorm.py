"""DeepNorm (lib/normalization/deepnorm.h), against PyTorch's layer_norm of gx + alpha x, on the tiling of the host
stand-in.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/归一化操作/DeepNorm.md; the tiling:
python/opkit/cannproject/include/tiling/normalization/deepnorm_tiling.h (after
impl/adv_api/tiling/normalization/deepnorm_tiling_impl.cpp), compiled and run here as a host program; the A2
computation impl/adv_api/detail/normalization/deepnorm/deepnorm_common_impl.h (float throughout; the third output
holds the variance, as that code writes it, though the page names it rstd). Precision: float within a few ulp of
torch (the sums' order differs); half: the float result rounded once."""
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
  const int64_t b = atoi(argv[1]), s = atoi(argv[2]), h = atoi(argv[3]), oh = atoi(argv[4]);
  const uint32_t size = atoi(argv[5]), reuse = atoi(argv[6]), basic = atoi(argv[7]), stack = atoi(argv[8]);
  ge::Shape shape(std::vector<int64_t>{b, s, h}), ori(std::vector<int64_t>{b, s, oh});
  uint32_t mx = 0, mn = 0;
  const bool ok1 = AscendC::GetDeepNormMaxMinTmpSize(shape, size, reuse, basic, mx, mn);
  optiling::DeepNormTiling t;
  const bool ok2 = AscendC::GetDeepNormTilingInfo(shape, ori, stack ? stack : mn, size, reuse, basic, t);
  uint32_t buf[26] = {};
  t.SaveToBuffer(buf, sizeof buf);
  printf("%d %d %u %u", ok1, ok2, mx, mn);
  for (uint32_t v : buf) printf(" %u", v);
  printf("\n");
}
"""


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("deepnorm", headers_digest()), "deepnorm")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("dn_host"))

    def tiling(b, s, h, oh, size, reuse=0, basic=0, stack=0):
        out = subprocess.run([str(exe), *map(str, (b, s, h, oh, size, reuse, basic, stack))], check=True,
                             capture_output=True, text=True).stdout.split()
        v = [int(x) for x in out]
        return dict(ok=(v[0], v[1]), mx=v[2], mn=v[3], f=v[4:])
    return tiling


def test_host_tiling_matches_cann_formulas(host):
    r = host(2, 3, 48, 48, 2)
    # deepnorm_tiling_impl.cpp:60-79: 3 x align32(H x 4) + 2 x align32(B x S x 4)
    assert r["ok"] == (1, 1) and r["mn"] == 3 * 192 + 2 * 32
    assert host(2, 3, 40, 40, 2)["ok"] == (0, 0)              # 40 halves are not 32-byte aligned
    assert host(2, 3, 40, 40, 4, reuse=1)["mn"] == 2 * 160 + 2 * 32
    assert host(2, 3, 40, 32, 4)["f"][3] == 32
    assert host(2, 3, 2048, 2048, 4)["ok"] == (0, 0)          # H beyond 2040
    assert host(2, 3, 40, 40, 4, basic=1)["ok"] == (0, 0)     # basic block needs H % 64 == 0
    assert host(2, 4, 64, 32, 4, basic=1)["ok"] == (1, 0)     # and originH == H


def run(mod, host, b, s, h, oh, half, tmp=-1, reuse=0, basic=0, alpha=0.7, eps=1e-5, stack=0, fields=None, seed=0):
    rng = np.random.default_rng(seed + b * 7 + s * 5 + h + oh)
    x = (rng.standard_normal((b, s, h)) * 2 + 0.5).astype(np.float32)
    gx = rng.standard_normal((b, s, h)).astype(np.float32)
    x[..., oh:] = 0.0
    gx[..., oh:] = 0.0
    g = rng.uniform(0.5, 1.5, h).astype(np.float32)
    be = rng.uniform(-0.5, 0.5, h).astype(np.float32)
    r = host(b, s, h, oh, 2 if half else 4, reuse, basic, stack)
    f = r["f"] if fields is None else fields
    case = np.concatenate([np.array([half, r["mn"] if tmp < 0 else tmp, reuse, basic], np.uint32),
                           np.array([alpha, eps], np.float32).view(np.uint32), np.array(f, np.uint32)]).view(np.uint8)
    rows, tot = b * s, b * s * h
    out = np.zeros(2 * tot + 2 * rows, np.float32)
    mod.dn_call([np.concatenate([x.ravel(), gx.ravel(), g, be]), out, case.copy()], block_dim=1)
    return x, gx, g, be, dict(y=out[:tot].reshape(b, s, h), mean=out[tot:tot + rows], var=out[tot + rows:tot + 2 * rows],
                              x_after=out[tot + 2 * rows:].reshape(b, s, h))


def want(x, gx, g, be, oh, half, alpha=0.7, eps=1e-5):
    t = [torch.from_numpy(a) for a in (x, gx, g, be)]
    if half:
        t = [a.half().float() for a in t]
        alpha = float(np.float16(alpha))
    x1 = (t[1] + t[0] * alpha).double()[..., :oh]
    y = torch.nn.functional.layer_norm(x1, (oh,), t[2][:oh].double(), t[3][:oh].double(), eps=eps)
    return y.numpy(), x1.mean(-1).numpy().ravel(), x1.var(-1, unbiased=False).numpy().ravel()


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("b,s,h,basic", [(1, 1, 64, 0), (2, 3, 32, 0), (2, 4, 48, 0), (1, 20, 208, 0),
                                         (1, 3, 1024, 0), (2, 4, 128, 1), (1, 8, 64, 1)])
def test_deepnorm_matches_torch(mod, host, b, s, h, basic, half):
    for tmp in (-1, 0):
        x, gx, g, be, r = run(mod, host, b, s, h, h, half, tmp, basic=basic)
        y, m, v = want(x, gx, g, be, h, half)
        if half:
            np.testing.assert_allclose(r["y"], y, rtol=4e-3, atol=4e-3)
            np.testing.assert_allclose(r["mean"], m, rtol=2e-3, atol=2e-3)
            np.testing.assert_allclose(r["var"], v, rtol=2e-3, atol=2e-3)
        else:
            np.testing.assert_allclose(r["y"], y, rtol=2e-5, atol=2e-5)
            np.testing.assert_allclose(r["mean"], m, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(r["var"], v, rtol=1e-5, atol=1e-6)


def test_padded_h_reduces_over_original_h_only(mod, host):
    """originalHLength < hLength: unlike LayerNorm, DeepNorm's sums stop at originalHLength (DeepNormReduceSumImpl),
    so the result over the first originalHLength columns is the plain layer norm of those."""
    x, gx, g, be, r = run(mod, host, 1, 4, 48, 40, 0)
    y, m, v = want(x, gx, g, be, 40, 0)
    np.testing.assert_allclose(r["y"][..., :40], y, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(r["var"], v, rtol=1e-5, atol=1e-6)


def test_reuse_source_leaves_the_work_in_src(mod, host):
    x, gx, g, be, r = run(mod, host, 2, 3, 32, 32, 0, reuse=1)
    y, _, _ = want(x, gx, g, be, 32, 0)
    np.testing.assert_allclose(r["y"], y, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(r["x_after"], y - be, rtol=2e-5, atol=2e-5)


def test_tmp_below_cann_minimum_is_a_rule_violation(mod, host):
    need = host(2, 3, 64, 64, 2)["mn"]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 3, 64, 64, 1, need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "DeepNorm")
    assert "GetDeepNormMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_deepnorm.cpp")


def test_basic_block_shape_is_checked(mod, host):
    f = host(1, 3, 64, 64, 4)["f"]   # a plain tiling of 3 rows, called with isBasicBlock
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 1, 3, 64, 64, 0, basic=1, fields=f)
    assert (e.value.rule, e.value.call) == ("api-argument", "DeepNorm") and "isBasicBlock" in e.value.detail


def test_unfilled_tiling_is_refused(mod, host):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 1, 2, 32, 32, 0, 0, fields=[1, 2, 32, 32] + [0] * 22)
    assert (e.value.rule, e.value.call) == ("api-argument", "DeepNorm") and "GetDeepNormTilingInfo" in e.value.detail
