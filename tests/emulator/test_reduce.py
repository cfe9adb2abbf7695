"""ReduceMax / ReduceMin / ReduceSum / ReduceMean / ReduceProd / ReduceAny / ReduceAll with a pattern (lib/reduce/reduce.h),
against PyTorch's amax / amin / sum / mean / prod / any / all: AR reduces each row
of [first, last] (rows padded to 32 bytes), RA each column.

Pages: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/归约操作/ReduceMax接口/ReduceMax接口.md (ReduceMin alike); A2
code impl/adv_api/detail/reduce/reduce_max/reduce_max_v220_impl.h, reduce_common_util_v220_impl.h; the buffer sizes
GetReduceMaxMaxMinTmpSize (host stand-in tiling/reduce/reduce_tiling.h, compiled here). Max / min do not round:
bitwise equal to torch on these data."""
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
  uint32_t mx = 0, mn = 0;
  decltype(&AscendC::GetReduceMaxMaxMinTmpSize) fs[] = {
      AscendC::GetReduceMaxMaxMinTmpSize, AscendC::GetReduceSumMaxMinTmpSize, AscendC::GetReduceMeanMaxMinTmpSize,
      AscendC::GetReduceProdMaxMinTmpSize, AscendC::GetReduceAnyMaxMinTmpSize, AscendC::GetReduceAllMaxMinTmpSize};
  const ge::DataType types[] = {ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_UINT8};
  fs[atoi(argv[6])](ge::Shape(std::vector<int64_t>{atoi(argv[1]), atoi(argv[2])}), types[atoi(argv[3])],
    atoi(argv[4]) ? AscendC::ReducePattern::RA : AscendC::ReducePattern::AR, true, atoi(argv[5]) != 0, mx, mn);
  printf("%u %u\n", mx, mn);
}
"""


FN = {0: 0, 1: 0, 2: 1, 3: 2, 4: 3, 5: 4, 6: 5}   # op -> the host size query


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("reduce", headers_digest()), "reduce")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("rd_host"))
    # fn: 0 ReduceMax's sizes (Min's alike), 1 Sum, 2 Mean, 3 Prod, 4 Any, 5 All; half: 0 float, 1 half, 2 uint8_t
    return lambda first, last, half=0, ra=0, reuse=0, sum=0, fn=None: int(subprocess.run(
        [str(exe), *map(str, (first, last, half, ra, reuse, sum if fn is None else fn))], check=True,
        capture_output=True, text=True).stdout.split()[1])


def test_host_sizes_match_cann(host):
    assert host(4, 8) == 0 and host(4, 20) == 4 * 32 and host(4, 64) == 4 * 256 and host(4, 200) == 4 * 256
    assert host(4, 20, half=1) == 4 * 32 and host(4, 128, half=1) == 4 * 256
    # RA: the largest power of two below first (8 -> 4, 5 -> 4, 1 -> 1) rows of align32(last x size)
    assert host(8, 20, ra=1) == 4 * 96 and host(5, 20, ra=1) == 4 * 96 and host(1, 20, ra=1) == 96
    assert host(8, 20, ra=1, reuse=1) == 0


def run(mod, host, op, ra, half, first, last, tmp=-1, reuse=0, inner_pad=1, x=None, seed=0):
    per = 16 if half else 8
    pad = -(-last // per) * per
    rng = np.random.default_rng(seed + first * 7 + last)
    if x is None:
        x = (rng.standard_normal((first, pad)) * 4).astype(np.float32)
        if half:
            x = x.astype(np.float16).astype(np.float32)
    need = host(first, last, half, ra, reuse=reuse, fn=FN[op])
    case = np.array([op, ra, half, need if tmp < 0 else tmp, reuse, inner_pad, first, last, pad], np.uint32)
    nd = last if ra else first
    out = np.zeros(-(-nd // 16) * 16, np.float32)
    mod.rd_call([x.ravel(), out, case.view(np.uint8).copy()], block_dim=1)
    xt = torch.from_numpy(x[:, :last])
    if op == 2:
        return out[:nd], xt.double().sum(dim=0 if ra else 1).numpy()
    if op == 3:
        return out[:nd], xt.double().mean(dim=0 if ra else 1).numpy()
    if op == 4:
        return out[:nd], xt.double().prod(dim=0 if ra else 1).numpy()
    if op in (5, 6):
        f = torch.any if op == 5 else torch.all
        return out[:nd], f(xt != 0, dim=0 if ra else 1).numpy().astype(np.float32)
    f = torch.amax if op == 0 else torch.amin
    return out[:nd], f(xt, dim=0 if ra else 1).numpy()


@pytest.mark.parametrize("op", [0, 1], ids=["max", "min"])
@pytest.mark.parametrize("ra", [0, 1], ids=["AR", "RA"])
@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("first,last", [(1, 5), (7, 8), (5, 37), (9, 64), (3, 300), (13, 130)])
def test_matches_torch(mod, host, op, ra, half, first, last):
    for tmp in (-1, 0):
        got, want = run(mod, host, op, ra, half, first, last, tmp)
        np.testing.assert_array_equal(got, want)


def test_sum_host_sizes_match_cann(host):
    # AR: 0 up to 64; else first x k x 4, k the power of two <= last (halved when equal and first > 1)
    assert host(4, 64, sum=1) == 0 and host(4, 100, sum=1) == 4 * 64 * 4 and host(4, 128, sum=1) == 4 * 64 * 4
    assert host(1, 128, sum=1) == 128 * 4
    assert host(8, 20, ra=1, sum=1) == 4 * 24 * 4 and host(5, 20, ra=1, sum=1) == 4 * 24 * 4


@pytest.mark.parametrize("ra", [0, 1], ids=["AR", "RA"])
@pytest.mark.parametrize("first,last", [(1, 5), (7, 8), (5, 37), (9, 64), (3, 65), (4, 128), (3, 300), (13, 130),
                                        (2, 1024)])
def test_sum_matches_torch(mod, host, ra, first, last):
    # float in CANN's A2 order; within float rounding of torch's float64 sum
    for tmp in (-1, 0):
        got, want = run(mod, host, 2, ra, 0, first, last, tmp)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-5)


@pytest.mark.parametrize("op", [0, 1, 2], ids=["max", "min", "sum"])
@pytest.mark.parametrize("first", [1, 4, 5])
def test_ra_results_of_negative_zeros_are_plus_zero(mod, host, op, first):
    # RA leaves through Adds(dst, x, 0) (reduce_common_util_v220_impl.h:511, 525): -0 + 0 = +0
    got, _ = run(mod, host, op, 1, 0, first, 8, x=np.full((first, 8), -0.0, np.float32))
    assert (got == 0).all() and not np.signbit(got).any()


def test_a_nan_lane_gives_nan(mod, host):
    # the emulator's NaN rule (element-wise Max and the level-0 reductions alike, opkit_emu/reduce.h
    # reduce_arg_loop): documented by CANN for later chips' reductions only, not checked on an A2 device
    x = np.arange(4 * 16, dtype=np.float32).reshape(4, 16)
    x[2, 5] = np.nan
    got, _ = run(mod, host, 0, 0, 0, 4, 16, x=x)
    assert np.isnan(got[2]) and not np.isnan(got[[0, 1, 3]]).any()


def test_reuse_source_gives_the_same_result(mod, host):
    got, want = run(mod, host, 0, 1, 0, 6, 24, reuse=1)  # no buffer needed (size 0); the source is not read again
    np.testing.assert_array_equal(got, want)


def test_tmp_below_cann_size_is_a_rule_violation(mod, host):
    need = host(5, 37)
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 0, 0, 0, 5, 37, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "ReduceMax")
    assert "GetReduceMaxMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail


def test_src_inner_pad_false_is_an_api_argument_error(mod, host):
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 1, 0, 0, 4, 16, inner_pad=0)
    assert (e.value.rule, e.value.call) == ("api-argument", "ReduceMin") and "srcInnerPad false" in e.value.detail


def test_mean_prod_any_all_host_sizes_match_cann(host):
    # reduce_tiling.cpp:121-153 (Mean as Sum), :181-212 (Prod), :155-179 (Any / All on uint8_t; float as Max)
    assert host(4, 100, fn=2) == host(4, 100, fn=1) == 4 * 64 * 4 and host(8, 20, ra=1, fn=2) == 4 * 24 * 4
    assert host(4, 100, fn=3) == (64 + 4 * 8) * 4 + 256 and host(4, 5, fn=3) == (8 + 4 * 8) * 4 + 256
    assert host(4, 100, fn=3, reuse=1) == 256 and host(5, 20, ra=1, fn=3) == 4 * 96
    assert host(4, 20, fn=4) == 4 * 32 and host(4, 20, half=2, fn=4) == 32 * 2 + 4 * 32
    assert host(4, 20, half=2, fn=5, reuse=1) == 32 * 2 + 4 * 32 and host(5, 40, half=2, ra=1, fn=5) == 4 * 64


@pytest.mark.parametrize("ra", [0, 1], ids=["AR", "RA"])
@pytest.mark.parametrize("first,last", [(1, 5), (7, 8), (5, 37), (9, 64), (3, 65), (4, 128), (3, 300), (13, 130)])
def test_mean_matches_torch(mod, host, ra, first, last):
    # ReduceSum's A2 order then x the float 1 / n; within float rounding of torch's float64 mean
    for tmp in (-1, 0):
        got, want = run(mod, host, 3, ra, 0, first, last, tmp)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("ra", [0, 1], ids=["AR", "RA"])
@pytest.mark.parametrize("first,last", [(1, 1), (2, 3), (4, 5), (7, 8), (5, 12), (3, 16), (6, 37), (9, 64), (2, 100)])
def test_prod_matches_torch(mod, host, ra, first, last):
    # values near 1 keep the products finite; A2's pairing order, within float rounding of torch's float64 prod
    rng = np.random.default_rng(first * 31 + last)
    pad = -(-last // 8) * 8
    x = rng.uniform(0.8, 1.25, (first, pad)).astype(np.float32) * rng.choice([-1, 1], (first, pad)).astype(np.float32)
    for tmp, reuse in ((-1, 0), (0, 0), (-1, 1)):
        got, want = run(mod, host, 4, ra, 0, first, last, tmp, reuse=reuse, x=x.copy())
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=0)


def test_prod_ar_order_is_the_devices_pairing(mod, host):
    # last = 5: ((x0 x x4) x x2) x (x1 x x3) (ReduceProdByLastAxis, reduce_prod_v220_impl.h:100-126: the lane
    # past splitK folded onto lane 0, then Brcb blocks halved). The input is one whose float product differs by
    # order -- asserted here, so the test tells the device order from left-to-right and from plain pairing
    f = np.float32
    x = np.zeros((1, 8), f)
    x[0, :5] = [0.911, 0.511, 1.469, 1.58, 1.753]
    a = x[0]
    device = f(f(f(a[0] * a[4]) * a[2]) * f(a[1] * a[3]))
    left_to_right = f(f(f(f(a[0] * a[1]) * a[2]) * a[3]) * a[4])
    pairs = f(f(f(a[0] * a[1]) * f(a[2] * a[3])) * a[4])
    assert len({device.view(np.uint32), left_to_right.view(np.uint32), pairs.view(np.uint32)}) == 3
    got, _ = run(mod, host, 4, 0, 0, 1, 5, x=x.copy())
    assert got[0].view(np.uint32) == device.view(np.uint32)


@pytest.mark.parametrize("op", [5, 6], ids=["any", "all"])
@pytest.mark.parametrize("ra", [0, 1], ids=["AR", "RA"])
@pytest.mark.parametrize("first,last", [(1, 5), (7, 8), (5, 37), (9, 64), (3, 300)])
def test_any_all_float_matches_torch(mod, host, op, ra, first, last):
    rng = np.random.default_rng(first * 13 + last)
    pad = -(-last // 8) * 8
    x = (rng.random((first, pad)) < (0.1 if op == 5 else 0.9)).astype(np.float32)
    for tmp in (-1, 0):
        got, want = run(mod, host, op, ra, 0, first, last, tmp, x=x.copy())
        np.testing.assert_array_equal(got, want)


def run_u8(mod, host, op, ra, first, last, x, tmp=-1, reuse=0, extra=0):
    pad = -(-last // 32) * 32
    need = host(first, last, 2, ra, reuse=reuse, fn=FN[op])
    case = np.array([op, ra, extra, need if tmp < 0 else tmp, reuse, 1, first, last, pad], np.uint32)
    nd = last if ra else first
    out = np.zeros(-(-(nd + extra) // 32) * 32, np.uint8)
    mod.rd_u8([x.ravel(), out, case.view(np.uint8).copy()], block_dim=1)
    return out[:nd + extra]


@pytest.mark.parametrize("op", [5, 6], ids=["any", "all"])
@pytest.mark.parametrize("ra", [0, 1], ids=["AR", "RA"])
@pytest.mark.parametrize("first,last", [(1, 5), (4, 32), (5, 37), (3, 100)])
def test_any_all_uint8_matches_torch(mod, host, op, ra, first, last):
    rng = np.random.default_rng(first * 17 + last)
    x = (rng.random((first, -(-last // 32) * 32)) < (0.1 if op == 5 else 0.9)).astype(np.uint8)
    f = torch.any if op == 5 else torch.all
    want = f(torch.from_numpy(x[:, :last]) != 0, dim=0 if ra else 1).numpy().astype(np.uint8)
    for tmp in (-1, 0):
        np.testing.assert_array_equal(run_u8(mod, host, op, ra, first, last, x, tmp), want)


@pytest.mark.parametrize("op", [5, 6], ids=["any", "all"])
def test_uint8_ra_odd_last_writes_the_padding_byte(mod, host, op):
    # A2 reduces uint8_t RA as int16 lanes, (last + 1) / 2 of them (reduce_any_v220_impl.h:61-67): dst[last] is the
    # bitwise Or / And of the rows' padding byte `last`
    first, last = 3, 5
    x = np.zeros((first, 32), np.uint8)
    x[:, :last] = [[1, 0, 1, 1, 0], [0, 0, 1, 1, 1], [1, 0, 1, 0, 0]]
    x[:, last] = [5, 7, 13]
    got = run_u8(mod, host, op, 1, first, last, x, extra=1)
    want = (x[:, :last] != 0).any(0) if op == 5 else (x[:, :last] != 0).all(0)
    np.testing.assert_array_equal(got[:last], want.astype(np.uint8))
    assert got[last] == (5 | 7 | 13 if op == 5 else 5 & 7 & 13)


def test_any_source_other_than_0_or_1_is_refused(mod, host):
    x = np.zeros((2, 8), np.float32)
    x[1, 3] = 2.0
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 5, 0, 0, 2, 8, x=x)
    assert (e.value.rule, e.value.call) == ("api-argument", "ReduceAny") and "only 0 or 1" in e.value.detail


def test_any_on_uninitialized_source_is_reported_as_such(mod, host):
    # the source holds 2.0 but is poisoned (a ReduceMax with isReuseSource left it undefined): the 0 / 1 check skips
    # it and the result is poison (copying it out fails), not an api-argument about the value
    x = np.zeros((2, 8), np.float32)
    x[1, 3] = 2.0
    case = np.array([5, 0, 0, 0, 0, 1, 2, 8, 8], np.uint32)
    with pytest.raises(EmulatorError) as e:
        mod.rd_any_poisoned([x.ravel(), np.zeros(8, np.float32), case.view(np.uint8).copy()], block_dim=1)
    assert e.value.rule == "ub-uninitialized"


def test_prod_tmp_below_cann_size_is_a_rule_violation(mod, host):
    need = host(4, 37, fn=3)
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 4, 0, 0, 4, 37, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "ReduceProd")
    assert "GetReduceProdMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail


@pytest.mark.parametrize("code,what", [
    ("LocalTensor<half> h; ReduceMean<half, Pattern::Reduce::AR>(h, h, shape, true);", "current api supports data type is float"),
    ("LocalTensor<half> h; ReduceProd<half, Pattern::Reduce::RA>(h, h, shape, true);", "current api supports data type is float"),
    ("LocalTensor<half> h; ReduceAny<half, Pattern::Reduce::AR>(h, h, shape, true);", "float/uint8_t"),
    ("LocalTensor<half> h; ReduceSum<half, Pattern::Reduce::AR>(h, h, shape, true);", "current api supports data type is float"),
    ("ReduceMax<float, Pattern::Reduce::ARA>(t, t, shape, true);", "it only supports AR/RA pattern"),
    ("LocalTensor<int32_t> i; ReduceMax<int32_t, Pattern::Reduce::AR>(i, i, shape, true);", "half/float")])
def test_forms_not_implemented_or_not_on_a2_are_compile_errors(gxx, tmp_path, code, what):
    src = tmp_path / "k.cpp"
    src.write_text('#include "lib/reduce/reduce.h"\nusing namespace AscendC;\n'
                   f"void f() {{ LocalTensor<float> t; const uint32_t shape[] = {{4, 16}}; {code} }}\n")
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0 and what in r.stderr
