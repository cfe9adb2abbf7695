"""SoftmaxFlash (lib/activation/softmaxflash.h, CANN's deprecated v1), against PyTorch: a first call without update
over chunk 1 is SoftMax; an update over chunk 2 carrying its max / sum gives the max and exp sum of both chunks,
dst2 = softmax over both chunks restricted to chunk 2, and expMax the factor that turns chunk 1's dst into the same.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口/SoftmaxFlash.md (its Python formula); the
A2 computation impl/adv_api/detail/activation/softmax/softmax_flash_base_impl/softmax_flash_nd_process_impl.h (float
throughout; half cast in, each output rounded once); the buffer sizes and tiling GetSoftMaxFlashMin/MaxTmpSize,
SoftMaxFlashTilingFunc (host stand-in tiling/activation/softmax_flash_tiling.h, compiled here). Precision: float
within a few ulp of torch; half within the half rounding of the outputs."""
from __future__ import annotations

import subprocess
from pathlib import Path

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
  const uint32_t size = atoi(argv[3]), update = atoi(argv[4]);
  optiling::SoftMaxTiling t;
  AscendC::SoftMaxFlashTilingFunc(shape, size, atoi(argv[5]), t, update);
  AscendC::tiling::SoftMaxTiling kt{};
  AscendC::SoftMaxFlashTilingFunc(shape, size, atoi(argv[5]), kt, update);
  printf("%u %u %u %u %u %u", AscendC::GetSoftMaxFlashMaxTmpSize(shape, size, update, false),
         AscendC::GetSoftMaxFlashMinTmpSize(shape, size, update, false), t.get_splitM(), t.get_rangeM(),
         t.get_tailM(), kt.splitM == t.get_splitM() && kt.reduceK == t.get_reduceK());
  uint32_t f[16] = {};
  static_assert(sizeof kt == sizeof f, "SoftMaxTiling is 16 words");
  __builtin_memcpy(f, &kt, sizeof f);
  for (uint32_t v : f) printf(" %u", v);  // the kernel-side tiling, for the kernel
  printf("\n");
}
"""


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("softmax_flash", headers_digest()), "softmax_flash")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("sf_host"))

    def sizes(m, k, size, update=1, work=4096, fields=False):
        v = tuple(int(x) for x in subprocess.run([str(exe), *map(str, (m, k, size, update, work))],
                                                  check=True, capture_output=True, text=True).stdout.split())
        return v[6:] if fields else v[:6]
    return sizes


def test_host_sizes_and_tiling_match_cann_formulas(host):
    # softmax_tiling.cpp:222-305, A2: floats per row blk + k + 64 (no update), 4 blk + 2 k (update); min one row
    assert host(4, 64, 4, update=0)[:2] == (4 * (8 + 64 + 64) * 4, (8 + 64 + 64) * 4)
    assert host(4, 64, 2, update=1)[:2] == (4 * (64 + 128) * 4, (64 + 128) * 4)
    assert host(4, 48, 4, update=1)[1] == (32 + 96) * 4
    # SoftMaxFlashTilingFunc: 20 rows of 64, a buffer for 10 rows of (32 + 128) floats: cut to 8, 2 rounds + 4;
    # the kernel-side overload fills the same
    assert host(20, 64, 4, update=1, work=10 * 160 * 4)[2:] == (8, 2, 4, 1)
    assert host(4, 20, 4)[:2] == (0, 0)          # 20 floats: the last axis is not 32-byte aligned


TILING = dict(srcM=0, srcK=1, splitM=6, splitK=7, splitSize=8, reduceM=9, reduceK=10, reduceSize=11, rangeM=12,
              tailM=13)   # AscendC::tiling::SoftMaxTiling's word order


def run(mod, host, m, k, mode, tmp=-1, ori_k=0, seed=0, tiling=None, perturb=0):
    rng = np.random.default_rng(seed + m * 3 + k)
    x = (rng.standard_normal((2, m, k)) * 3).astype(np.float32)
    x[1] += 1.5  # the second chunk's max is mostly larger, so the update rescales
    if mode:
        x = x.astype(np.float16).astype(np.float32)
    size = 4 if mode != 1 else 2   # one buffer for both calls: the larger of the two minima
    mn = max(host(m, k, size, update=0)[1], host(m, k, size, update=1)[1])
    case = np.concatenate([np.array([mode, mn if tmp < 0 else tmp, m, k, ori_k or k, perturb], np.uint32),
                           np.array(tiling if tiling is not None else [0] * 16, np.uint32)]).view(np.uint8)
    n = m * k
    out = np.zeros(2 * n + 40 * m, np.float32)
    mod.sf_call([x.ravel(), out, case.copy()], block_dim=1)
    blocks = out[2 * n:].reshape(5, m, 8)
    return x, out[:n].reshape(m, k), out[n:2 * n].reshape(m, k), blocks


@pytest.mark.parametrize("mode", [0, 1, 2], ids=["float", "half", "half-float"])
@pytest.mark.parametrize("m,k", [(1, 64), (4, 32), (5, 48), (3, 208), (2, 1024)])
def test_two_steps_match_torch_softmax(mod, host, m, k, mode):
    for tmp in (-1, 0):
        x, d1, d2, b = run(mod, host, m, k, mode, tmp)
        xt = torch.from_numpy(x).double()
        m1, m_all = xt[0].max(-1).values, xt.amax((0, 2))
        s1 = torch.exp(xt[0] - m1[:, None]).sum(-1)
        s_all = torch.exp(torch.cat([xt[0], xt[1]], -1) - m_all[:, None]).sum(-1)
        full = torch.softmax(torch.cat([xt[0], xt[1]], -1), -1).numpy()
        got_s1, got_m1, got_s2, got_m2, got_em = b[0, :, 0], b[1, :, 0], b[2, :, 0], b[3, :, 0], b[4, :, 0]
        for blk in b:
            assert (blk == blk[:, :1]).all()  # broadcast over the block
        rt, at = (1e-5, 1e-6) if mode == 0 else (4e-3, 1e-3)
        np.testing.assert_allclose(d1, torch.softmax(xt[0], -1).numpy(), rtol=rt, atol=at)   # no update: SoftMax
        np.testing.assert_allclose(got_m1, m1.numpy(), rtol=rt)
        np.testing.assert_allclose(got_s1, s1.numpy(), rtol=rt)
        np.testing.assert_allclose(got_m2, m_all.numpy(), rtol=rt)
        np.testing.assert_allclose(got_s2, s_all.numpy(), rtol=rt)
        np.testing.assert_allclose(d2, full[:, k:], rtol=rt, atol=at)
        np.testing.assert_allclose(d1 * got_em[:, None], full[:, :k], rtol=2 * rt, atol=at)   # expMax rescales dst1


def test_padded_columns_are_not_reduced(mod, host):
    """oriSrcK < srcK: max and sum over the first oriSrcK columns only (the page's SoftMaxShapeInfo)."""
    x, d1, d2, b = run(mod, host, 3, 64, 0, ori_k=40)
    xt = torch.from_numpy(x[:, :, :40]).double()
    full = torch.softmax(torch.cat([xt[0], xt[1]], -1), -1).numpy()
    np.testing.assert_allclose(d2[:, :40], full[:, 40:], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b[3, :, 0], xt.amax((0, 2)).numpy(), rtol=1e-6)


def test_tmp_below_cann_minimum_is_a_rule_violation(mod, host):
    # half with float sums (all-half's update does not use the buffer: test_all_half_update_...)
    need = max(host(4, 64, 4, update=0)[1], host(4, 64, 4, update=1)[1])
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 4, 64, 2, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "SoftmaxFlash")
    assert "GetSoftMaxFlashMinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_softmax_flash.cpp")


