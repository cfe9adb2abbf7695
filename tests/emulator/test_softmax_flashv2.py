"""SoftmaxFlashV2 (lib/activation/softmaxflashv2.h), against PyTorch: a first call without update over chunk 1,
then an update over chunk 2 carrying its max / sum, must give the max, the exp sum and the logsumexp of both chunks
together, and dst = exp(x - running max).

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口/SoftmaxFlashV2.md; the A2 computation
impl/adv_api/detail/activation/softmax/membase/common/softmax_flashv2_impl/ (float throughout; half cast in, each
output rounded once); the minimum buffer GetSoftMaxFlashV2MinTmpSize (host stand-in
tiling/activation/softmax_flashv2_tiling.h, compiled here). Precision: float within a few ulp of torch; half within
the half rounding of the outputs."""
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
  const uint32_t s1 = atoi(argv[3]), s2 = atoi(argv[4]), basic = atoi(argv[5]);
  optiling::SoftMaxTiling t;
  AscendC::SoftMaxFlashV2TilingFunc(shape, s1, s2, atoi(argv[6]), t, true, basic);
  printf("%u %u %u %u %u\n", AscendC::GetSoftMaxFlashV2MaxTmpSize(shape, s1, s2, true, basic),
         AscendC::GetSoftMaxFlashV2MinTmpSize(shape, s1, s2, true, basic), t.get_splitM(), t.get_rangeM(),
         t.get_tailM());
}
"""


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("softmax_flashv2", headers_digest()), "softmax_flashv2")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("fv_host"))

    def sizes(m, k, s1, s2, basic=0, work=4096, tiling=False):
        v = tuple(int(x) for x in subprocess.run([str(exe), *map(str, (m, k, s1, s2, basic, work))],
                                                  check=True, capture_output=True, text=True).stdout.split())
        return v if tiling else v[:2]
    return sizes


def test_host_sizes_match_cann_formulas(host):
    # A2 branch: half source (2 blk + k + 64) x 4, float (blk + 64) x 4, blk = 32 / sizeof(sum type)
    assert host(4, 64, 2, 2) == (4 * (32 + 64 + 64) * 4, (32 + 64 + 64) * 4)
    assert host(4, 64, 2, 4)[1] == (16 + 64 + 64) * 4 and host(4, 64, 4, 4)[1] == (8 + 64) * 4
    assert host(8, 64, 4, 4, basic=1)[1] == 8 * (8 + 64) * 4
    assert host(8, 1024, 2, 2, basic=1)[1] == 8 * (16 + 1024 + 128) * 4
    # SoftMaxFlashV2TilingFunc: 20 rows of 64 floats, a buffer for 10 rows of (8 + 64) floats: cut to 8, 2 rounds + 4
    assert host(20, 64, 4, 4, work=10 * 72 * 4, tiling=True)[2:] == (8, 2, 4)


def run(mod, host, m, k, mode, tmp=-1, ori_k=0, seed=0):
    rng = np.random.default_rng(seed + m * 3 + k)
    x = (rng.standard_normal((2, m, k)) * 3).astype(np.float32)
    x[1] += 1.5  # the second chunk's max is mostly larger, so the update rescales
    if mode:
        x = x.astype(np.float16).astype(np.float32)
    s1, s2 = (4, 4) if mode == 0 else (2, 2) if mode == 1 else (2, 4)
    mn = host(m, k, s1, s2)[1]
    case = np.concatenate([np.array([mode, mn if tmp < 0 else tmp, m, k, ori_k or k], np.uint32),
                           np.zeros(16, np.uint32)]).view(np.uint8)
    n = m * k
    out = np.zeros(2 * n + 40 * m, np.float32)
    mod.fv_call([x.ravel(), out, case.copy()], block_dim=1)
    blocks = out[2 * n:].reshape(5, m, 8)
    return x, out[:n].reshape(m, k), out[n:2 * n].reshape(m, k), blocks


@pytest.mark.parametrize("mode", [0, 1, 2], ids=["float", "half", "half-float"])
@pytest.mark.parametrize("m,k", [(1, 64), (4, 32), (5, 48), (3, 208), (2, 1024)])
def test_two_steps_match_torch_logsumexp(mod, host, m, k, mode):
    for tmp in (-1, 0):
        x, d1, d2, b = run(mod, host, m, k, mode, tmp)
        xt = torch.from_numpy(x).double()
        m1, m_all = xt[0].max(-1).values, xt.amax((0, 2))
        s1 = torch.exp(xt[0] - m1[:, None]).sum(-1)
        lse = torch.logsumexp(torch.cat([xt[0], xt[1]], -1), -1)
        got_m1, got_s1, got_s2, got_m2, got_em = b[1, :, 0], b[0, :, 0], b[2, :, 0], b[3, :, 0], b[4, :, 0]
        for blk in b:
            assert (blk == blk[:, :1]).all()  # broadcast over the block
        rt = 1e-5 if mode == 0 else 4e-3
        np.testing.assert_allclose(got_m1, m1.numpy(), rtol=rt)
        np.testing.assert_allclose(got_s1, s1.numpy(), rtol=rt)
        np.testing.assert_allclose(got_m2, m_all.numpy(), rtol=rt)
        np.testing.assert_allclose(got_em, torch.exp(m1 - m_all).numpy(), rtol=rt, atol=1e-6)
        np.testing.assert_allclose(np.log(got_s2) + got_m2, lse.numpy(), rtol=rt, atol=rt)
        np.testing.assert_allclose(d1, torch.exp(xt[0] - m1[:, None]).numpy(), rtol=rt, atol=1e-6 if mode == 0 else 1e-3)
        np.testing.assert_allclose(d2, torch.exp(xt[1] - m_all[:, None]).numpy(), rtol=rt,
                                   atol=1e-6 if mode == 0 else 1e-3)


def test_tmp_below_cann_minimum_is_a_rule_violation(mod, host):
    need = host(4, 64, 2, 2)[1]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 4, 64, 1, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "SoftmaxFlashV2")
    assert "GetSoftMaxFlashV2MinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_softmax_flashv2.cpp")


@pytest.mark.parametrize("tpl,name", [("float, false, false, false, true", "isDataFormatNZ"),
                                      ("float, false, false, false, false, kNoBrc", "SOFTMAX_OUTPUT_WITHOUT_BRC")])
def test_forms_not_implemented_are_compile_errors_naming_them(gxx, tmp_path, tpl, name):
    src = tmp_path / "k.cpp"
    src.write_text('#include "lib/activation/softmaxflashv2.h"\nusing namespace AscendC;\n'
                   "constexpr SoftmaxConfig kNoBrc = {true, 0, 0, SoftmaxMode::SOFTMAX_OUTPUT_WITHOUT_BRC};\n"
                   f"void f() {{ LocalTensor<float> t; SoftMaxTiling s{{}}; SoftmaxFlashV2<{tpl}>(t, t, t, t, t, t, t, s); }}\n")
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0 and "not supported on the emulator: SoftmaxFlashV2" in r.stderr and name in r.stderr
