"""SoftmaxGrad / SoftmaxGradFront (lib/activation/softmaxgrad.h), against PyTorch's softmax backward.

Pages: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/激活函数/SoftMax接口/SoftmaxGrad.md, SoftmaxGradFront.md;
the A2 computation impl/adv_api/detail/activation/softmax/membase/common/softmax_grad_nd_impl.h (float throughout);
the tiling and its minimum from the host stand-in (python/opkit/cannproject/include/tiling/activation/
softmax_grad_tiling.h, after impl/adv_api/tiling/activation/softmax_tiling.cpp), compiled and run here.
Precision: float within a few ulp of torch (the row sum's order differs); half: the float result rounded once."""
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
  const int64_t m = atoi(argv[1]), k = atoi(argv[2]);
  const uint32_t size = atoi(argv[3]), front = atoi(argv[4]), stack = atoi(argv[5]);
  ge::Shape shape(std::vector<int64_t>{m, k});
  const uint32_t mx = AscendC::GetSoftMaxGradMaxTmpSize(shape, size, front, false);
  const uint32_t mn = AscendC::GetSoftMaxGradMinTmpSize(shape, size, front, false);
  optiling::SoftMaxTiling t;
  AscendC::SoftMaxGradTilingFunc(shape, size, stack ? stack : mn, t, front);
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
    return load(compile_pybind("softmaxgrad", headers_digest()), "softmaxgrad")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("sg_host"))

    def tiling(m, k, size, front, stack=0):
        out = subprocess.run([str(exe), *map(str, (m, k, size, front, stack))], check=True,
                             capture_output=True, text=True).stdout.split()
        v = [int(x) for x in out]
        return v[0], v[1], v[2:]
    return tiling


def test_host_tiling_matches_cann_formulas(host):
    # softmax_tiling.cpp:403-443 (A2): half (2 x 16 + 3k + 64) x 4, float (8 + k + 64) x 4 front, (16 + k + 64) x 4
    assert host(4, 64, 2, 0)[1] == (32 + 192 + 64) * 4
    assert host(4, 64, 4, 1)[1] == (8 + 64 + 64) * 4 and host(4, 64, 4, 0)[1] == (16 + 64 + 64) * 4
    mx, mn, f = host(20, 64, 4, 0, stack=(16 + 64 + 64) * 4 * 10)
    assert mx == 20 * mn
    # 10 rows fit: cut to 8 (a basic tile), 2 rounds and a tail of 4
    assert (f[0], f[1], f[6], f[12], f[13]) == (20, 64, 8, 2, 4)


def run(mod, host, m, k, half, mode, tmp=-1, ori_k=0, pad=0.0, seed=0):
    rng = np.random.default_rng(seed + m * 3 + k)
    x = torch.from_numpy(rng.standard_normal((m, k)).astype(np.float32))
    y = torch.softmax(x[:, :ori_k or k], -1)
    src = np.zeros((m, k), np.float32)
    src[:, :ori_k or k] = y.numpy()
    src[:, ori_k or k:] = pad
    grad = rng.standard_normal((m, k)).astype(np.float32)
    if half:
        src, grad = src.astype(np.float16).astype(np.float32), grad.astype(np.float16).astype(np.float32)
    _, mn, f = host(m, k, 2 if half else 4, int(mode > 0))
    case = np.concatenate([np.array([half, mn if tmp < 0 else tmp, mode, m, k, ori_k or k], np.uint32),
                           np.array(f, np.uint32)]).view(np.uint8)
    out = np.zeros(m * k, np.float32)
    mod.sg_call([np.concatenate([src.ravel(), grad.ravel()]), out, case.copy()], block_dim=1)
    return src, grad, out


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("m,k", [(1, 64), (4, 32), (5, 48), (3, 208), (2, 1024)])
def test_softmax_grad_matches_torch(mod, host, m, k, half):
    for tmp in (-1, 0):
        src, grad, out = run(mod, host, m, k, half, 0, tmp)
        s = torch.from_numpy(src).double()
        g = torch.from_numpy(grad).double()
        # torch's softmax backward: y x (g - sum(g x y))
        want = torch._softmax_backward_data(g, s, -1, torch.float64).numpy()
        got = out.reshape(m, k)
        if half:
            np.testing.assert_allclose(got, want, rtol=4e-3, atol=2e-3)
            assert np.array_equal(got, got.astype(np.float16).astype(np.float32))
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("half", [0, 1], ids=["float", "half"])
@pytest.mark.parametrize("mode", [1, 2], ids=["isFront", "SoftmaxGradFront"])
def test_front_gives_the_row_sum_over_one_block(mod, host, half, mode):
    m, k = 6, 64
    src, grad, out = run(mod, host, m, k, half, mode)
    blk = 16 if half else 8
    s = (src.astype(np.float64) * grad).sum(-1)
    got = out[:m * blk].reshape(m, blk)
    np.testing.assert_allclose(got, np.repeat(s[:, None], blk, 1), rtol=2e-3 if half else 1e-5, atol=2e-3 if half else 1e-6)
    assert (got == got[:, :1]).all()


def test_padded_columns_are_computed_not_reduced(mod, host):
    """oriSrcK < srcK: the sum runs over oriSrcK, the padded columns still get (grad - s) x src (the page's
    约束说明: 补齐的数据会参与部分运算)."""
    m, k, ori = 3, 48, 40
    src, grad, out = run(mod, host, m, k, 0, 0, ori_k=ori, pad=0.25)
    s = (src[:, :ori].astype(np.float64) * grad[:, :ori]).sum(-1, keepdims=True)
    np.testing.assert_allclose(out.reshape(m, k), (grad - s) * src, rtol=1e-5, atol=1e-6)


def test_tmp_below_cann_minimum_is_a_rule_violation(mod, host):
    need = host(4, 64, 2, 0)[1]
    with pytest.raises(EmulatorError) as e:
        run(mod, host, 4, 64, 1, 0, tmp=need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "SoftmaxGrad")
    assert "GetSoftMaxGradMinTmpSize" in e.value.detail and str(need) in e.value.detail
    assert e.value.file.endswith("test_softmaxgrad.cpp")


def test_nz_format_is_a_compile_error_naming_it(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "lib/activation/softmaxgrad.h"\nusing namespace AscendC;\n'
                   "void f() { LocalTensor<float> t; SoftMaxTiling s{}; SoftmaxGrad<float, false, true>(t, t, t, s); }\n")
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0 and "not supported on the emulator: SoftmaxGrad" in r.stderr
