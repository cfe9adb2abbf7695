"""LogSoftMax (lib/activation/logsoftmax.h), against PyTorch.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/激活函数/LogSoftMax接口/LogSoftMax.md -- its formula ends in
np.log10, and the A2 code multiplies Ln by 0.4342944819 (impl/adv_api/detail/activation/softmax/membase/common/
logsoftmax_common_impl.h:31, :277-311): the result is log10(softmax(x)) = torch.log_softmax(x) / ln(10). Minimum
buffer from the host stand-in (tiling/activation/logsoftmax_tiling.h, after logsoftmax_tiling.cpp), compiled here.
Precision: float within a few ulp of torch; half: the float result rounded once."""
from __future__ import annotations

import math
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
  const int64_t m = atoi(argv[1]), k = atoi(argv[2]);
  const uint32_t size = atoi(argv[3]), stack = atoi(argv[4]);
  ge::Shape shape(std::vector<int64_t>{m, k});
  const uint32_t mx = AscendC::GetLogSoftMaxMaxTmpSize(shape, size, false);
  const uint32_t mn = AscendC::GetLogSoftMaxMinTmpSize(shape, size, false);
  optiling::LogSoftMaxTiling t;
  AscendC::LogSoftMaxTilingFunc(shape, size, stack ? stack : mn, t);
  uint32_t buf[16] = {};
  t.SaveToBuffer(buf, sizeof buf);
  printf("%u %u", mx, mn);
  for (uint32_t v : buf) printf(" %u", v);
  printf("\n");
}
"""


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("logsoftmax", headers_digest()), "logsoftmax")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("ls_host"))

    def tiling(m, k, size, stack=0):
        out = subprocess.run([str(exe), *map(str, (m, k, size, stack))], check=True, capture_output=True,
                             text=True).stdout.split()
        v = [int(x) for x in out]
        return v[0], v[1], v[2:]
    return tiling


def test_host_tiling_matches_cann_formulas(host):
    mx, mn, f = host(20, 64, 4, stack=(8 + 64 + 64) * 4 * 10)
    assert mn == (8 + 64 + 64) * 4 and mx == 20 * mn and host(4, 64, 2)[1] == (16 + 64 + 64) * 4
    assert (f[0], f[1], f[6], f[12], f[13]) == (20, 64, 8, 2, 4)


def run(mod, host, m, k, half, tmp=-1, ori_k=0, seed=0):
    x = np.random.default_rng(seed + m * 3 + k).standard_normal((m, k)).astype(np.float32) * 3
    if half:
        x = x.astype(np.float16).astype(np.float32)
    _, mn, f = host(m, k, 2 if half else 4)
    case = np.concatenate([np.array([half, mn if tmp < 0 else tmp, m, k, ori_k or k], np.uint32),
                           np.array(f, np.uint32)]).view(np.uint8)
    out = np.zeros(m * k + 16 * m, np.float32)
    mod.ls_call([x.ravel(), out, case.copy()], block_dim=1)
    return x, out[:m * k].reshape(m, k), out[m * k:m * k + 8 * m].reshape(m, 8), out[m * k + 8 * m:].reshape(m, 8)


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("m,k", [(1, 64), (4, 32), (5, 48), (3, 208), (2, 1024)])
def test_log10_softmax_matches_torch(mod, host, m, k, half):
    x, got, sm, mx = run(mod, host, m, k, half)
    xt = torch.from_numpy(x).double()
    want = (torch.log_softmax(xt, -1) / math.log(10)).numpy()
    np.testing.assert_allclose(mx, np.repeat(x.max(-1, keepdims=True), 8, 1), rtol=0, atol=0)
    s = torch.exp(xt - xt.max(-1, keepdim=True).values).sum(-1, keepdim=True).numpy()
    if half:
        np.testing.assert_allclose(got, want, rtol=4e-3, atol=4e-3)
        np.testing.assert_allclose(sm, np.repeat(s, 8, 1), rtol=2e-3)
    else:
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(sm, np.repeat(s, 8, 1), rtol=1e-5)


def test_padded_columns_are_computed_not_reduced(mod, host):
    x, got, _, _ = run(mod, host, 3, 48, 0, ori_k=40)
    xt = torch.from_numpy(x).double()
    m = xt[:, :40].max(-1, keepdim=True).values
    lse = torch.log(torch.exp(xt[:, :40] - m).sum(-1, keepdim=True)) + m
    np.testing.assert_allclose(got, ((xt - lse) / math.log(10)).numpy(), rtol=2e-5, atol=2e-6)


def test_tmp_below_cann_minimum_is_a_rule_violation(mod, host):
    need = host(4, 64, 2)[1]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 4, 64, 1, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "LogSoftMax")
    assert "GetLogSoftMaxMinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_logsoftmax.cpp")


def test_nz_format_is_a_compile_error_naming_it(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "lib/activation/logsoftmax.h"\nusing namespace AscendC;\n'
                   "void f() { LocalTensor<float> t; LocalTensor<uint8_t> u; LogSoftMaxTiling s{}; "
                   "LogSoftMax<float, false, true>(t, t, t, t, u, s); }\n")
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0 and "not supported on the emulator: LogSoftMax" in r.stderr
