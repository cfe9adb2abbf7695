"""SoftmaxFlashV3 (lib/activation/softmaxflashv3.h), against the page's formula computed with PyTorch in float64:
a first call without update over chunk 1, then an update over chunk 2 with the first call's mean / sum / max.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口/SoftmaxFlashV3.md (formula, 约束说明:
half / float, srcK >= 512 and a multiple of 64, srcM a multiple of 8, splitMeanCnt 8); the A2 order
impl/adv_api/detail/activation/softmax/membase/v220/softmax_flashv3_impl.h; the minimum buffer
GetSoftMaxFlashV3MaxMinTmpSize (host stand-in tiling/activation/softmax_flashv3_tiling.h, compiled here).
Precision: the emulator computes in float in the A2 code's order (the mean bitwise, test_mean_is_bitwise_the_a2_order):
float outputs within 1e-5 relative (1e-4 absolute) of the float64 formula, dst within half rounding."""
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
  ge::Shape shape(std::vector<int64_t>{atoi(argv[1]), atoi(argv[2])});
  uint32_t mx = 0, mn = 0;
  AscendC::GetSoftMaxFlashV3MaxMinTmpSize(shape, 2, 4, mx, mn, true);
  optiling::SoftMaxTiling t;
  AscendC::SoftMaxFlashV3TilingFunc(shape, 2, 4, atoi(argv[3]), t, true);
  AscendC::tiling::SoftMaxTiling k{};  // the kernel-side struct, CANN's second overload
  AscendC::SoftMaxFlashV3TilingFunc(shape, 2, 4, atoi(argv[3]), k, true);
  uint32_t buf[16] = {};
  t.SaveToBuffer(buf, sizeof buf);
  printf("%u %u %u %u %u %u", mx, mn, t.get_splitM(), t.get_rangeM(), t.get_tailM(), k.splitM == t.get_splitM());
  for (uint32_t v : buf) printf(" %u", v);
  printf("\n");
}
"""
ALPHA = 0.9375


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("softmax_flashv3", headers_digest()), "softmax_flashv3")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("f3_host"))

    def query(m, k, work=0):
        out = subprocess.run([str(exe), str(m), str(k), str(work)], check=True, capture_output=True, text=True)
        return tuple(int(v) for v in out.stdout.split()[:6])

    def tiling(m, k, work):
        """The 16 SoftMaxTiling fields SoftMaxFlashV3TilingFunc fills for [m, k] and `work` bytes of buffer."""
        out = subprocess.run([str(exe), str(m), str(k), str(work)], check=True, capture_output=True, text=True)
        return [int(v) for v in out.stdout.split()[6:]]
    query.tiling = tiling
    return query


def test_host_sizes_and_tiling_match_cann(host):
    # A2: (5 x 8 + 2 srcK + 64) floats a row (softmax_tiling.cpp:852-855); max = srcM rows
    row = (40 + 2 * 512 + 64) * 4
    assert host(16, 512)[:2] == (16 * row, row)
    # a buffer of 11 rows for 16: cut to whole 8-row tiles -> 8 a pass, 2 passes, no tail; both tiling types alike
    assert host(16, 512, 11 * row)[2:] == (8, 2, 0, 1)
    assert host(20, 512, 12 * row)[2:] == (8, 2, 4, 1)


BASIC = r"""
#include <cstdio>
#include "tiling/tiling_api.h"
int main() {
  for (int64_t m : {16, 12}) {  // 16 rows in passes of 8: no tail; 12: a tail of 4
    ge::Shape shape(std::vector<int64_t>{m, 512});
    optiling::SoftMaxTiling t;
    AscendC::tiling::SoftMaxTiling k{};
    AscendC::SoftMaxTilingFunc(shape, 2, 8 * (16 + 512 + 64) * 4, t);
    AscendC::SoftMaxTilingFunc(shape, 2, 8 * (16 + 512 + 64) * 4, k);
    printf("%d %d ", AscendC::IsBasicBlockInSoftMax(t, 2), AscendC::IsBasicBlockInSoftMax(k, 2));
  }
  printf("\n");
}
"""


def test_is_basic_block_in_softmax_takes_either_tiling_type(tmp_path):
    # CANN declares it for optiling::SoftMaxTiling and AscendC::tiling::SoftMaxTiling (softmax_tiling.h:175-177)
    from conftest import build_host_program
    out = subprocess.run([str(build_host_program(BASIC, tmp_path))], check=True, capture_output=True, text=True)
    assert out.stdout.split() == ["1", "1", "0", "0"]


def formula(x, update, inmean=None, insum=None, inmax=None, loop=2):
    """SoftmaxFlashV3.md's pseudocode in float64: the 64 partial sums (8-column blocks of the first 512 columns, plus
    each further 64 columns added lane by lane), summed 8 at a time into 8 group sums over baseK = width / 8; the
    shifts are then subtracted from contiguous baseK columns."""
    m, k = x.shape
    s = ALPHA / (1 - ALPHA)
    base = k // 8
    part = x[:, :512].reshape(m, 64, 8).sum(-1) + x[:, 512:].reshape(m, -1, 64).sum(1)
    local = part.reshape(m, 8, 8).sum(-1) / base                 # the 8 group means
    mean = local.mean(-1, keepdim=True)                          # rowMeanGlobal
    xs = x - torch.repeat_interleave((mean - local) * s, base, dim=1)
    mx = xs.amax(-1, keepdim=True)
    if not update:
        dst = torch.exp(xs - mx)
        return dst, mean, dst.sum(-1, keepdim=True), mx, None
    x_mean = (mean + inmean * (loop - 1)) / loop
    sc, sp = (mean - x_mean) * s, (inmean - x_mean) * s
    x_max = torch.maximum(mx + sc, inmax + sp)
    dst = torch.exp(xs - (x_max - sc))
    em = torch.exp(inmax - x_max + sp)
    return dst, x_mean, em * insum + dst.sum(-1, keepdim=True), x_max, em


def run(mod, host, m, k, tmp=-1, split=8, loop=2, seed=0, tl=None, tiling_m=None, ori=None):
    """Both calls on one tiling: `tl` as given, else SoftMaxFlashV3TilingFunc's for [tiling_m or m, k] and the
    buffer passed (the framework form: the whole largest buffer)."""
    rng = np.random.default_rng(seed + m + k)
    x = (rng.standard_normal((2, m, k)) * 2).astype(np.float32)
    x[1] += np.linspace(0, 1.5, k, dtype=np.float32)  # column groups with different means
    x = x.astype(np.float16).astype(np.float32)  # the kernel's half source
    mx, need = host(m, k)[:2]
    tmp = need if tmp < 0 else tmp
    if tl is None:
        tl = host.tiling(tiling_m or m, k, tmp or mx)
    case = np.concatenate([np.array([tmp, m, k, loop, split, *(ori or (m, k))], np.uint32),
                           np.array([ALPHA], np.float32).view(np.uint32),
                           np.array(tl, np.uint32)]).view(np.uint8)
    n = m * k
    out = np.zeros(2 * n + 7 * m * 8, np.float32)
    mod.f3_call([x.ravel(), out, case.copy()], block_dim=1)
    blocks = out[2 * n:].reshape(7, m, 8)
    return x, out[:n].reshape(m, k), out[n:2 * n].reshape(m, k), blocks


@pytest.mark.parametrize("m,k", [(8, 512), (8, 1024), (16, 640)])
@pytest.mark.parametrize("tmp", [-1, 0], ids=["sharedTmpBuffer", "framework"])
def test_two_steps_match_the_page_formula(mod, host, m, k, tmp):
    x, d1, d2, b = run(mod, host, m, k, tmp)
    xt = torch.from_numpy(x).double()
    w1, mean1, sum1, max1, _ = formula(xt[0], False)
    w2, mean2, sum2, max2, em = formula(xt[1], True, mean1, sum1, max1)
    for blk in b:
        assert (blk == blk[:, :1]).all()  # each output is its row's value over the block
    got = [torch.from_numpy(b[i, :, :1]).double() for i in range(7)]
    for g, want in zip(got, [mean1, sum1, max1, mean2, sum2, max2]):
        # float sums of srcK values (the mean's cancel): 1e-5 relative, 1e-4 absolute at this data's scale
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got[6].numpy(), em.numpy(), rtol=1e-3, atol=1e-4)  # expMax is half
    np.testing.assert_allclose(d1, w1.numpy(), rtol=2e-3, atol=1e-4)              # dst is half
    np.testing.assert_allclose(d2, w2.numpy(), rtol=2e-3, atol=1e-4)


@pytest.mark.parametrize("tmp", [-1, 0], ids=["sharedTmpBuffer", "framework"])
def test_a_zero_tiling_computes_nothing(mod, host, tmp):
    # rangeM = tailM = 0: the A2 code's row loops run zero times (v220/softmax_flashv3_impl.h:206-221, 315-330)
    _, d1, d2, b = run(mod, host, 8, 512, tmp, tl=[0] * 16)
    assert (d1 == -7).all() and (d2 == -7).all() and (b == -7).all()


def test_rows_follow_the_tiling(mod, host):
    # a tiling made for 8 rows (one round of 8) on a 16-row call: rows 0-7 computed, rows 8-15 untouched
    m, k = 16, 512
    row = host(m, k)[1]
    x, d1, d2, b = run(mod, host, m, k, tmp=8 * row, tiling_m=8)
    assert host(8, k, 8 * row)[2:5] == (8, 1, 0)
    w1, mean1, sum1, max1, _ = formula(torch.from_numpy(x[0, :8]).double(), False)
    np.testing.assert_allclose(d1[:8], w1.numpy(), rtol=2e-3, atol=1e-4)
    np.testing.assert_allclose(b[0, :8, :1], mean1.numpy(), rtol=1e-5, atol=1e-4)
    assert (d1[8:] == -7).all() and (d2[8:] == -7).all() and (b[:, 8:] == -7).all()
    # 16 rows in 16 rounds of one (the minimum buffer) and in 2 rounds of 8 agree
    one = run(mod, host, m, k, tmp=row)
    two = run(mod, host, m, k, tmp=8 * row)
    assert host(m, k, row)[2:5] == (1, 16, 0) and host(m, k, 8 * row)[2:5] == (8, 2, 0)
    for a, c in zip(one[1:], two[1:]):
        np.testing.assert_array_equal(a, c)


def test_tmp_below_what_the_tiling_needs_is_a_rule_violation(mod, host):
    # a buffer smaller than the tiling's rounds would be overrun on the device
    m, k = 16, 512
    mx, row = host(m, k)[:2]
    with pytest.raises(EmulatorError) as e:  # the tiling says 8 rows a round; the buffer holds 2 rows' minimum
        run(mod, host, m, k, tmp=2 * row, tl=host.tiling(m, k, 8 * row))
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "SoftmaxFlashV3") and "rows a round need" in e.value.detail


@pytest.mark.parametrize("tl_shape,what", [((8, 1024), "not one SoftMaxFlashV3TilingFunc makes"),
                                           ((16, 512), "tiling covers 16 rows")])
def test_a_tiling_for_another_shape_is_refused(mod, host, tl_shape, what):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 8, 512, tmp=20000, tl=host.tiling(*tl_shape, 20000))
    assert (e.value.rule, e.value.call) == ("api-argument", "SoftmaxFlashV3") and what in e.value.detail


def tree8(v):
    """BlockReduceSum's adjacent-pair tree over the last axis of 8 float32 values."""
    a = v[..., 0::2] + v[..., 1::2]
    a = a[..., 0::2] + a[..., 1::2]
    return a[..., 0] + a[..., 1]


