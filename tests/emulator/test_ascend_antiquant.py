"""AscendAntiQuant (lib/quantization/ascend_antiquant.h) against PyTorch, and its host buffer query.

Page: asc-devkit 82b89a15 docs/zh/api/SIMD-API/高阶API/量化操作/AscendAntiQuant.md; the A2 computation
impl/adv_api/detail/quantization/antiquant/ascend_antiquant_impl.h (half: add and multiply in half, each rounded) and
ascend_antiquant_c220_impl.h (bfloat16_t: in float, one CAST_RINT); the host query
python/opkit/cannproject/include/tiling/quantization/ascend_antiquant_tiling.h (after
impl/adv_api/tiling/quantization/ascend_antiquant_tiling_impl.cpp). Both are exact models of that arithmetic, so the
comparison is bitwise."""
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
  const int64_t k = atoi(argv[1]), n = atoi(argv[2]), sc = atoi(argv[3]);
  const bool tr = atoi(argv[4]);
  const auto out = atoi(argv[5]) ? ge::DT_BF16 : ge::DT_FLOAT16;
  uint32_t mx = 0, mn = 0, nodes = 0, extra = 0;
  AscendC::GetAscendAntiQuantMaxMinTmpSize(ge::Shape({k, n}), ge::Shape({sc}), tr, ge::DT_INT8, out, mx, mn);
  AscendC::GetAscendAntiQuantTmpBufferFactorSize(ge::Shape({k, n}), ge::Shape({sc}), tr, ge::DT_INT8, out, nodes, extra);
  printf("%u %u %u %u\n", mx, mn, nodes, extra);
}
"""


@pytest.fixture(scope="module")
def mod():
    from conftest import compile_pybind, headers_digest, load
    return load(compile_pybind("ascend_antiquant", headers_digest()), "ascend_antiquant")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    from conftest import build_host_program
    exe = build_host_program(HOST, tmp_path_factory.mktemp("aq_host"))

    def sizes(k, n, sc, tr=0, bf16=1):
        out = subprocess.run([str(exe), *map(str, (k, n, sc, tr, bf16))], check=True, capture_output=True, text=True)
        return [int(v) for v in out.stdout.split()]
    return sizes


def test_host_sizes_match_cann_formulas(host):
    assert host(8, 128, 128, bf16=0) == [0, 0, 0, 0]                       # half: no buffer
    assert host(8, 128, 128) == [128 * 8 + 64 * 8 * 4] * 2 + [0, 128 * 8 + 64 * 8 * 4]
    assert host(8, 128, 1) == [8 * 128 * 4, 1024, 1, 0]                    # per tensor
    assert host(8, 128, 128, tr=1)[:2] == [80 * 128 * 4] * 2


def bits(a, bf16):
    return (torch.from_numpy(a).bfloat16().view(torch.int16).numpy().view(np.uint16) if bf16
            else a.astype(np.float16).view(np.uint16))


def run(mod, K, N, bf16, kind, tmp=0, groups=1, via_struct=0, off=1.5, sc=-0.75, seed=0):
    rng = np.random.default_rng(seed + K * 7 + N + kind)
    src = rng.integers(-128, 128, (K, N)).astype(np.int8)
    scale = rng.uniform(-4, 4, (groups, N)).astype(np.float32)
    offset = rng.uniform(-60, 60, N).astype(np.float32)
    total = K * N
    ta, ns = -(-total // 32) * 32, groups * N
    nsa, na = -(-ns // 16) * 16, -(-N // 16) * 16
    buf = np.zeros(ta + 2 * nsa + 2 * na, np.uint8)
    buf[:total] = src.ravel().view(np.uint8)
    buf[ta:ta + 2 * ns] = bits(scale.ravel(), bf16).view(np.uint8)
    buf[ta + 2 * nsa:ta + 2 * nsa + 2 * N] = bits(offset, bf16).view(np.uint8)
    sb, ob = bits(np.array([sc], np.float32), bf16)[0], bits(np.array([off], np.float32), bf16)[0]
    case = np.array([bf16, kind, tmp, K, total, groups, N, via_struct], np.uint32).view(np.uint8)
    case = np.concatenate([case, np.array([ob, sb], np.uint16).view(np.uint8)])
    out = np.zeros(ta * 2, np.uint8)
    mod.aq_call([buf, out, case.copy()], block_dim=1)
    got = out[:total * 2].view(np.uint16)
    got = (torch.from_numpy(got.view(np.int16).copy()).view(torch.bfloat16).float().numpy() if bf16
           else got.view(np.float16).astype(np.float32))
    return src, scale, offset, got.reshape(K, N)


def want(src, scale, offset, bf16, kind, groups, off=1.5, sc=-0.75):
    K, N = src.shape
    dt = torch.bfloat16 if bf16 else torch.float16
    s = torch.from_numpy(src.astype(np.float32))
    if kind == 0:
        o, c = torch.from_numpy(offset).to(dt)[None, :], torch.from_numpy(scale[0]).to(dt)[None, :]
    elif kind == 1:
        o, c = None, torch.from_numpy(scale).to(dt).repeat_interleave(K // groups, 0)
    else:
        o = torch.tensor(off).to(dt) if kind == 2 else None
        c = torch.tensor(sc).to(dt)
    if bf16:   # float arithmetic, one rounding to bfloat16 (c220: Cast CAST_RINT)
        x = s + o.float() if o is not None else s
        return (x * c.float()).bfloat16().float().numpy()
    x = (s.half() + o) if o is not None else s.half()   # half add, rounded
    return (x * c).float().numpy()                      # half mul, rounded


@pytest.mark.parametrize("bf16", [0, 1], ids=["half", "bf16"])
@pytest.mark.parametrize("kind", [0, 1, 2, 3], ids=["tensors", "scale_tensor", "scalars", "scalar_scale"])
@pytest.mark.parametrize("K,N,groups", [(8, 128, 2), (4, 96, 4), (3, 32, 1)])
def test_antiquant_matches_torch(mod, K, N, groups, kind, bf16):
    need = (N * groups * 8 + 256 * K) if kind <= 1 else 1024
    tmp = max(need, 32) if bf16 else 64
    src, scale, offset, got = run(mod, K, N, bf16, kind, tmp, groups)
    np.testing.assert_array_equal(got, want(src, scale, offset, bf16, kind, groups))


def test_scale_shape_from_struct_or_tensor(mod):
    a = run(mod, 8, 64, 0, 1, 64, groups=4, via_struct=1)
    b = run(mod, 8, 64, 0, 1, 64, groups=4, via_struct=0)
    np.testing.assert_array_equal(a[3], b[3])
    np.testing.assert_array_equal(a[3], want(*a[:3], 0, 1, 4))


def test_offset_rows_beyond_the_first_are_not_used(mod):
    """The A2 code repeats its Add over the K rows with src1RepStride 0: offset / scale row 0 serves every row."""
    src, scale, offset, got = run(mod, 4, 64, 0, 0, 64, groups=2)
    np.testing.assert_array_equal(got, want(src, scale, offset, 0, 0, 2))


def test_bf16_tmp_below_the_a2_minimum_is_a_rule_violation(mod):
    need = 64 * 8 + 256 * 8   # the scale tensor of 64 bf16 (its GetSize) x 8 + 64 x k x 4
    with pytest.raises(EmulatorError) as e:
        run(mod, 8, 64, 1, 0, need - 32)
    assert (e.value.rule, e.value.call) == ("tensor-bounds", "AscendAntiQuant") and str(need) in e.value.detail
    assert e.value.file.endswith("test_ascend_antiquant.cpp")


def test_k_must_divide_src(mod):
    with pytest.raises(EmulatorError) as e:
        run(mod, 8, 64, 0, 1, 64, groups=3)
    assert (e.value.rule, e.value.call) == ("api-argument", "AscendAntiQuant") and "groupCount" in e.value.detail


def test_transposed_tensor_form_is_a_named_compile_error(gxx, tmp_path):
    src = tmp_path / "k.cpp"
    src.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                   "void f(LocalTensor<half>& d, LocalTensor<int8_t>& s, LocalTensor<half>& o, LocalTensor<half>& c,"
                   " LocalTensor<uint8_t>& t) {\n  AscendAntiQuant<int8_t, half, true>(d, s, o, c, t, 32u);\n}\n")
    r = gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)
    assert r.returncode != 0 and "AscendAntiQuant with isTranspose = true" in r.stderr
