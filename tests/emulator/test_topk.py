"""TopK (lib/sort/topk.h) against torch.topk / a stable argsort, on the tiling of the host stand-in.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/排序操作/TopK.md; the tiling:
python/opkit/cannproject/include/tiling/sort/topk_tiling.h (after impl/adv_api/tiling/sort/topk_tiling_impl.cpp, the
A2 branch), compiled and run here as a host program; the A2 computation impl/adv_api/detail/sort/topk/
topk_v220_impl.h (Sort32 + MrgSort: descending and stable, so ties come lowest index first; isLargest false sorts
-x the same way). Values are exact copies of the inputs (half: the half input)."""
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
  const int inner = atoi(argv[1]), outter = atoi(argv[2]), k = atoi(argv[3]);
  const uint32_t size = atoi(argv[4]), init = atoi(argv[5]), small = atoi(argv[6]), largest = atoi(argv[7]);
  auto* plat = platform_ascendc::PlatformAscendCManager::GetInstance();
  const auto mode = small ? AscendC::TopKMode::TOPK_NSMALL : AscendC::TopKMode::TOPK_NORMAL;
  uint32_t mx = 0, mn = 0;
  AscendC::GetTopKMaxMinTmpSize(*plat, inner, outter, false, init, mode, largest, size, mx, mn);
  AscendC::tiling::TopkTiling t;  // the overload filling the kernel-side struct
  const bool ok = AscendC::TopKTilingFunc(*plat, inner, outter, k, size, init, mode, largest, t);
  optiling::TopkTiling o;
  AscendC::TopKTilingFunc(*plat, inner, outter, k, size, init, mode, largest, o);
  uint32_t buf[28] = {}, buf2[28] = {};
  std::memcpy(buf, &t, sizeof t);
  o.SaveToBuffer(buf2, sizeof buf2);
  printf("%d %u %u %d", ok, mx, mn, std::memcmp(buf, buf2, sizeof buf) == 0);
  for (uint32_t v : buf) printf(" %u", v);
  printf("\n");
}
"""
FIELDS = ("tmpLocalSize allDataSize innerDataSize sortRepeat mrgSortRepeat kAlignFourBytes kAlignTwoBytes maskOffset "
          "maskVreducev2FourBytes maskVreducev2TwoBytes mrgSortSrc1offset mrgSortSrc2offset mrgSortSrc3offset "
          "mrgSortTwoQueueSrc1Offset mrgFourQueueTailPara1 mrgFourQueueTailPara2 srcIndexOffset copyUbToUbBlockCount "
          "topkMrgSrc1MaskSizeOffset topkNSmallSrcIndexOffset vreduceValMask0 vreduceValMask1 vreduceIdxMask0 "
          "vreduceIdxMask1").split()


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("topk", headers_digest()), "topk")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("tk_host"))

    def tiling(inner, outter, k, size, init=0, small=0, largest=1):
        r = subprocess.run([str(exe), *map(str, (inner, outter, k, size, init, small, largest))], check=True,
                           capture_output=True, text=True)
        v = [int(x) for x in r.stdout.split()]
        half_masks = [(w >> s) & 0xFFFF for w in v[4 + 24:4 + 28] for s in (0, 16)]
        return dict(ok=v[0], mx=v[1], mn=v[2], same=v[3], words=v[4:], f=dict(zip(FIELDS, v[4:4 + 24])),
                    half_masks=half_masks, stderr=r.stderr)
    return tiling


def test_host_tiling_matches_cann_formulas(host):
    # topk_tiling_impl.cpp:149-196 (A2 sizes) and :239-332 (A2 fields)
    r = host(64, 3, 5, 4)
    assert r["ok"] == 1 and r["same"] == 1 and r["mx"] == r["mn"] == 20 * 64
    f = r["f"]
    assert (f["tmpLocalSize"], f["srcIndexOffset"], f["kAlignFourBytes"], f["maskOffset"]) == (5 * 64, 4 * 64, 8, 24)
    assert (f["innerDataSize"], f["sortRepeat"], f["mrgSortRepeat"], f["copyUbToUbBlockCount"]) == (128, 2, 16, 16)
    assert host(64, 3, 5, 4, init=1)["mn"] == 16 * 64
    h = host(64, 3, 17, 2)
    assert (h["f"]["kAlignTwoBytes"], h["f"]["maskOffset"], h["f"]["tmpLocalSize"]) == (32, 96, 8 * 64 + 2 * 64)
    s = host(32, 4, 3, 4, small=1, largest=0)
    assert s["mn"] == 32 * 4 * 8 + 64 + 32 * 4 * 4 + 32 * 4 * 4
    assert s["f"]["vreduceValMask0"] == 0b010101 and s["f"]["vreduceIdxMask0"] == 0b101010
    assert s["f"]["topkMrgSrc1MaskSizeOffset"] == 32 * 4 * 2 + 32 * 4
    hs = host(32, 2, 6, 2, small=1)
    assert hs["half_masks"][:3] == [0x1111, 0x0011, 0]      # k = 6: four, then two, then none
    assert host(32, 2, 3, 4, small=1, init=1)["mn"] == 32 * 2 * 8 + 64
    assert "multiple of 32" in host(48, 2, 3, 4)["stderr"]
    assert "range of value k" in host(32, 2, 33, 4)["stderr"]


def run(mod, host, outter, inner, n, k, half=0, small=0, init=0, finish=None, largest=1, tmp=-1, x=None, idx=None,
        seed=0):
    rng = np.random.default_rng(seed + outter * 31 + inner + k)
    if x is None:
        x = rng.uniform(-100, 100, (outter, inner)).astype(np.float32)
        if half:
            x = x.astype(np.float16).astype(np.float32)
    if idx is None:
        idx = rng.integers(1000, 2000, (outter, inner)).astype(np.int32)
    fin = np.zeros(32, np.bool_)
    if finish is not None:
        fin[:outter] = finish
    r = host(inner, outter, k, 2 if half else 4, init, small, largest)
    kv = k if small else (-(-k // 8) * 8 if not half else -(-k // 16) * 16)
    ki = k if small else -(-k // 8) * 8
    case = np.concatenate([np.array([half, r["mn"] if tmp < 0 else tmp, init, int(finish is not None), small, largest,
                                     outter, inner, n, k, kv, ki], np.uint32), np.array(r["words"], np.uint32)])
    nva, nia = -(-(outter * kv) // 16) * 16, -(-(outter * ki) // 8) * 8
    out = np.zeros(nva + nia, np.float32)
    buf = np.concatenate([x.ravel().view(np.uint8), idx.ravel().view(np.uint8), fin.view(np.uint8)])
    mod.tk_call([buf, out, case.view(np.uint8).copy()], block_dim=1)
    vals = out[:outter * kv].reshape(outter, kv)
    inds = out[nva:nva + outter * ki].view(np.int32).reshape(outter, ki)
    return x, idx, vals, inds


def want(x, k, largest):
    """torch.topk's values; indexes of a stable sort (ties lowest index first), which is what the A2 code gives."""
    t = torch.from_numpy(x)
    order = torch.argsort(-t if largest else t, dim=-1, stable=True)[:, :k]
    v = torch.topk(t, k, dim=-1, largest=bool(largest), sorted=True).values
    assert torch.equal(torch.gather(t, -1, order), v)
    return v.numpy(), order.numpy()


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("outter,inner,k,largest", [(1, 32, 1, 1), (2, 32, 7, 0), (3, 64, 8, 1), (2, 128, 17, 0),
                                                    (1, 1024, 100, 1), (2, 4096, 3, 0)])
