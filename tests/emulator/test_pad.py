"""Pad / UnPad (lib/pad/pad.h) against numpy / torch.nn.functional.pad, on the tiling of the host stand-in.

Pages: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/张量变换/Pad.md, UnPad.md, Pad-Tiling.md, UnPad-Tiling.md; the
tiling python/opkit/cannproject/include/tiling/pad/pad_tiling.h (after impl/adv_api/tiling/pad/pad_tiling_impl.cpp),
compiled and run here as a host program; the A2 computation impl/adv_api/detail/pad/pad/pad_v220_impl.h and
pad_base_impl.h. Pad and UnPad move values: exact."""
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
  const int64_t h = atoi(argv[1]), w = atoi(argv[2]), ow = atoi(argv[3]);
  const uint32_t size = atoi(argv[4]);
  const int stack = atoi(argv[5]);
  uint32_t mx = 0, mn = 0, umx = 7, umn = 7;
  AscendC::GetPadMaxMinTmpSize(ge::Shape({h, w}), size, mx, mn);
  AscendC::tiling::PadTiling p;
  AscendC::PadTilingFunc(ge::Shape({h, w}), ge::Shape({h, ow}), stack < 0 ? mn : uint32_t(stack), size, p);
  AscendC::GetUnPadMaxMinTmpSize(*platform_ascendc::PlatformAscendCManager::GetInstance(), ge::Shape({h, w}), size,
                                 umx, umn);
  AscendC::tiling::UnPadTiling u;
  AscendC::UnPadTilingFunc(ge::Shape({h, w}), 0, size, u);
  uint32_t pw[26], uw[8];
  std::memcpy(pw, &p, sizeof pw);
  std::memcpy(uw, &u, sizeof uw);
  printf("%u %u %u %u", mx, mn, umx, umn);
  for (uint32_t v : pw) printf(" %u", v);
  for (uint32_t v : uw) printf(" %u", v);
  printf("\n");
}
"""


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("pad", headers_digest()), "pad")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("pd"))

    def tiling(h, w, ow, size, stack=-1):
        out = subprocess.run([str(exe), *map(str, (h, w, ow, size, stack))], check=True, capture_output=True,
                             text=True).stdout.split()
        v = [int(x) for x in out]
        return dict(mx=v[0], mn=v[1], umx=v[2], umn=v[3], pad=v[4:30], unpad=v[30:38])
    return tiling


def test_host_tiling_matches_cann_formulas(host):
    r = host(16, 31, 31, 4)
    # pad_tiling_impl.cpp:79-89: min 16 x 8 x 2 x 4 = 1024; max covers all 496 elements (31 blocks of 16)
    assert (r["mn"], r["mx"]) == (1024, 31 * 16 * 8 * 2 * 4) and (r["umx"], r["umn"]) == (0, 0)
    p = r["pad"]
    assert p[:5] == [16, 31, 31, 31 - 8, 31 * 4 // 32]               # srcHeight .. blocksPerRow
    assert p[10:13] == [1, 16, 128]                                   # one block: 16 rows, tmp2 at 128 elements
    assert p[13:17] == [16, 1, 15, 16]                                # widthTiling, fractal, tail, tail aligned
    assert host(16, 31, 31, 4, stack=0)["pad"][10] == 0               # no buffer: the unaligned fields stay 0
    assert host(4, 64, 60, 2)["unpad"][:2] == [4, 64]


def run(mod, host, H, W, half, left=0, right=0, value=321, ori=None, unpad=False, tmp=-1, fields=None, seed=0):
    x = np.random.default_rng(seed + H * W).integers(-500, 500, (H, W)).astype(np.float32)
    r = host(H, W, ori if ori is not None else W, 2 if half else 4)
    wout = W - right if unpad else (W if (W * (2 if half else 4)) % 32 == 0 else W + left + right)
    tmpb = (r["mn"] if tmp < 0 else tmp)
    pad = fields if fields is not None else r["pad"]
    case = np.concatenate([np.array([half, int(unpad), tmpb, H, W, wout, left, right], np.uint32),
                           np.array([value], np.int32).view(np.uint32), np.array(pad, np.uint32),
                           np.array(r["unpad"], np.uint32)])
    ia, oa = -(-H * W // 16) * 16, -(-H * wout // 16) * 16
    out = np.zeros(oa, np.float32)
    xin = np.zeros(ia, np.float32)
    xin[:H * W] = x.ravel()
    mod.pd_call([xin, out, case.view(np.uint8).copy()], block_dim=1)
    return x, out[:H * wout].reshape(H, wout)


@pytest.mark.parametrize("half,H,W,left,right", [
    (0, 16, 31, 0, 1), (0, 8, 13, 2, 1), (0, 8, 5, 3, 0), (0, 2, 300, 1, 3), (0, 264, 7, 0, 1),
    (1, 16, 31, 0, 1), (1, 16, 13, 2, 1), (1, 16, 5, 3, 8), (1, 16, 300, 1, 3), (1, 16, 7, 0, 9)])
def test_unaligned_pad_matches_torch(mod, host, half, H, W, left, right):
    """Each row [padValue x leftPad, the row, padValue x rightPad], the padded width the 32-byte aligned one."""
    for tmp in (-1, 4096):
        x, y = run(mod, host, H, W, half, left, right, tmp=tmp)
        want = torch.nn.functional.pad(torch.from_numpy(x), (left, right), value=321.0).numpy()
        np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
def test_aligned_pad_fills_right_of_original_width(mod, host, half):
    W = 16 if half else 8
    x, y = run(mod, host, 3, 2 * W, half, 0, 1, value=5, ori=W)   # a whole redundant block: pad at its start
    want = x.copy()
    want[:, W] = 5
    np.testing.assert_array_equal(y, want)
    for H in (6, 300):                          # 300 rows: past one 255-repeat Duplicate
        x, y = run(mod, host, H, 2 * W, half, 0, 2, value=-7, ori=2 * W - 3)
        want = x.copy()
        want[:, 2 * W - 3:2 * W - 1] = -7      # [oriWidth, oriWidth + rightPad); the last column keeps src
        np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
def test_unpad_packs_rows(mod, host, half):
    W = 32 if half else 16
    x, y = run(mod, host, 5, W, half, 0, 3, unpad=True)
    np.testing.assert_array_equal(y, x[:, :W - 3])


def test_unpad_ignores_leftpad(mod, host, capfd):
    """CANN only warns about leftPad ("may not be effective", unpad_check_common.h:69-71); its A2 code ignores it."""
    x, y = run(mod, host, 5, 16, 0, 2, 3, unpad=True)
    np.testing.assert_array_equal(y, x[:, :13])
    assert "leftPad 2 is ignored" in capfd.readouterr().err


@pytest.mark.parametrize("kw,why", [
    (dict(H=8, W=13, left=2, right=2), "padded width must be exactly 16"),
    (dict(H=4, W=16, left=1, right=1, ori=14), "leftPad 0"),
    (dict(H=4, W=16, left=0, right=1, ori=16), "srcOriWidth 16"),
    (dict(H=4, W=24, left=0, right=1, ori=15), "srcOriWidth 15"),
    (dict(H=3, W=13, left=2, right=1), "not 32-byte aligned"),
    (dict(H=4, W=16, left=0, right=0, unpad=True), "rightPad 0"),
    (dict(H=4, W=16, left=0, right=8, unpad=True), "rightPad 8"),         # 8 x 4 bytes: not below 32
])
def test_pad_arguments_are_checked(mod, host, kw, why):
    H, W = kw.pop("H"), kw.pop("W")
    with pytest.raises(EmulatorError) as e:
        run(mod, host, H, W, 0, **kw)
    assert e.value.rule == "api-argument" and why in e.value.detail, e.value.detail


def test_unaligned_pad_tmp_below_minimum_is_a_rule_violation(mod, host):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 16, 31, 0, 0, 1, tmp=512)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "Pad") and "1024" in e.value.detail
    assert e.value.file.endswith("test_pad.cpp")


def test_unaligned_pad_needs_a_tiling_made_with_a_buffer(mod, host):
    f = host(16, 31, 31, 4, stack=0)["pad"]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 16, 31, 0, 0, 1, fields=f)
    assert (e.value.rule, e.value.call) == ("api-argument", "Pad") and "tmpBuffer1BlockNum" in e.value.detail
