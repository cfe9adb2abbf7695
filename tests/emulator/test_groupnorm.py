"""GroupNorm (lib/normalization/groupnorm.h), against PyTorch's group_norm, on the tiling of the host stand-in.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/归一化操作/GroupNorm.md ([N, C, H, W], C split into groupNum
groups; gamma / beta of shape [C]); the tiling: python/opkit/cannproject/include/tiling/normalization/
groupnorm_tiling.h (after impl/adv_api/tiling/normalization/groupnorm_tiling_impl.cpp), compiled and run here as a
host program; the A2 computation impl/adv_api/detail/normalization/groupnorm/groupnorm_common_impl.h: float
throughout, each channel's H x W padded to 32 bytes with zeros (as the page's example). Precision: float within a
few ulp of torch (the sums' order differs); half: the float result rounded once."""
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
  const int64_t n = atoi(argv[1]), c = atoi(argv[2]), h = atoi(argv[3]), w = atoi(argv[4]);
  const uint32_t g = atoi(argv[5]), size = atoi(argv[6]), reuse = atoi(argv[7]), stack = atoi(argv[8]);
  ge::Shape shape(std::vector<int64_t>{n, c, h, w});
  uint32_t mx = 0, mn = 0;
  AscendC::GetGroupNormMaxMinTmpSize(shape, size, reuse, g, mx, mn);
  AscendC::tiling::GroupNormTiling t;
  AscendC::GetGroupNormNDTilingInfo(shape, stack ? stack : mn, size, reuse, g, t);
  uint32_t buf[30] = {};
  static_assert(sizeof t == sizeof buf, "GroupNormTiling is 30 words");
  __builtin_memcpy(buf, &t, sizeof buf);
  printf("%u %u", mx, mn);
  for (uint32_t v : buf) printf(" %u", v);
  printf("\n");
}
"""
F = dict(hwAlignSize=5, oneTmpSize=15, loopRound=19, inputTailSize=21, bsCurLength=27, smallShape=29)


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("groupnorm", headers_digest()), "groupnorm")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("gn_host"))

    def tiling(n, c, h, w, g, size, reuse=0, stack=0):
        out = subprocess.run([str(exe), *map(str, (n, c, h, w, g, size, reuse, stack))], check=True,
                             capture_output=True, text=True).stdout.split()
        v = [int(x) for x in out]
        return dict(mx=v[0], mn=v[1], f=v[2:])
    return tiling


def test_host_tiling_matches_cann_formulas(host):
    # groupnorm_tiling_impl.cpp:42-76: 3 x (C / G) x align32(HW x size) / size x 4 + 2 x align32(N x G x 4)
    r = host(2, 8, 4, 2, 4, 4)
    assert r["mn"] == 3 * 2 * 32 + 2 * 32 and r["mx"] == 3 * 16 * 32 + 2 * 32
    assert host(2, 8, 4, 2, 4, 4, reuse=1)["mn"] == 2 * 2 * 32 + 2 * 32
    assert host(2, 6, 5, 1, 3, 2)["mn"] == 3 * 2 * 64 + 2 * 32        # HW = 5 halves pad to 16, counted as floats
    assert r["f"][F["hwAlignSize"]] == 8 and r["f"][F["smallShape"]] & 0xff == 1
    big = host(1, 4, 32, 32, 2, 4)                                     # HW = 1024: not small
    assert big["f"][F["smallShape"]] & 0xff == 0
    assert host(2, 64, 2, 2, 32, 2)["f"][F["oneTmpSize"]] == 0         # half: a round holds 32 < C (:179-181)


def run(mod, host, n, c, h, w, g, half, tmp=-1, reuse=0, eps=1e-5, stack=0, fields=None, seed=0, gamma=None,
        fill=0.0, alias=0):
    rng = np.random.default_rng(seed + n * 7 + c * 5 + h * 3 + w + g)
    x = (rng.standard_normal((n, c, h * w)) * 2 + 0.5).astype(np.float32)
    gm = rng.uniform(0.5, 1.5, c).astype(np.float32) if gamma is None else gamma
    be = rng.uniform(-0.5, 0.5, c).astype(np.float32)
    r = host(n, c, h, w, g, 2 if half else 4, reuse, stack)
    f = r["f"] if fields is None else fields
    hwa = f[F["hwAlignSize"]] or (h * w + 7) // 8 * 8
    xp = np.zeros((n, c, hwa), np.float32)
    xp[..., :h * w] = x                                                # zero padding, as the page's example
    case = np.concatenate([np.array([half, r["mn"] if tmp < 0 else tmp, reuse], np.uint32),
                           np.array([eps, fill], np.float32).view(np.uint32), np.array([alias] + list(f), np.uint32)]
                          ).view(np.uint8)
    total, ng = n * c * hwa, n * g
    out = np.zeros(total + 2 * ng, np.float32)
    mod.gn_call([np.concatenate([xp.ravel(), gm, be]), out, case.copy()], block_dim=1)
    y = out[:total].reshape(n, c, hwa)
    return x, gm, be, dict(y=y[..., :h * w].reshape(n, c, h, w), pad=y[..., h * w:], mean=out[total:total + ng],
                           var=out[total + ng:])


def want(x, gm, be, n, c, h, w, g, half, eps=1e-5):
    t = [torch.from_numpy(a).double() for a in (x, gm, be)]
    if half:
        t = [a.half().double() for a in t]
        eps = float(np.float16(eps))
    xs = t[0].reshape(n, c, h, w)
    y = torch.nn.functional.group_norm(xs, g, t[1], t[2], eps=eps)
    grp = xs.reshape(n, g, -1)
    return y.numpy(), grp.mean(-1).numpy().ravel(), grp.var(-1, unbiased=False).numpy().ravel()


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("n,c,h,w,g,extra", [(2, 8, 4, 2, 4, 0), (2, 6, 5, 1, 3, 0), (3, 4, 3, 3, 2, 0),
                                             (1, 4, 16, 16, 2, 0), (2, 16, 4, 4, 4, 0), (4, 12, 7, 3, 6, 700),
                                             (1, 6, 33, 3, 3, 0)])
def test_groupnorm_matches_torch(mod, host, n, c, h, w, g, extra, half):
    """Aligned (H x W = 8, 16, 256) and ragged H x W (5, 9, 21, 99: the zero padding); small shapes (two
    WholeReduceSum trees) and not (HW = 256, 99: ReduceSum); the minimum buffer (several rounds, a tail) and more."""
    for tmp in (-1, 0):
        stack = host(n, c, h, w, g, 2 if half else 4)["mn"] + extra
        x, gm, be, r = run(mod, host, n, c, h, w, g, half, tmp if tmp == 0 else stack, stack=stack)
        y, m, v = want(x, gm, be, n, c, h, w, g, half)
        if half:
            np.testing.assert_allclose(r["y"], y, rtol=4e-3, atol=4e-3)
            np.testing.assert_allclose(r["mean"], m, rtol=2e-3, atol=2e-3)
            np.testing.assert_allclose(r["var"], v, rtol=2e-3, atol=2e-3)
        else:
            np.testing.assert_allclose(r["y"], y, rtol=2e-5, atol=2e-5)
            np.testing.assert_allclose(r["mean"], m, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(r["var"], v, rtol=1e-5, atol=1e-6)
        assert not r["pad"].any()     # zero padding stays zero: (0 - 0) x rstd for float, 0 x rstd for half


def test_reuse_source_float(mod, host):
    x, gm, be, r = run(mod, host, 2, 8, 4, 2, 4, 0, reuse=1)
    y, m, v = want(x, gm, be, 2, 8, 4, 2, 4, 0)
    np.testing.assert_allclose(r["y"], y, rtol=2e-5, atol=2e-5)


def test_reuse_source_poisons_only_what_a2_overwrites(mod, host):
    """isReuseSource: inputX's start is the work buffer of every round (groupnorm_common_impl.h:480-481; smallShape
    writes its first inputRoundSize floats, :420-425): poisoned; later rounds' part of inputX keeps its values."""
    stack = host(2, 6, 5, 1, 3, 4, reuse=1)["mn"] + 512
    f = host(2, 6, 5, 1, 3, 4, reuse=1, stack=stack)["f"]
    total, rnd = 2 * 6 * 8, f[20]                              # inputRoundSize
    assert f[F["smallShape"]] & 0xff == 1 and 0 < rnd < total
    x, gm, be, r = run(mod, host, 2, 6, 5, 1, 3, 0, stack, reuse=1, stack=stack, fields=f, alias=2)
    xp = np.zeros((2, 6, 8), np.float32)
    xp[..., :5] = x
    raw = np.concatenate([r["y"].reshape(2, 6, 5), r["pad"]], -1).ravel()   # the kernel's out, as copied
    np.testing.assert_array_equal(raw[:total - rnd], xp.ravel()[rnd:])
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 6, 5, 1, 3, 0, stack, reuse=1, stack=stack, fields=f, alias=3)
    assert e.value.rule == "ub-uninitialized"