def test_topk_normal_matches_torch(mod, host, outter, inner, k, largest, half):
    for tmp in (-1, 0):
        x, _, vals, inds = run(mod, host, outter, inner, inner, k, half, largest=largest, tmp=tmp)
        v, o = want(x, k, largest)
        np.testing.assert_array_equal(vals[:, :k], v)
        np.testing.assert_array_equal(inds[:, :k], o)


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("outter,k,largest", [(1, 1, 1), (4, 5, 0), (3, 32, 1), (8, 17, 0)])
def test_topk_small_mode_packs_rows(mod, host, outter, k, largest, half):
    x, idx, vals, inds = run(mod, host, outter, 32, 32, k, half, small=1, largest=largest)
    v, o = want(x, k, largest)
    np.testing.assert_array_equal(vals, v)       # rows packed at [j x k]
    np.testing.assert_array_equal(inds, o)
    _, _, _, inds2 = run(mod, host, outter, 32, 32, k, half, small=1, init=1, largest=largest, idx=idx, x=x)
    np.testing.assert_array_equal(inds2, np.take_along_axis(idx, o, -1))   # small mode: per-row srcIndex


def test_ties_come_lowest_index_first(mod, host):
    x = np.array([[3, 1, 3, 2, 3, 1] * 5 + [0, 0], [5] * 32], np.float32)
    for largest in (1, 0):
        _, _, vals, inds = run(mod, host, 2, 32, 32, 6, largest=largest, x=x)
        v, o = want(x, 6, largest)
        np.testing.assert_array_equal(inds[:, :6], o)
        np.testing.assert_array_equal(vals[:, :6], v)
    assert list(inds[1, :6]) == [0, 1, 2, 3, 4, 5]