@pytest.mark.parametrize("m,k", [(8, 512), (8, 1024), (16, 640)])
def test_mean_is_bitwise_the_a2_order(mod, host, m, k):
    # softmax_flashv3_impl.h:29-83 in float32: pair trees of each 8-column block of the first 512 columns, each
    # further 64 columns added lane by lane, pair trees 64 -> 8, x (1 / baseK), pair tree 8 -> 1, x (1 / 8)
    x, _, _, b = run(mod, host, m, k)
    v = x[0].astype(np.float32)
    part = tree8(v[:, :512].reshape(m, 64, 8))
    for i in range(k // 64 - 8):
        part = v[:, 512 + 64 * i:576 + 64 * i] + part
    local = tree8(part.reshape(m, 8, 8)) * np.float32(1.0 / (k // 8))
    mean = tree8(local) * np.float32(1 / 8)
    np.testing.assert_array_equal(b[0, :, 0], mean)


def test_tmp_below_cann_minimum_is_a_rule_violation(mod, host):
    need = host(8, 512)[1]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 8, 512, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "SoftmaxFlashV3")
    assert "GetSoftMaxFlashV3MaxMinTmpSize" in e.value.detail and str(need) in e.value.detail


@pytest.mark.parametrize("m,k,split,what", [(8, 448, 8, "srcK >= 512"), (4, 512, 8, "multiple of 8"),
                                            (8, 512, 4, "splitMeanCnt 4")])
def test_page_limits_are_api_argument_errors(mod, host, m, k, split, what):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, m, k, tmp=20000, split=split)
    assert (e.value.rule, e.value.call) == ("api-argument", "SoftmaxFlashV3") and what in e.value.detail


@pytest.mark.parametrize("ori", [(8, 0), (4, 512), (8, 448)])
def test_an_original_shape_other_than_src_is_an_api_argument_error(mod, host, ori):
    # CANN's debug check asserts srcM == oriSrcM and srcK == oriSrcK (softmax_flashv3_check_common.h:95-104)
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 8, 512, ori=ori)
    assert (e.value.rule, e.value.call) == ("api-argument", "SoftmaxFlashV3")
    assert f"oriSrcM {ori[0]} / oriSrcK {ori[1]}" in e.value.detail


def test_forms_not_on_a2_are_compile_errors_naming_them(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "lib/activation/softmaxflashv3.h"\nusing namespace AscendC;\n'
                   "void f() { LocalTensor<float> t; SoftMaxTiling s{}; SoftMaxParams p{};\n"
                   "  SoftmaxFlashV3<float, float>(t, t, t, t, t, t, t, t, t, s, p); }\n")
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0 and "SoftmaxFlashV3 takes T = half, U = float" in r.stderr
