"""TransData (lib/transpose/transdata.h) against numpy layouts, and its host buffer query.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/张量变换/TransData.md, GetTransDataMaxMinTmpSize.md; the A2 data
movement impl/adv_api/detail/transpose/transdata/transdata_impl.h (NCDHW rows of h x w padded to 16 in UB, the
lanes beyond n / c written 0); the host query python/opkit/cannproject/include/tiling/transpose/transdata_tiling.h
(after impl/adv_api/tiling/transpose/transdata_tiling.cpp). A move of values: exact."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from opkit.errors import EmulatorError

HOST = r"""
#include <cstdio>
#include <cstdlib>
#include "tiling/tiling_api.h"
int main(int argc, char** argv) {
  const int mode = atoi(argv[1]);
  const int64_t n = atoi(argv[2]), c = atoi(argv[3]), d = atoi(argv[4]), h = atoi(argv[5]), w = atoi(argv[6]);
  const int64_t c1 = (c + 15) / 16, n1 = (n + 15) / 16;
  using DF = AscendC::DataFormat;
  const ge::Shape nc({n, c, d, h, w}), hd({n, d, c1, h, w, 16}), fz({d, c1, h, w, n1, 16, 16});
  AscendC::TransDataConfig cfg = mode == 1 ? AscendC::TransDataConfig{DF::NCDHW, DF::FRACTAL_Z_3D}
                                 : mode == 2 ? AscendC::TransDataConfig{DF::FRACTAL_Z_3D, DF::NCDHW}
                                 : mode == 3 ? AscendC::TransDataConfig{DF::NCDHW, DF::NDC1HWC0}
                                             : AscendC::TransDataConfig{DF::NDC1HWC0, DF::NCDHW};
  const ge::Shape& s = mode == 1 || mode == 3 ? nc : mode == 2 ? fz : hd;
  const ge::Shape& t = mode == 2 || mode == 4 ? nc : mode == 1 ? fz : hd;
  uint32_t mx = 0, mn = 0;
  const bool ok = AscendC::GetTransDataMaxMinTmpSize(*platform_ascendc::PlatformAscendCManager::GetInstance(), s, t,
                                                     ge::DT_FLOAT16, cfg, mx, mn);
  const bool refused = !AscendC::GetTransDataMaxMinTmpSize(*platform_ascendc::PlatformAscendCManager::GetInstance(),
                                                           s, s, ge::DT_FLOAT16, cfg, mx, mx);
  printf("%d %u %d\n", ok, mn, refused);
}
"""


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("transdata", headers_digest()), "transdata")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("td"))

    def size(mode, n, c, d, h, w):
        out = subprocess.run([str(exe), *map(str, (mode, n, c, d, h, w))], check=True, capture_output=True,
                             text=True).stdout.split()
        return int(out[0]), int(out[1]), int(out[2])
    return size


def test_host_size_matches_cann_formula(host):
    # transdata_tiling.cpp:150-175 for n = c = 16, d = 1, h x w = 15 (padded to 16)
    assert host(1, 16, 16, 1, 3, 5) == (1, max(16 * 16 * 2, 15 * 16 * 2) + 16 * 16 * 16 * 2, 1)
    assert host(2, 16, 16, 1, 3, 5)[1] == 16 * 16 * 16 * 2          # whole n and c: one buffer
    assert host(2, 20, 16, 1, 3, 5)[1] == 32 * 16 * 16 * 2 * 2      # partial n: twice
    assert host(3, 16, 18, 2, 3, 5)[1] == 2 * 16 * 2 + 2 * 2 * 16 * 16 * 2
    assert host(4, 16, 18, 2, 3, 5)[1] == 2 * 2 * 16 * 16 * 2 + 512


def layouts(n, c, d, h, w, seed):
    """The UB NCDHW tensor [n][c][d][padHw] (pad lanes filled with 123, as CANN's sample's DataCopyPad does), its
    valid part, and the NDC1HWC0 / FRACTAL_Z_3D tensors of the same data (lanes beyond n / c zero)."""
    hw, pad = h * w, -(-h * w // 16) * 16
    c1, n1 = -(-c // 16), -(-n // 16)
    v = np.random.default_rng(seed).integers(-1000, 1000, (n, c, d, hw)).astype(np.float16)
    ub = np.full((n, c, d, pad), 123, np.float16)
    ub[..., :hw] = v
    cp = np.zeros((n, c1 * 16, d, hw), np.float16)
    cp[:, :c] = v
    hd6 = cp.reshape(n, c1, 16, d, hw).transpose(0, 3, 1, 4, 2)             # [n][d][c1][hw][c0]
    np_ = np.zeros((n1 * 16, c1 * 16, d, hw), np.float16)
    np_[:n, :c] = v
    fz = np_.reshape(n1, 16, c1, 16, d, hw).transpose(4, 2, 5, 0, 1, 3)     # [d][c1][hw][n1][n0][c0]
    return ub, v, np.ascontiguousarray(hd6), np.ascontiguousarray(fz)


def run(mod, host, mode, n, c, d, h, w, tmp=None, seed=0, whole=False):
    ub, v, hd6, fz = layouts(n, c, d, h, w, seed + n + c + d + h + w)
    src = {1: ub, 2: fz, 3: ub, 4: hd6}[mode].ravel()
    ndst = {1: fz.size, 2: ub.size, 3: hd6.size, 4: ub.size}[mode]          # in UB: NCDHW rows padded
    nout = {1: fz.size, 2: v.size, 3: hd6.size, 4: v.size}[mode]            # out: the pad lanes left out
    nout = ndst if whole else nout
    need = host(mode, n, c, d, h, w)[1]
    case = np.array([mode, n, c, d, h, w, src.size, ndst, nout, need if tmp is None else tmp, whole], np.uint32)
    out = np.zeros(-(-nout // 16) * 16, np.float16)
    inp = np.zeros(-(-src.size // 16) * 16, np.float16)
    inp[:src.size] = src
    mod.td_call([inp, out, case.view(np.uint8).copy()], block_dim=1)
    return v, hd6, fz, out


@pytest.mark.parametrize("mode", [1, 2, 3, 4], ids=["to_fz3d", "from_fz3d", "to_6hd", "from_6hd"])
@pytest.mark.parametrize("n,c,d,h,w", [(16, 16, 1, 3, 5), (20, 18, 2, 2, 3), (5, 33, 1, 4, 4), (3, 7, 3, 1, 1)])
def test_transdata_matches_numpy(mod, host, mode, n, c, d, h, w):
    v, hd6, fz, out = run(mod, host, mode, n, c, d, h, w)
    want = {1: fz, 2: v, 3: hd6, 4: v}[mode].ravel()
    np.testing.assert_array_equal(out[:want.size], want)


def test_tmp_below_host_size_is_a_rule_violation(mod, host):
    need = host(1, 16, 16, 1, 3, 5)[1]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 1, 16, 16, 1, 3, 5, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "TransData") and str(need) in e.value.detail
    assert e.value.file.endswith("test_transdata.cpp")



def test_from_fz3d_pad_lanes_are_zero(mod, host):
    """FRACTAL_Z_3D -> NCDHW writes each row's pad lanes [h x w, padHw) as 0: the A2 code zeroes its work buffer
    before transposing it (transdata_impl.h:72-82), so whole padded rows copy out defined."""
    v, hd6, fz, out = run(mod, host, 2, 5, 7, 2, 3, 5, whole=True)
    want = np.zeros((5, 7, 2, 16), np.float16)
    want[..., :15] = v
    np.testing.assert_array_equal(out[:want.size], want.ravel())


def test_from_6hd_pad_lanes_are_undefined(mod, host):
    """NDC1HWC0 -> NCDHW fills the pad lanes from a scratch the A2 code never writes there (:445-457)."""
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 4, 5, 7, 2, 3, 5, whole=True)
    assert e.value.rule == "ub-uninitialized", e.value