def test_init_index_normal_mode_reads_one_index_row(mod, host):
    """Normal mode with isInitIndex: srcIndexLocal[0, inner) serves every row (TmpLocalSort32 passes it unoffset)."""
    x, idx, vals, inds = run(mod, host, 3, 64, 64, 5, init=1)
    _, o = want(x, 5, 1)
    np.testing.assert_array_equal(inds[:, :5], idx[0][o])


def test_finish_rows_get_index_n(mod, host):
    x, _, vals, inds = run(mod, host, 3, 64, 50, 4, finish=[True, False, True])
    v, o = want(x, 4, 1)
    np.testing.assert_array_equal(vals[:, :4], v)
    assert (inds[0, :4] == 50).all() and (inds[2, :4] == 50).all()
    np.testing.assert_array_equal(inds[1, :4], o[1])


def test_smallest_negates_the_pad_lanes(mod, host):
    """isLargest false: CANN's final Muls by -1 spans tiling.maskOffset = outter x kAlign values, pad lanes too."""
    _, _, vals, inds = run(mod, host, 2, 32, 32, 3, largest=0)
    assert (vals[:, 3:8] == -7.0).all() and (inds[:, 3:8] == -5).all()
    _, _, vals, _ = run(mod, host, 2, 32, 32, 3, largest=1)
    assert (vals[:, 3:8] == 7.0).all()


def test_tmp_below_cann_minimum_is_a_rule_violation(mod, host):
    need = host(128, 2, 4, 4)["mn"]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 128, 128, 4, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "TopK")
    assert "GetTopKMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_topk.cpp")


@pytest.mark.parametrize("outter,inner,n,k,small,why", [(2, 64, 64, 65, 0, "k 65"), (2, 64, 70, 3, 0, "n 70"),
                                                        (2, 48, 48, 3, 0, "multiple of 32"),
                                                        (2, 64, 64, 3, 1, "exactly 32")])
def test_arguments_are_checked(mod, host, outter, inner, n, k, small, why):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, outter, inner, n, k, small=small)
    assert (e.value.rule, e.value.call) == ("api-argument", "TopK") and why in e.value.detail


def test_small_mode_with_finish_is_refused(mod, host):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 2, 32, 32, 3, small=1, finish=[True, False])
    assert (e.value.rule, e.value.call) == ("api-argument", "TopK") and "isHasfinish" in e.value.detail
