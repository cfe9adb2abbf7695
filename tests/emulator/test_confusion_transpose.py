"""The advanced Transpose's scenes 1 and 2 (lib/transpose/confusion_transpose.h) against numpy / torch permutes, on
the tiling of the host stand-in.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/张量变换/Transpose-96.md, Transpose-Tiling.md; the tiling
python/opkit/cannproject/include/tiling/transpose/confusion_transpose_tiling.h (after
impl/adv_api/tiling/transpose/confusion_transpose_tiling_impl.cpp), run here as a host program; the A2 data movement
impl/adv_api/detail/transpose/confusion_transpose/confusion_transpose_base_0213.h. A move of values: exact."""
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
  const int64_t b = atoi(argv[1]), a1 = atoi(argv[2]), a2 = atoi(argv[3]), a3 = atoi(argv[4]);
  const uint32_t size = atoi(argv[5]), type = atoi(argv[6]);
  const int stack = atoi(argv[7]);
  uint32_t mx = 0, mn = 0;
  const ge::Shape shape = type == 7 ? ge::Shape({a2, a3}) : ge::Shape({b, a1, a2, a3});  // scene 7: [H, W]
  AscendC::GetTransposeMaxMinTmpSize(shape, size, type, mx, mn);
  AscendC::tiling::ConfusionTransposeTiling t;
  AscendC::GetTransposeTilingInfo(shape, stack < 0 ? mn : uint32_t(stack), size, type, t);
  uint32_t w[18];
  std::memcpy(w, &t, sizeof w);
  printf("%u %u", mx, mn);
  for (uint32_t v : w) printf(" %u", v);
  printf("\n");
}
"""
NZ2ND, NZ2NZ, ND2ND_ONLY = 1, 2, 7


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("confusion_transpose", headers_digest()), "confusion_transpose")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("ct"))

    def tiling(b, a1, a2, a3, size, type_=NZ2ND, stack=-1):
        r = subprocess.run([str(exe), *map(str, (b, a1, a2, a3, size, type_, stack))], check=True,
                           capture_output=True, text=True)
        v = [int(x) for x in r.stdout.split()]
        return dict(mx=v[0], mn=v[1], p=v[2:], stderr=r.stderr)
    return tiling


def al(x):
    return -(-x // 16) * 16


def test_host_tiling_matches_cann_formulas(host):
    r = host(1, 2, 64, 32, 2)
    # confusion_transpose_tiling_impl.cpp:58-100, :320-328
    assert (r["mx"], r["mn"]) == (64 * 16 * 2, 256 * 2)
    p = r["p"]
    assert p[:7] == [16, 1, 2, 32, 64, 2, 256] and p[7:11] == [16, 1024, 4, 0]
    assert p[11:16] == [64 * 32, 2 * 64 * 32, 2 * 32, 2 * 16, 16 * 4 * 2 * 32]
    assert host(2, 3, 20, 40, 4)["p"][3:5] == [48, 32]
    assert "not emulated" not in r["stderr"]
    assert "scenes 1, 2 and 7" in host(1, 2, 64, 32, 2, type_=4)["stderr"]
    assert host(1, 1, 32, 48, 2, type_=ND2ND_ONLY)["p"][:6] == [16, 32, 48, 2, 32, 3]   # :229-249


def nz_input(b, a1, a2, a3, seed):
    """src [B, A1, A3/16, A2/16, 16, 16]: per (b, a1) the NZ layout of an [alignA2, alignA3] matrix."""
    m = np.random.default_rng(seed).integers(-1000, 1000, (b, a1, al(a2), al(a3))).astype(np.float32)
    nz = m.reshape(b, a1, al(a2), al(a3) // 16, 16).transpose(0, 1, 3, 2, 4)
    return m, np.ascontiguousarray(nz).ravel()


def run(mod, host, b, a1, a2, a3, half, type_=NZ2ND, tmp=-1, fields=None, seed=0):
    m, src = nz_input(b, a1, a2, a3, seed + b + a1 + a2 + a3)
    r = host(b, a1, a2, a3, 2 if half else 4, type_)
    p = fields if fields is not None else r["p"]
    n = src.size
    case = np.concatenate([np.array([half, type_, r["mn"] if tmp < 0 else tmp, n], np.uint32),
                           np.array(p, np.uint32)])
    out = np.zeros(n, np.float32)
    mod.ct_call([src, out, case.view(np.uint8).copy()], block_dim=1)
    return m, out


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("b,a1,a2,a3", [(1, 2, 64, 32), (2, 3, 20, 40), (1, 1, 16, 16), (2, 5, 40, 17)])
def test_nz2nd_0213_matches_torch(mod, host, b, a1, a2, a3, half):
    for tmp in (-1, 0, 8192):
        m, out = run(mod, host, b, a1, a2, a3, half, NZ2ND, tmp)
        want = torch.from_numpy(m).permute(0, 2, 1, 3).contiguous().numpy()   # [B, alignA2, A1, alignA3]
        np.testing.assert_array_equal(out.reshape(want.shape), want)


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("b,a1,a2,a3", [(1, 2, 64, 32), (2, 3, 20, 40)])
def test_nz2nz_0213_matches_torch(mod, host, b, a1, a2, a3, half):
    m, out = run(mod, host, b, a1, a2, a3, half, NZ2NZ)
    nd = torch.from_numpy(m).permute(0, 2, 1, 3).numpy()                    # [B, alignA2, A1, alignA3]
    want = nd.reshape(b, al(a2), a1, al(a3) // 16, 16).transpose(0, 1, 3, 2, 4)   # per (b, a2): NZ of [A1, A3]
    np.testing.assert_array_equal(out, np.ascontiguousarray(want).ravel())


def test_tmp_below_the_tiling_is_a_rule_violation(mod, host):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 1, 2, 64, 32, 1, NZ2ND, tmp=256)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "Transpose") and "param6 256" in e.value.detail
    assert e.value.file.endswith("test_confusion_transpose.cpp")


def test_other_types_are_not_emulated(mod, host):
    p = host(1, 2, 64, 32, 2)["p"]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 1, 2, 64, 32, 1, type_=4, fields=p)
    assert (e.value.rule, e.value.call) == ("not-emulated", "Transpose") and "TransposeType 4" in e.value.detail


def test_a_tiling_for_another_type_size_is_refused(mod, host):
    p = host(1, 2, 64, 32, 4)["p"]        # a float tiling given to a half call
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 1, 2, 64, 32, 1, fields=p)
    assert (e.value.rule, e.value.call) == ("api-argument", "Transpose") and "param0 8" in e.value.detail


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("H,W", [(16, 16), (32, 48), (48, 16)])
def test_nd2nd_only_is_a_2d_transpose(mod, host, H, W, half):
    m = np.random.default_rng(H * W).integers(-1000, 1000, (H, W)).astype(np.float32)
    r = host(1, 1, H, W, 2 if half else 4, ND2ND_ONLY)
    for tmp in (0, 64):
        case = np.concatenate([np.array([half, ND2ND_ONLY, tmp, H * W], np.uint32), np.array(r["p"], np.uint32)])
        out = np.zeros(H * W, np.float32)
        mod.ct_call([m.ravel(), out, case.view(np.uint8).copy()], block_dim=1)
        np.testing.assert_array_equal(out.reshape(W, H), m.T)


def test_nd2nd_only_needs_multiples_of_16(mod, host):
    r = host(1, 1, 24, 16, 4, ND2ND_ONLY)
    case = np.concatenate([np.array([0, ND2ND_ONLY, 0, 24 * 16], np.uint32), np.array(r["p"], np.uint32)])
    with pytest.raises(EmulatorError) as e:
        mod.ct_call([np.zeros(24 * 16, np.float32), np.zeros(24 * 16, np.float32), case.view(np.uint8).copy()],
                    block_dim=1)
    assert (e.value.rule, e.value.call) == ("api-argument", "Transpose") and "multiples of 16" in e.value.detail