def test_reuse_source_half_is_refused(mod, host):
    f = host(2, 8, 4, 2, 4, 2)["f"]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 8, 4, 2, 4, 1, reuse=1, fields=f)
    assert (e.value.rule, e.value.call) == ("api-argument", "GroupNorm") and "isReuseSource" in e.value.detail


def test_tmp_below_cann_minimum_is_a_rule_violation(mod, host):
    need = host(2, 8, 4, 2, 4, 2)["mn"]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 8, 4, 2, 4, 1, need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "GroupNorm")
    assert "GetGroupNormMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_groupnorm.cpp")


def test_unfilled_tiling_is_refused(mod, host):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 64, 2, 2, 32, 1)   # half, one round cannot hold C: CANN's tiling leaves it empty
    assert (e.value.rule, e.value.call) == ("api-argument", "GroupNorm") and "GetGroupNormNDTilingInfo" in e.value.detail


def test_more_than_64_groups_without_small_shape_is_not_emulated(mod, host):
    r = host(65, 1, 8, 9, 1, 4)          # H x W = 72 > 64 floats: not small
    assert r["f"][F["smallShape"]] & 0xff == 0
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 65, 1, 8, 9, 1, 0)
    assert (e.value.rule, e.value.call) == ("not-emulated", "GroupNorm") and "1 << (group" in e.value.detail
    assert "wrong mean / variance" in e.value.detail and "never scaled" in e.value.detail


