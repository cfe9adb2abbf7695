"""Sort32, MrgSort, GetMrgSortResult and the sort helpers (opkit_emu/sort.h) against numpy: sorted elements are
(score, index) pairs of 8 bytes, descending by score, equal scores in input order (Sort32.md, MrgSort.md,
高阶API/排序操作/*.md at mirror-cann/asc-devkit 82b89a15)."""
from __future__ import annotations

import numpy as np
import pytest

from opkit.errors import EmulatorError

RNG = np.random.default_rng(32)


def scores(dt, n):
    v = RNG.integers(-20, 20, n).astype(dt)   # small integers: many equal scores, so ties are exercised
    return v


def desc(v):
    return np.argsort(-v.astype(np.float64), kind="stable")


def pairs(y, dt):
    """(score, index) of each 8-byte element of a sorted list."""
    raw = y.view(np.uint8).reshape(-1, 8)
    sc = raw[:, :np.dtype(dt).itemsize].copy().view(dt).ravel()
    return sc, raw[:, 4:].copy().view(np.uint32).ravel(), raw


@pytest.mark.parametrize("kernel,dt", [("sort32_f32", np.float32), ("sort32_f16", np.float16)])
def test_sort32(emu, kernel, dt):
    x = scores(dt, 64)
    idx = np.arange(1000, 1064, dtype=np.uint32)
    y = np.zeros(64 * 8 // np.dtype(dt).itemsize, dt)
    getattr(emu("sort"), kernel)([x, idx, y, np.zeros(1, np.int32)])
    sc, ix, raw = pairs(y, dt)
    for r in range(2):
        order = desc(x[r * 32:(r + 1) * 32]) + r * 32   # each repeat sorted on its own
        np.testing.assert_array_equal(sc[r * 32:(r + 1) * 32], x[order])
        np.testing.assert_array_equal(ix[r * 32:(r + 1) * 32], idx[order])
    if dt == np.float16:
        assert not raw[:, 2:4].any()                     # the reserved bytes


def test_sort32_dst_alignment(emu):
    with pytest.raises(EmulatorError) as e:
        emu("sort").sort32_f32([np.zeros(64, np.float32), np.zeros(64, np.uint32), np.zeros(128, np.float32),
                                np.ones(1, np.int32)])
    assert e.value.rule == "ub-alignment" and "256-byte" in str(e.value)


def _queues(x):
    return [x[k * 32:(k + 1) * 32][desc(x[k * 32:(k + 1) * 32])] for k in range(4)], \
           [np.arange(128, dtype=np.uint32)[k * 32:(k + 1) * 32][desc(x[k * 32:(k + 1) * 32])] for k in range(4)]


def _merge(qs, qi, lens, suspend):
    heads, out_s, out_i = [0] * len(lens), [], []
    while True:
        best = -1
        for k, n in enumerate(lens):
            if heads[k] < n and (best < 0 or qs[k][heads[k]] > qs[best][heads[best]]):
                best = k
        if best < 0:
            break
        out_s.append(qs[best][heads[best]])
        out_i.append(qi[best][heads[best]])
        heads[best] += 1
        if suspend and heads[best] == lens[best]:
            break
    return np.array(out_s, np.float32), np.array(out_i, np.uint32), heads


@pytest.mark.parametrize("lens,valid,suspend,mode", [
    ([32, 32, 32, 32], 15, 0, 0), ([5, 17, 32, 1], 15, 0, 0), ([20, 9, 30, 0], 7, 0, 0), ([12, 31, 0, 0], 3, 0, 0),
    ([20, 3, 30, 10], 15, 1, 0), ([20, 3, 30, 10], 15, 1, 1), ([7, 8, 9, 10], 15, 0, 1)])
def test_mrg_sort(emu, lens, valid, suspend, mode):
    x = scores(np.float32, 128)
    y = np.zeros(260, np.uint32)
    emu("sort").mrg_sort([x, np.arange(128, dtype=np.uint32), np.array(lens + [valid, suspend, mode], np.int32), y])
    nq = {3: 2, 7: 3, 15: 4}[valid]
    qs, qi = _queues(x)
    want_s, want_i, heads = _merge(qs[:nq], qi[:nq], lens[:nq], suspend)
    sc, ix, _ = pairs(y[:256], np.float32)
    np.testing.assert_array_equal(sc[:len(want_s)], want_s)
    np.testing.assert_array_equal(ix[:len(want_i)], want_i)
    if suspend:
        assert list(y[256:256 + nq]) == heads


def test_mrg_sort_repeats(emu):
    x = scores(np.float32, 128)
    y = np.zeros(260, np.uint32)
    emu("sort").mrg_sort([x, np.arange(128, dtype=np.uint32), np.array([16] * 4 + [15, 0, 2], np.int32), y])
    sc, ix, _ = pairs(y[:256], np.float32)
    qs, qi = _queues(x)
    # each Sort32 block of 32 holds two queues of 16 (its first and second half): repeat r merges blocks 2r, 2r+1
    for r in range(2):
        q = [qs[2 * r][:16], qs[2 * r][16:], qs[2 * r + 1][:16], qs[2 * r + 1][16:]]
        i = [qi[2 * r][:16], qi[2 * r][16:], qi[2 * r + 1][:16], qi[2 * r + 1][16:]]
        ws, wi, _ = _merge(q, i, [16] * 4, False)
        np.testing.assert_array_equal(sc[r * 64:(r + 1) * 64], ws)
        np.testing.assert_array_equal(ix[r * 64:(r + 1) * 64], wi)


def test_mrg_sort_repeats_need_equal_queues(emu):
    with pytest.raises(EmulatorError) as e:
        emu("sort").mrg_sort([np.zeros(128, np.float32), np.arange(128, dtype=np.uint32),
                              np.array([16, 16, 16, 16, 7, 0, 2], np.int32), np.zeros(260, np.uint32)])
    assert e.value.rule == "api-argument"


@pytest.mark.parametrize("kernel,dt,per", [("full_sort_f32", np.float32, 2), ("full_sort_f16", np.float16, 4)])
def test_concat_full_sort_extract(emu, kernel, dt, per):
    x = scores(dt, 128)
    idx = np.arange(500, 628, dtype=np.uint32)
    y = np.zeros(128 * np.dtype(dt).itemsize + 130 * 4, np.uint8)
    getattr(emu("sort"), kernel)([x, idx, y])
    values = y[:128 * np.dtype(dt).itemsize].view(dt)
    rest = y[128 * np.dtype(dt).itemsize:].view(np.uint32)
    order = desc(x)
    np.testing.assert_array_equal(values, x[order])
    np.testing.assert_array_equal(rest[:128], idx[order])
    assert rest[128] == 128 * per and rest[129] == 5 * per   # GetSortLen / GetSortOffset count T elements


SORT_HOST = r"""
#include <cstdio>
#include <cstdlib>
#include "tiling/tiling_api.h"
int main(int argc, char** argv) {
  const uint32_t n = atoi(argv[1]), size = atoi(argv[2]);
  const auto& plat = *platform_ascendc::PlatformAscendCManager::GetInstance();
  uint32_t mx = 12345, mn = 678;
  AscendC::SortConfig config;
  config.type = AscendC::SortType::RADIX_SORT;
  AscendC::GetSortMaxMinTmpSize(AscendC::TensorShape({int64_t(n)}), ge::DT_FLOAT, ge::DT_UINT32, false, config, mx, mn);
  printf("%u %u %u %u %d\n", AscendC::GetConcatTmpSize(plat, n, size), AscendC::GetSortTmpSize(plat, n, size), mx, mn,
         platform_ascendc::PlatformAscendCManager::GetInstance("Ascend950PR_9589") == &plat);  // made: CANN keeps it
}
"""


def test_sort_host_queries_follow_cann_a2(tmp_path):
    """GetConcatTmpSize / GetSortTmpSize on A2 (sort_tiling_impl.cpp:120-146: 0, and n x 2 / x 4 elements of the
    type); GetSortMaxMinTmpSize, the SortConfig form's query, is refused on A2 by CANN's code (:48-52), which logs
    and leaves maxValue / minValue unwritten -- the stand-in does the same."""
    import subprocess

    from conftest import build_host_program
    exe = build_host_program(SORT_HOST, tmp_path)
    for n, size, sort_bytes in ((128, 4, 128 * 2 * 4), (64, 2, 64 * 4 * 2)):
        r = subprocess.run([str(exe), str(n), str(size)], capture_output=True, text=True, check=True)
        assert [int(v) for v in r.stdout.split()] == [0, sort_bytes, 12345, 678, 1]
        assert "Unsupported NpuArch for Sort API" in r.stderr and "sort_tiling_impl.cpp:48-52" in r.stderr


def test_sort_with_sortconfig_is_a_named_compile_error(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                   "void f(LocalTensor<float>& d, LocalTensor<float>& s, LocalTensor<uint8_t>& t) {\n"
                   "  Sort<float, false>(d, s, t, 64u);\n}\n")
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0
    assert "Sort with a SortConfig" in r.stderr and "Sort.md" in r.stderr and "Ascend 950 only" in r.stderr