def test_ori_k_beyond_k_is_refused(mod, host):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 32, 0, ori_k=40)
    assert (e.value.rule, e.value.call) == ("api-argument", "SoftmaxFlash") and "oriSrcK" in e.value.detail


def test_a_zero_tiling_and_one_for_the_shape_are_both_accepted_with_the_same_rows(mod, host):
    """The tiling above is all zero: its srcM / srcK differ from the shape, so A2 re-tiles on the work buffer it has
    (softmax_common_flash.h:50-86, 109-145). One SoftMaxFlashTilingFunc made for the shape (20 rows, 8 a round, a
    tail of 4) is used as given. Neither is refused and the rows are the same (the emulator computes row by row
    whatever the rounds: this shows acceptance, not that the rounds are followed)."""
    m, k = 20, 64
    mn = max(host(m, k, 4, update=0)[1], host(m, k, 4, update=1)[1])
    f = host(m, k, 4, update=1, work=10 * 160 * 4, fields=True)
    assert (f[TILING["splitM"]], f[TILING["rangeM"]], f[TILING["tailM"]]) == (8, 2, 4)
    layout = (2 * f[TILING["splitM"]] * k + 4 * f[TILING["splitM"]] * 8) * 4
    base = run(mod, host, m, k, 0, tmp=max(mn, layout))
    got = run(mod, host, m, k, 0, tmp=max(mn, layout), tiling=f)
    for a, b in zip(base, got):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("field,value", [("splitK", 32), ("reduceK", 16), ("rangeM", 3)])