@pytest.mark.parametrize("half,extra", [(0, 512), (1, 1152)], ids=["float", "half"])
def test_tail_round_matches_torch(mod, host, half, extra):
    """Rounds of 4 groups over 6: a tail of 2 (smallShape, ragged H x W = 5 padded). The output starts zeroed, so
    the float tail's stale padding lanes (test_small_shape_float_tail_reads_the_outputs_padding) add nothing."""
    stack = host(2, 6, 5, 1, 3, 2 if half else 4)["mn"] + extra
    f = host(2, 6, 5, 1, 3, 2 if half else 4, stack=stack)["f"]
    assert f[F["bsCurLength"]] == 4 and f[F["loopRound"]] == 1 and f[F["inputTailSize"]] > 0
    x, gm, be, r = run(mod, host, 2, 6, 5, 1, 3, half, stack, stack=stack)
    y, m, v = want(x, gm, be, 2, 6, 5, 1, 3, half)
    tol = 4e-3 if half else 2e-5
    np.testing.assert_allclose(r["y"], y, rtol=tol, atol=tol)
    np.testing.assert_allclose(r["mean"], m, rtol=tol, atol=tol)
    np.testing.assert_allclose(r["var"], v, rtol=tol, atol=tol)


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
def test_small_shape_float_tail_reads_the_outputs_padding(mod, host, half):
    """A2 quirk (groupnorm_common_impl.h:358-371, :409-417): in a smallShape float tail round (mvOffset != 0) the
    output is not zeroed; Duplicate writes the one lane output[tail + group index] per group, Adds writes only the
    H x W lanes, and Mul(output, output) squares the rest -- the output's previous content -- into the variance.
    Groups 4, 5 are the tail; the zeroed lanes tail + 4 (an H x W lane, then overwritten) and tail + 5 (group 4's
    channel-0 padding lane 5). The first round zeroes its output (:369) and half computes t in the cast input
    (:260-263), so neither reads the old output."""
    n, c, h, w, g, fill = 2, 6, 5, 1, 3, 3.0
    stack = host(n, c, h, w, g, 2 if half else 4)["mn"] + (1152 if half else 512)
    f = host(n, c, h, w, g, 2 if half else 4, stack=stack)["f"]
    assert f[F["bsCurLength"]] == 4 and f[F["inputTailSize"]] > 0 and f[F["smallShape"]] & 0xff == 1
    x, gm, be, r = run(mod, host, n, c, h, w, g, half, stack, stack=stack, fill=fill)
    y, m, v = want(x, gm, be, n, c, h, w, g, half)
    tol = 4e-3 if half else 2e-5
    np.testing.assert_allclose(r["mean"], m, rtol=tol, atol=tol)
    if half:  # no stale read: torch's numbers, padding 0 x rstd
        np.testing.assert_allclose(r["var"], v, rtol=tol, atol=tol)
        np.testing.assert_allclose(r["y"], y, rtol=tol, atol=tol)
        assert not r["pad"].any()
        return
    d, hw, pad = c // g, h * w, 8 - h * w
    stale = np.zeros((n * g, d, pad))                     # the previous output in each tail group's padding lanes
    stale[4:] = fill
    stale[4, 0, 0] = 0.0                                  # lane tail + 5: group 4, channel 0, padding lane 5
    var = v.copy()
    var[4:] += (stale[4:] ** 2).sum(axis=(1, 2)) / (d * hw)  # factor = 1 / (d x H x W)
    assert np.abs(var[4:] - v[4:]).min() > 1.0             # the quirk is visible: A2's variance is not torch's
    np.testing.assert_allclose(r["var"], var, rtol=1e-5, atol=1e-6)
    rstd = 1.0 / np.sqrt(var + 1e-5)
    xg = x.astype(np.float64).reshape(n * g, d, hw)
    ch = np.arange(n * g * d) % c
    yw = ((xg - m[:, None, None]) * rstd[:, None, None]).reshape(-1, hw) * gm[ch, None] + be[ch, None]
    np.testing.assert_allclose(r["y"].reshape(-1, hw), yw, rtol=tol, atol=tol)
    np.testing.assert_allclose(r["pad"].reshape(n * g, d, pad), stale * rstd[:, None, None], rtol=1e-5, atol=1e-6)


