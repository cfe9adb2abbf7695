"""BatchNorm (lib/normalization/batchnorm.h), against PyTorch's batch_norm over the first axis, on the tiling of the
host stand-in.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/归一化操作/BatchNorm.md ([B, S, H]; statistics over B per
S x H column; gamm / beta of shape [B]); the tiling: python/opkit/cannproject/include/tiling/normalization/
batchnorm_tiling.h (after impl/adv_api/tiling/normalization/batchnorm_tiling_impl.cpp), compiled and run here as a
host program; the A2 computation impl/adv_api/detail/normalization/batchnorm/batchnorm_common_impl.h (float
throughout, rstd = Exp(-0.5 x Ln(var + eps))). Precision: float within a few ulp of torch (the order of the batch
sums and Ln / Exp differ); half: the float result rounded once."""
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
  const int64_t b = atoi(argv[1]), s = atoi(argv[2]), h = atoi(argv[3]);
  const uint32_t size = atoi(argv[4]), basic = atoi(argv[5]), stack = atoi(argv[6]);
  ge::Shape shape(std::vector<int64_t>{b, s, h});
  uint32_t mx = 0, mn = 0;
  const bool ok1 = AscendC::GetBatchNormMaxMinTmpSize(shape, shape, size, false, mx, mn, basic);
  AscendC::tiling::BatchNormTiling t;
  const bool ok2 = AscendC::GetBatchNormNDTilingInfo(shape, shape, stack ? stack : mn, size, false, t, basic);
  uint32_t buf[20] = {};
  static_assert(sizeof t == sizeof buf, "BatchNormTiling is 20 words");
  __builtin_memcpy(buf, &t, sizeof buf);
  printf("%d %d %u %u", ok1, ok2, mx, mn);
  for (uint32_t v : buf) printf(" %u", v);
  printf("\n");
}
"""
F = dict(oneTmpSize=5, loopRound=9, inputTailSize=10, shCurLength=15, firstDimValueBack=16)


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("batchnorm", headers_digest()), "batchnorm")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("bn_host"))

    def tiling(b, s, h, size, basic=0, stack=0):
        out = subprocess.run([str(exe), *map(str, (b, s, h, size, basic, stack))], check=True,
                             capture_output=True, text=True).stdout.split()
        v = [int(x) for x in out]
        return dict(ok=(v[0], v[1]), mx=v[2], mn=v[3], f=v[4:])
    return tiling


def test_host_tiling_matches_cann_formulas(host):
    # batchnorm_tiling_impl.cpp:99-125: 3 x B x 32 (float) / B x 64 (half) / B x 256 (basic) + 2 x align32(SH x 4)
    assert host(3, 2, 8, 4)["mn"] == 3 * 3 * 32 + 2 * 64
    assert host(3, 2, 8, 2)["mn"] == 3 * 3 * 64 + 2 * 64
    assert host(8, 4, 16, 4, basic=1)["mn"] == 3 * 8 * 256 + 2 * 256
    assert host(3, 2, 8, 4)["mx"] == 3 * 3 * 16 * 4 + 2 * 64
    assert host(3, 3, 3, 4)["ok"] == (1, 0)                    # S x H x 4 not 32-byte aligned
    assert host(3, 4, 16, 4, basic=1)["ok"] == (0, 0)          # basic block needs B % 8 == 0
    r = host(3, 4, 16, 4)   # the minimum's 800 bytes: float keeps no mean / variance copy, so 16 columns a round
    assert r["ok"] == (1, 1) and r["f"][F["shCurLength"]] == 16 and r["f"][F["loopRound"]] == 4
    assert np.float32(np.array(r["f"][F["firstDimValueBack"]], np.uint32).view(np.float32)) == np.float32(1 / 3)
    r = host(3, 4, 16, 4, stack=host(3, 4, 16, 4)["mn"] + 192)   # 24 columns: 2 rounds + a tail of 16
    assert r["f"][F["shCurLength"]] == 24 and r["f"][F["loopRound"]] == 2 and r["f"][F["inputTailSize"]] == 3 * 16


def run(mod, host, b, s, h, half, tmp=-1, basic=0, reuse=0, eps=1e-5, stack=0, fields=None, gexact=0, seed=0,
        alias=0):
    rng = np.random.default_rng(seed + b * 7 + s * 5 + h)
    x = (rng.standard_normal((b, s * h)) * 2 + 0.5).astype(np.float32)
    g = rng.uniform(0.5, 1.5, b).astype(np.float32)
    be = rng.uniform(-0.5, 0.5, b).astype(np.float32)
    r = host(b, s, h, 2 if half else 4, basic, stack)
    f = r["f"] if fields is None else fields
    case = np.concatenate([np.array([half, r["mn"] if tmp < 0 else tmp, reuse, basic, gexact, alias], np.uint32),
                           np.array([eps], np.float32).view(np.uint32), np.array(f, np.uint32)]).view(np.uint8)
    sh = s * h
    out = np.zeros(b * sh + 2 * sh, np.float32)
    mod.bn_call([np.concatenate([x.ravel(), g, be]), out, case.copy()], block_dim=1)
    return x, g, be, dict(y=out[:b * sh].reshape(b, sh), mean=out[b * sh:b * sh + sh], var=out[b * sh + sh:])


def want(x, g, be, half, eps=1e-5):
    t = [torch.from_numpy(a).double() for a in (x, g, be)]
    if half:
        t = [a.half().double() for a in t]
        eps = float(np.float16(eps))
    y = torch.nn.functional.batch_norm(t[0], None, None, training=True, eps=eps)   # per column over B
    y = y * t[1][:, None] + t[2][:, None]
    return y.numpy(), t[0].mean(0).numpy(), t[0].var(0, unbiased=False).numpy()


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("b,s,h,basic,extra", [(2, 2, 16, 0, 0), (3, 4, 16, 0, 0), (5, 3, 16, 0, 2000),
                                               (16, 2, 32, 0, 0), (8, 2, 64, 1, 0), (16, 4, 32, 1, 9000)])
def test_batchnorm_matches_torch(mod, host, b, s, h, basic, extra, half):
    """Ragged B (2, 3, 5) and aligned (8, 16); the minimum buffer (one slice of columns per round) and larger ones
    (``extra`` bytes: several rounds and a tail)."""
    for tmp in (-1, 0):
        stack = host(b, s, h, 2 if half else 4, basic)["mn"] + extra
        x, g, be, r = run(mod, host, b, s, h, half, tmp if tmp == 0 else stack, basic=basic, stack=stack)
        y, m, v = want(x, g, be, half)
        if half:
            np.testing.assert_allclose(r["y"], y, rtol=4e-3, atol=4e-3)
            np.testing.assert_allclose(r["mean"], m, rtol=2e-3, atol=2e-3)
            np.testing.assert_allclose(r["var"], v, rtol=2e-3, atol=2e-3)
        else:
            np.testing.assert_allclose(r["y"], y, rtol=2e-5, atol=2e-5)
            np.testing.assert_allclose(r["mean"], m, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(r["var"], v, rtol=1e-5, atol=1e-6)


def test_tmp_below_cann_minimum_is_a_rule_violation(mod, host):
    need = host(3, 4, 16, 2)["mn"]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 3, 4, 16, 1, need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "BatchNorm")
    assert "GetBatchNormMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_batchnorm.cpp")


def test_reuse_source_is_refused(mod, host):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 3, 4, 16, 0, reuse=1)
    assert (e.value.rule, e.value.call) == ("api-argument", "BatchNorm") and "isReuseSource" in e.value.detail


def test_basic_block_shape_is_checked(mod, host):
    f = host(3, 4, 16, 4)["f"]   # a plain tiling of B = 3, called with isBasicBlock
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 3, 4, 16, 0, basic=1, fields=f)
    assert (e.value.rule, e.value.call) == ("api-argument", "BatchNorm") and "isBasicBlock" in e.value.detail


def test_gamma_not_32_byte_aligned_is_refused(mod, host):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 3, 4, 16, 0, gexact=1)   # gamm of 3 floats: 12 bytes
    assert (e.value.rule, e.value.call) == ("api-argument", "BatchNorm") and "32-byte" in e.value.detail


def test_unfilled_tiling_is_refused(mod, host):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 3, 4, 16, 0, 0, fields=[3, 64] + [0] * 18)
    assert (e.value.rule, e.value.call) == ("api-argument", "BatchNorm") and "GetBatchNormNDTilingInfo" in e.value.detail


def test_overlapping_outputs_are_refused(mod, host):
    # CANN's kernel check TensorReuseVerifyingParameters(output, outputMean, outputVariance)
    # (batchnorm_check_common.h:91-92; TensorReuseLoopCheck, multiple_tensor_check.h:71-97: the same start and
    # GetSize bytes): here outputVariance is outputMean
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 3, 4, 16, 0, alias=1)
    assert (e.value.rule, e.value.call) == ("api-argument", "BatchNorm")
    assert "outputMean and outputVariance are the same tensor" in e.value.detail
    assert "TensorReuseLoopCheck" in e.value.detail


@pytest.mark.parametrize("alias", [3, 4], ids=["partial", "same-start-other-size"])
def test_outputs_sharing_bytes_are_refused_as_an_emulator_check(mod, host, alias):
    # CANN's check lets these through (not the same start and size); the device's result would depend on its write
    # order, so the emulator refuses them -- and says the check is its own
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 3, 4, 16, 0, alias=alias)
    assert (e.value.rule, e.value.call) == ("api-argument", "BatchNorm")
    assert "output and outputVariance overlap" in e.value.detail and "the emulator adds" in e.value.detail


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
def test_output_may_be_input_x(mod, host, half):
    """BatchNorm.md:74 allows inputX and output to share UB: each round reads its columns before writing them.
    Several rounds (a larger buffer than the minimum) and a tail."""
    stack = host(5, 3, 16, 2 if half else 4)["mn"] + 2000
    x, g, be, r = run(mod, host, 5, 3, 16, half, stack, stack=stack, alias=2)
    y, m, v = want(x, g, be, half)
    tol = 4e-3 if half else 2e-5
    np.testing.assert_allclose(r["y"], y, rtol=tol, atol=tol)
    np.testing.assert_allclose(r["mean"], m, rtol=tol, atol=tol)
    np.testing.assert_allclose(r["var"], v, rtol=tol, atol=tol)