def test_a_tiling_for_the_shape_not_of_cann_form_is_refused(mod, host, field, value):
    m, k = 20, 64
    f = list(host(m, k, 4, update=1, work=10 * 160 * 4, fields=True))
    f[TILING[field]] = value
    with pytest.raises(EmulatorError) as e:
        run(mod, host, m, k, 0, tmp=8192, tiling=f)
    assert (e.value.rule, e.value.call) == ("api-argument", "SoftmaxFlash")
    assert "SoftMaxFlashTilingFunc" in e.value.detail and f"{field} {value}" in e.value.detail


def test_a_tiling_for_a_bigger_buffer_than_given_is_a_rule_violation(mod, host):
    # made for GetSoftMaxFlashMaxTmpSize (all 4 rows a round), run on the minimum: the update's work buffer
    # (2 splitSize + 4 reduceSize floats, softmax_flash_nd_process_impl.h:173-181) overruns it on the device
    m, k = 4, 64
    mx = host(m, k, 4, update=1)[0]
    f = host(m, k, 4, update=1, work=mx, fields=True)
    assert f[TILING["splitM"]] == 4
    with pytest.raises(EmulatorError) as e:
        run(mod, host, m, k, 0, tiling=f)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "SoftmaxFlash")
    assert "2 splitSize + 4 reduceSize" in e.value.detail and str((2 * 4 * 64 + 4 * 4 * 8) * 4) in e.value.detail


@pytest.mark.parametrize("mode", [0, 1, 2], ids=["float", "half", "half-float"])
def test_all_half_update_does_not_use_shared_tmp_buffer(mod, host, mode):
    """All-half with isUpdate runs on the stack buffer (softmax_flash_nd_process_impl.h:296-303): on a tiling made for
    the shape, a sharedTmpBuffer enough for the no-update call only is no fault there; the other forms lay the
    update's work out in it and are refused."""
    m, k = 4, 64
    size = 2 if mode == 1 else 4
    first = host(m, k, size, update=0)[1]
    assert first < host(m, k, size, update=1)[1]
    f = host(m, k, size, update=1, fields=True)
    assert f[TILING["splitM"]] == 4
    if mode == 1:
        x, d1, d2, b = run(mod, host, m, k, mode, tmp=first, tiling=f)
        full = torch.softmax(torch.from_numpy(np.concatenate([x[0], x[1]], -1)).double(), -1).numpy()
        np.testing.assert_allclose(d2, full[:, k:], rtol=4e-3, atol=1e-3)
        return
    with pytest.raises(EmulatorError) as e:
        run(mod, host, m, k, mode, tmp=first, tiling=f)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "SoftmaxFlash")
    assert "2 splitSize + 4 reduceSize" in e.value.detail


@pytest.mark.parametrize("mode", [0, 1], ids=["float", "half"])
def test_a_retiling_buffer_below_one_row_is_a_rule_violation(mod, host, mode):
    """A zero tiling is re-tiled on the device from the sharedTmpBuffer (softmax_tiling_func.h:72-111): W floats give
    W / (2 blk + 2 srcK) rows a round without update. GetSoftMaxFlashMinTmpSize's no-update minimum (blk + srcK + 64
    floats) is below that for srcK 64, so the first call already gets 0 rows: CANN's ASCENDC_ASSERT fires."""
    m, k = 4, 64
    first = host(m, k, 2 if mode == 1 else 4, update=0)[1]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, m, k, mode, tmp=first)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "SoftmaxFlash")
    row = (16 if mode == 1 else 8) * 2 + 2 * k
    assert "re-tiles on the device" in e.value.detail and f"below one row's {row}" in e.value.detail
    assert e.value.file.endswith("test_softmax_flash.cpp")   # the first call, the one without update
    assert "SF:first" in Path(__file__).with_suffix(".cpp").read_text().splitlines()[e.value.line - 1]


def test_in_max_lanes_that_differ_are_refused(mod, host):
    """A2 computes the update lane by lane over each row's inMax / inSum block (softmax_flash_nd_process_impl.h
    :207-228); the page says a block holds one value. Row 0's lane 3 changed: refused, not lane 0 taken."""
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 4, 64, 0, perturb=1)
    assert (e.value.rule, e.value.call) == ("api-argument", "SoftmaxFlash")
    assert "inMaxTensor row 0: lane 3" in e.value.detail


def test_an_uninitialized_in_max_lane_poisons_its_row(mod, host):
    """Row 0's inMax lane 3 never written (lane 0 is): the row's outputs are poison, so copying them out fails."""
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 4, 64, 0, perturb=2)
    assert e.value.rule == "ub-uninitialized"