def test_gamma_outside_the_pages_range_is_refused(mod, host):
    gm = np.full(8, 1.0, np.float32)
    gm[5] = 150.0
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 8, 4, 2, 4, 0, gamma=gm)
    assert (e.value.rule, e.value.call) == ("api-argument", "GroupNorm") and "[-100, 100]" in e.value.detail


def test_overlapping_outputs_are_refused(mod, host):
    # CANN's kernel check TensorReuseVerifyingParameters(output, outputMean, outputVariance)
    # (groupnorm_check_common.h:62-63): here outputVariance is outputMean
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 8, 4, 2, 4, 0, alias=1)
    assert (e.value.rule, e.value.call) == ("api-argument", "GroupNorm")
    assert "outputMean and outputVariance are the same tensor" in e.value.detail


def test_c_not_a_multiple_of_group_num_is_refused_as_an_emulator_check(mod, host):
    # the page only says C splits into groupNum groups; CANN's tiling truncates d = C / groupNum
    # (groupnorm_tiling_impl.cpp:118), so the refusal is the emulator's, and says so
    f = list(host(2, 6, 5, 1, 3, 4)["f"])
    f[3] = 4                                                  # g: 6 channels in 4 groups
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 6, 5, 1, 3, 0, fields=f)
    assert (e.value.rule, e.value.call) == ("api-argument", "GroupNorm")
    assert "multiple of groupNum" in e.value.detail and "an emulator check" in e.value.detail
