"""WelfordFinalize (lib/normalization/welfordfinalize.h), against PyTorch: the partial means and M2 sums (sum of
squared deviations) of abLength groups of samples finalize to the mean and the population variance of all samples.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/归一化操作/WelfordFinalize.md; A2 code
impl/adv_api/detail/normalization/welfordfinalize/welfordfinalize_common_impl.h; the buffer minimum
GetWelfordFinalizeMaxMinTmpSize (host stand-in tiling/normalization/welfordfinalize_tiling.h, compiled here).
Precision: float in CANN's order; within 1e-5 relative of torch's float64 statistics."""
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
  AscendC::GetWelfordFinalizeMaxMinTmpSize(ge::Shape(std::vector<int64_t>{atoi(argv[1])}), 4, false, mx, mn);
  auto* p = platform_ascendc::PlatformAscendCManager::GetInstance("Ascend910B1");
  printf("%u %u %d\n", mx, mn, p != nullptr && p->GetCurNpuArch() == NpuArch::DAV_2201);
}
"""


PLATFORM = r"""
#include <cstdio>
#include "tiling/platform/platform_ascendc.h"
int main() {
  using M = platform_ascendc::PlatformAscendCManager;
  auto* before = M::GetInstance("Ascend310P3");  // nothing initialised: a SoC the emulator does not model
  auto* a2 = M::GetInstance();
  auto* after = M::GetInstance("Ascend310P3");   // initialised: CANN returns the instance it holds
  printf("%d %d\n", before == nullptr, after == a2 && a2 != nullptr);
}
"""


def test_platform_instance_once_made_is_returned_for_any_soc_name(tmp_path):
    # CANN's PlatformAscendCManager::GetInstance(soc) initialises only while its instance is null
    # (asc-devkit 82b89a15 include/utils/tiling/platform/platform_ascendc.h:164-185)
    from conftest import build_host_program
    exe = build_host_program(PLATFORM, tmp_path)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True)
    assert out.stdout.split() == ["1", "1"] and "Ascend310P3" in out.stderr


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("welfordfinalize", headers_digest()), "welfordfinalize")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("wf_host"))
    return lambda ab: tuple(int(v) for v in subprocess.run([str(exe), str(ab)], check=True, capture_output=True,
                                                            text=True).stdout.split())


def test_host_sizes_match_cann_and_the_platform_is_a2(host):
    assert host(64) == (1024, 1024, 1)                 # abLength <= 64: max = min = 4 x 64 floats
    assert host(256) == ((128 + 512) * 4, 1024, 1)     # else 2 x 64 + 2 x abLength floats


def run(mod, sizes, tmp, form, seed=0):
    """sizes: samples per group; form: 'equal' (abRec / rnLength), 'tail' (head / tail counts), 'counts'."""
    rng = np.random.default_rng(seed + len(sizes))
    groups = [rng.standard_normal(s) * 2 + 3 for s in sizes]
    mean = np.array([g.mean() if len(g) else 0.0 for g in groups], np.float32)
    m2 = np.array([((g - g.mean()) ** 2).sum() if len(g) else 0.0 for g in groups], np.float32)
    ab, total = len(sizes), sum(sizes)
    if form == "tail":
        head = sum(1 for s in sizes if s == sizes[0])
        para = [sizes[0], ab, sizes[0], head, sizes[-1], ab - head]
    else:
        para = [sizes[0], ab, sizes[0], ab, 0, 0]
    rec = np.array([1.0 / ab, 1.0 / total], np.float32)
    case = np.concatenate([np.array([form == "counts", tmp, *para], np.uint32), rec.view(np.uint32)]).view(np.uint8)
    counts = np.array(sizes, np.int32).view(np.float32)
    out = np.zeros(16, np.float32)
    inp = np.concatenate([mean, m2, counts])
    mod.wf_call([np.pad(inp, (0, -len(inp) % 8)), out, case.copy()], block_dim=1)
    data = torch.from_numpy(np.concatenate(groups)).double()
    return out, data.mean().item(), data.var(unbiased=False).item()


@pytest.mark.parametrize("tmp", [1024, 2048, 0], ids=["min-buffer", "two-rounds", "framework"])
@pytest.mark.parametrize("form,sizes", [("equal", [5] * 64), ("equal", [3] * 200), ("tail", [6] * 40 + [2] * 24),
                                        ("counts", [1, 0, 7, 3, 2, 9, 4, 4] * 20)])
def test_finalize_matches_torch_mean_and_variance(mod, form, sizes, tmp):
    out, mean, var = run(mod, sizes, tmp, form)
    np.testing.assert_allclose(out[0], mean, rtol=1e-5)
    np.testing.assert_allclose(out[8], var, rtol=1e-5)
    assert (out[1:8] == 0).all() and (out[9:] == 0).all()  # elements 1..7 are written 0


def test_a_negative_zero_mean_leaves_as_plus_zero(mod):
    # 64 group means -0 (one whole repeat, no zero padding lanes): their sum is -0 before the closing Adds(x, 0)
    # (welfordfinalize_common_impl.h:59-60), +0 after. (The emulator's round sum, a WholeReduceSum over the round
    # sums with +0 lanes, already ends at +0: this guards the closing step. The variance cannot be -0: M2 + d^2 n.)
    ab = 64
    case = np.concatenate([np.array([0, 1024, 4, ab, 4, ab, 0, 0], np.uint32),
                           np.array([1.0 / ab, 1.0 / (4 * ab)], np.float32).view(np.uint32)]).view(np.uint8)
    inp = np.concatenate([np.full(2 * ab, -0.0, np.float32), np.zeros(ab, np.float32)])
    out = np.zeros(16, np.float32)
    mod.wf_call([inp, out, case.copy()], block_dim=1)
    assert out[0] == 0 and out[8] == 0 and not np.signbit(out[[0, 8]]).any()


def test_tmp_below_cann_minimum_is_a_rule_violation(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, [4] * 16, 992, "equal")
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "WelfordFinalize")
    assert "GetWelfordFinalizeMaxMinTmpSize" in e.value.detail and "1024" in e.value.detail


def test_unaligned_ab_length_is_an_api_argument_error(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, [4] * 12, 1024, "equal")
    assert (e.value.rule, e.value.call) == ("api-argument", "WelfordFinalize") and "abLength 12" in e.value.detail


def test_the_ascend950_config_form_is_a_compile_error_naming_it(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "lib/normalization/welfordfinalize.h"\nusing namespace AscendC;\n'
                   "constexpr WelfordFinalizeConfig kCfg = {true};\n"
                   "void f() { LocalTensor<float> t; WelfordFinalizePara p{}; WelfordFinalize<false, kCfg>(t, t, t, t, p); }\n")
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0 and "not supported on the emulator: WelfordFinalize<isReuseSource, WelfordFinalizeConfig>" in r.stderr
