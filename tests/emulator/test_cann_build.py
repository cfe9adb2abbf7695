"""CANN's build semantics on the kernel side (issue 39): what CANN's kernel build gives a kernel and `opkit cflags`
must give it too -- the header paths CANN ships (kernel_operator_intf.h, basic_api/, impl/dav_c220/, lib/...,
adv_api/...), a cube header included but unused, constexpr half, `__bf16`, TILING_KEY_VAR in `#if`, InitGlobalMemory."""
from __future__ import annotations

import re
import subprocess

import pytest

HEADERS = ["kernel_operator_intf.h", "basic_api/kernel_vec_intf.h", "basic_api/kernel_basic_intf.h",
           "impl/dav_c220/kernel_operator_reg_others_impl.h", "adv_api/kernel_api.h", "lib/math/sin.h",
           "adv_api/math/power.h", "adv_api/utils/init_global_memory.h", "lib/utils/init_global_memory.h",
           "lib/matmul_intf.h", "adv_api/matmul/matmul_intf.h", "lib/math/kernel_operator_cos_intf.h",
           "adv_api/math/kernel_operator_erf_intf.h", "lib/sigmoid/kernel_operator_sigmoid_intf.h",
           "lib/activation/sigmoid.h", "adv_api/reduce/sum.h", "lib/reduce/sum.h", "adv_api/activation/sigmoid.h", "lib/pad/broadcast.h", "adv_api/pad/broadcast.h", "kernel_utils.h",
           "lib/matrix/matmul/matmul.h", "adv_api/matmul/matmul.h", "lib/select/selectwithbytesmask.h",
           "adv_api/select/selectwithbytesmask.h", "adv_api/activation/softmax.h", "adv_api/activation/softmaxflashv3.h",
           "adv_api/activation/kernel_operator_softmax_intf.h", "adv_api/normalization/welfordfinalize.h",
           "adv_api/normalization/kernel_operator_welfordfinalize_intf.h", "adv_api/normalization/normalize.h",
           "adv_api/reduce/reduce.h", "lib/matrix/matmul/tiling.h", "adv_api/matmul/tiling.h"]


def compile_src(gxx, tmp_path, text, name="k.cpp"):
    src = tmp_path / name
    src.write_text(text)
    return gxx(src, tmp_path / "k.o", ["-fsyntax-only"], link=False)


def _built_and_run(gxx, tmp_path, program: str, name: str = "prog") -> subprocess.CompletedProcess:
    """Compile a CPU-debug program ``<name>.cpp`` with the emulator flags (the build must succeed) and run it."""
    src = tmp_path / f"{name}.cpp"
    src.write_text(program)
    r = gxx(src, tmp_path / name)
    assert r.returncode == 0, r.stderr[-3000:]
    return subprocess.run([str(tmp_path / name)], capture_output=True, text=True)


@pytest.mark.parametrize("header", HEADERS)
def test_cann_kernel_header_paths_resolve(gxx, tmp_path, header):
    r = compile_src(gxx, tmp_path, f'#include "{header}"\nusing namespace AscendC;\n'
                                   "void f(LocalTensor<float> d, LocalTensor<float> s) { Sin(d, s, 8u); }\n")
    assert r.returncode == 0, r.stderr


def test_including_matmul_intf_without_using_it_compiles(gxx, tmp_path):
    r = compile_src(gxx, tmp_path, '#include "lib/matmul_intf.h"\nusing namespace AscendC;\n'
                                   "extern \"C\" __global__ __aicore__ void k(GM_ADDR x) { (void)x; }\n")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("use,name", [
    ("using A = MatmulType<TPosition::GM, CubeFormat::ND, half>; struct K { Matmul<A, A, A> mm; }; K k;", "Matmul"),
    ("struct K { MatmulType<TPosition::GM, CubeFormat::ND, half> t; }; K k;", "MatmulType"),
    ("void f() { REGIST_MATMUL_OBJ(nullptr, nullptr, 0); }", "REGIST_MATMUL_OBJ"),
    ("constexpr MatmulConfig c = GetNormalConfig();", "GetNormalConfig"),
    ("using A = MatmulType<TPosition::GM, CubeFormat::ND, float>; struct K { matmul::Matmul<A, A, A> mm; }; K k;",
     "Matmul"),
])
def test_using_a_matmul_name_fails_naming_it(gxx, tmp_path, use, name):
    r = compile_src(gxx, tmp_path, f'#include "lib/matmul_intf.h"\nusing namespace AscendC;\n{use}\n')
    assert r.returncode != 0 and f"not supported on the emulator: {name}" in r.stderr, r.stderr[-2000:]


def test_matmul_namespace_is_ascendc(gxx, tmp_path):
    """`namespace matmul = AscendC;` (asc-devkit include/adv_api/matmul/matmul.h:404): a vector name reached through
    it compiles (ops-transformer nsa_selected_attention_infer calls matmul::InitOutput), a cube name still fails."""
    r = compile_src(gxx, tmp_path, '#include "lib/matmul_intf.h"\n'
                                   "void f(AscendC::GlobalTensor<float> g) { matmul::InitOutput<float>(g, 8u, 0.0f); "
                                   "matmul::LocalTensor<float> t; (void)t; }\n")
    assert r.returncode == 0, r.stderr[-2000:]
    r = compile_src(gxx, tmp_path, '#include "lib/matmul_intf.h"\nconstexpr auto c = matmul::GetMDLConfig(true);\n')
    assert r.returncode != 0 and "not supported on the emulator: GetMDLConfig" in r.stderr, r.stderr[-2000:]


@pytest.mark.parametrize("header", ["lib/matrix/matmul/tiling.h", "adv_api/matmul/tiling.h"])
def test_matmul_tiling_header_rejects_the_configurations_by_name(gxx, tmp_path, header):
    """CANN's matmul/tiling.h holds the Matmul configurations (asc-devkit include/adv_api/matmul/tiling.h:
    GetNormalConfig, GetMDLConfig, ...): cube-side, so using one stops the build naming it."""
    r = compile_src(gxx, tmp_path, f'#include "{header}"\nusing namespace AscendC;\n'
                                   "constexpr auto c = GetMDLConfig(true);\n")
    assert r.returncode != 0 and "not supported on the emulator: GetMDLConfig" in r.stderr, r.stderr[-2000:]


STRUCTS = ["TCubeTiling", "LayerNormSeparateTiling", "LayerNormTiling", "RmsNormTiling", "PadTiling", "TopkTiling",
           "GroupNormTiling", "ConfusionTransposeTiling"]


def test_tiling_structs_a_vector_kernel_only_declares_compile(gxx, tmp_path):
    """ops-nn's A2 vector kernels declare TCubeTiling / LayerNormSeparateTiling fields in their tiling struct
    (read only by other kernels of the op): declaring one is no use of the cube or of the API, so it compiles,
    with CANN's fields (asc-devkit 82b89a15 include/adv_api/matmul/matmul_tilingdata.h:21-72, ...). The cube's
    Conv3D / Mc2 structs stay rejected by name."""
    fields = "".join(f"  {n} f{i};\n" for i, n in enumerate(STRUCTS))
    r = compile_src(gxx, tmp_path, '#include "kernel_tiling/kernel_tiling.h"\n'
                                   f"struct OpTiling {{\n  uint32_t n;\n{fields}}};\n"
                                   "static_assert(sizeof(TCubeTiling) == 50 * 4, \"CANN's 50 int32_t\");\n"
                                   "int f(const OpTiling& t) { return t.f0.baseM + int(t.f1.aLength) + int(t.n); }\n")
    assert r.returncode == 0, r.stderr[-2000:]
    r = compile_src(gxx, tmp_path, '#include "kernel_tiling/kernel_tiling.h"\nstruct T { TConv3DApiTiling c; };\nT t;\n')
    assert r.returncode != 0 and "not supported on the emulator: TConv3DApiTiling" in r.stderr


def test_cann_named_constants_and_global_get_tpipe_ptr(gxx, tmp_path):
    """CANN's geometry constants (asc-devkit 82b89a15 impl/basic_api/utils/kernel_utils_constants.h:225-318) with
    CANN's values, and GetTPipePtr callable unqualified without `using namespace AscendC` (kernel_common.h:102)."""
    r = compile_src(gxx, tmp_path, '#include "kernel_operator.h"\n'
                                   "static_assert(AscendC::ONE_BLK_FLOAT_NUM == 8 && AscendC::ONE_BLK_HALF_NUM == 16);\n"
                                   "static_assert(AscendC::BRCB_BROADCAST_NUMBER == 8 && AscendC::B32_BYTE_SIZE == 4);\n"
                                   "static_assert(AscendC::DEFAULT_DATA_COPY_STRIDE == 0 && AscendC::FULL_MASK_LEN == 128);\n"
                                   "static_assert(AscendC::MAX_REPEAT_FLOAT_SIZE == 64 * 255);\n"
                                   "template <class T> int f() { return GetTPipePtr() != nullptr; }\n"
                                   "int g() { using namespace AscendC; return f<int>() + (GetTPipePtr() == nullptr); }\n")
    assert r.returncode == 0, r.stderr[-2000:]


def test_securec_for_cpu_debug_kernels(gxx, tmp_path):
    """ops-nn kernels include securec.h under ASCENDC_CPU_DEBUG (experimental/loss/nll_loss): memcpy_s copies, and
    refuses a destination too small (an error code, nothing copied)."""
    r = _built_and_run(gxx, tmp_path, '#include "kernel_operator.h"\n#include "securec.h"\n#include <cstdio>\n'
                       "int main() { int a[2] = {1, 2}, b[2] = {0, 0}, c[1] = {7};\n"
                       "  int ok = memcpy_s(b, sizeof b, a, sizeof a), bad = memcpy_s(c, sizeof c, a, sizeof a);\n"
                       '  std::printf("%d %d %d %d %d", ok, b[0], b[1], bad != EOK, c[0]); }\n')
    assert r.stdout == "0 1 2 1 7", r.stdout + r.stderr


def test_half_and_bfloat16_construct_in_constant_expressions(gxx, tmp_path):
    r = compile_src(gxx, tmp_path, '#include "kernel_operator.h"\n'
                    "constexpr half kOne = 1.0;\nconstexpr half kTenth = half(0.1f);\nconstexpr bfloat16_t kB = 0.5f;\n"
                    "static_assert(float(kOne) == 1.0f && float(kB) == 0.5f, \"\");\n"
                    "static_assert(kTenth.bits_ == 0x2e66, \"round to nearest even\");\n"
                    "static_assert(half(65520.0f).bits_ == 0x7c00, \"overflow to inf\");\n"
                    "static_assert(std::is_same_v<__bf16, bfloat16_t>, \"bisheng's bf16 name\");\n")
    assert r.returncode == 0, r.stderr


PROGRAM = r'''
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
using namespace AscendC;
#if TILING_KEY_VAR == 0
constexpr int kPreprocessorKey = 0;   // CANN's CPU-debug build: TILING_KEY_VAR is an identifier, 0 in #if
#else
constexpr int kPreprocessorKey = 1;
#endif
extern "C" __global__ __aicore__ void fill(GM_ADDR y) {
  TPipe pipe;
  GlobalTensor<float> gy;
  gy.SetGlobalBuffer((__gm__ float*)y, 100);
  InitGlobalMemory(gy, 100, 2.5f);
  if (TILING_KEY_VAR == 7 && TILING_KEY_IS(7)) gy.SetValue(0, 7.0f);
  GlobalTensor<half> gh;
  gh.SetGlobalBuffer((__gm__ half*)(y + 400), 16);
  Fill(gh, 16, static_cast<half>(1.5f));
}
int main() {
  auto* y = (uint8_t*)GmAlloc(400 + 32);
  SetKernelMode(KernelMode::AIV_MODE);
  ICPU_SET_TILING_KEY(7);
  ICPU_RUN_KF(fill, 1, y);
  const float* f = (const float*)y;
  const half* h = (const half*)(y + 400);
  std::printf("%d %g %g %g %g\n", kPreprocessorKey, f[0], f[1], f[99], float(h[15]));
  GmFree(y);
  return 0;
}
'''


def test_tiling_key_var_and_init_global_memory(gxx, tmp_path):
    out = _built_and_run(gxx, tmp_path, PROGRAM)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "7", "2.5", "2.5", "1.5"]


def test_ascendc_std_utilities(gxx, tmp_path):
    r = compile_src(gxx, tmp_path, '#include "kernel_operator.h"\nusing namespace AscendC;\n'
                    "static_assert(AscendC::Std::is_same_v<int, int> && Std::is_base_of_v<int, int> == false);\n"
                    "static_assert(Std::min(3, 2u) == 2u && AscendC::Std::max(1.5f, 2) == 2.0f);\n"
                    "template <class T> constexpr bool f() { return !Std::always_false_v<T>; }\n"
                    "static_assert(f<int>());\n"
                    "constexpr AscendC::Std::tuple<int, float> t{1, 2.f};\n"
                    "static_assert(Std::get<0>(t) == 1 && Std::is_same_v<Std::remove_cvref_t<const int&>, int>);\n"
                    "static_assert(Std::is_one_of_v<float, half, float> && Std::is_tuple_v<decltype(t)>);\n")
    assert r.returncode == 0, r.stderr


LIST_PROGRAM = r'''
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
using namespace AscendC;
extern "C" __global__ __aicore__ void sum_list(GM_ADDR list, GM_ADDR out, GM_ADDR mode) {
  ListTensorDesc l(reinterpret_cast<__gm__ void*>(list));
  GlobalTensor<float> go;
  go.SetGlobalBuffer((__gm__ float*)out, 8);
  uint64_t shape[2];
  float total = 0;
  for (uint32_t i = 0; i < l.GetSize(); ++i) {
    TensorDesc<float> d;
    d.SetShapeAddr(shape);
    l.GetDesc(d, i);
    GlobalTensor<float> g = d.GetDataObj();
    for (uint64_t k = 0; k < d.GetShape(0) * d.GetShape(1); ++k) total += g.GetValue(k);
    go.SetValue(1 + i, static_cast<float>(d.GetShape(0) * 10 + d.GetShape(1)));
  }
  go.SetValue(0, total);
  go.SetValue(3, static_cast<float>(l.GetSize()));
  if (*(__gm__ int32_t*)mode == 1) l.GetDataPtr<float>(2);  // LIST:past
}
int main(int argc, char**) {
  auto* a = (float*)GmAlloc(6 * 4);
  auto* b = (float*)GmAlloc(4 * 4);
  for (int i = 0; i < 6; ++i) a[i] = i;           // 15
  for (int i = 0; i < 4; ++i) b[i] = 100;         // 400
  // [ptr offset][dim 2 | index 0 << 32][2][3][dim 2 | index 1 << 32][4][1][ptr a][ptr b]
  auto* list = (uint64_t*)GmAlloc(9 * 8);
  uint64_t words[9] = {7 * 8, 2, 2, 3, (1ull << 32) | 2, 4, 1, (uint64_t)a, (uint64_t)b};
  memcpy(list, words, sizeof(words));
  auto* out = (float*)GmAlloc(8 * 4);
  auto* mode = (int32_t*)GmAlloc(32);
  *mode = argc > 1 ? 1 : 0;
  SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(sum_list, 1, (uint8_t*)list, (uint8_t*)out, (uint8_t*)mode);
  std::printf("%g %g %g %g\n", out[0], out[1], out[2], out[3]);
  return 0;
}
'''


def test_list_tensor_desc_decodes_a_dynamic_list(gxx, tmp_path):
    out = _built_and_run(gxx, tmp_path, LIST_PROGRAM, "list")
    assert out.returncode == 0 and out.stdout.split() == ["415", "23", "41", "2"], out.stdout + out.stderr
    past = subprocess.run([str(tmp_path / "list"), "past"], capture_output=True, text=True)
    line = next(i for i, t in enumerate(LIST_PROGRAM.splitlines(), 1) if "LIST:past" in t)
    assert past.returncode == 1 and "[kernel-assert] ListTensorDesc" in past.stderr and f"list.cpp:{line}" in past.stderr


ATOMIC_PROGRAM = r'''
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
using namespace AscendC;
extern "C" __global__ __aicore__ void atomic_mm(GM_ADDR mx, GM_ADDR mn, GM_ADDR imx) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b, bi;
  pipe.InitBuffer(b, 32);
  pipe.InitBuffer(bi, 32);
  LocalTensor<float> t = b.Get<float>();
  LocalTensor<int32_t> ti = bi.Get<int32_t>();
  const float v = (GetBlockIdx() % 2 ? 1.0f : -1.0f) * (GetBlockIdx() + 1);   // -1, 2, -3, 4
  Duplicate(t, v, 8);
  Duplicate(ti, static_cast<int32_t>(v * 10), 8);
  PipeBarrier<PIPE_ALL>();
  GlobalTensor<float> gmx, gmn;
  GlobalTensor<int32_t> gimx;
  gmx.SetGlobalBuffer((__gm__ float*)mx, 8);
  gmn.SetGlobalBuffer((__gm__ float*)mn, 8);
  gimx.SetGlobalBuffer((__gm__ int32_t*)imx, 8);
  SetAtomicMax<float>();
  DataCopy(gmx, t, 8);
  SetAtomicMin<float>();
  DataCopy(gmn, t, 8);
  SetAtomicMax<int32_t>();
  DataCopy(gimx, ti, 8);
  SetAtomicNone();
}
int main() {
  auto* mx = (float*)GmAlloc(32);
  auto* mn = (float*)GmAlloc(32);
  auto* imx = (int32_t*)GmAlloc(32);
  for (int i = 0; i < 8; ++i) { mx[i] = 0; mn[i] = 0; imx[i] = 0; }
  SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(atomic_mm, 4, (uint8_t*)mx, (uint8_t*)mn, (uint8_t*)imx);
  std::printf("%g %g %d\n", mx[7], mn[7], imx[7]);
  return 0;
}
'''


def test_set_atomic_max_and_min(gxx, tmp_path):
    out = _built_and_run(gxx, tmp_path, ATOMIC_PROGRAM)
    assert out.returncode == 0 and out.stdout.split() == ["4", "-3", "40"], out.stdout + out.stderr


DUMP_PROGRAM = r'''
#include "kernel_operator.h"
#include "tikicpulib.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void dump(GM_ADDR x) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 32);
  LocalTensor<float> t = b.Get<float>();
  Duplicate(t, 1.5f, 8);
  PipeBarrier<PIPE_ALL>();
  DumpTensor(t, 7, 3);
  GlobalTensor<int32_t> g;
  g.SetGlobalBuffer((__gm__ int32_t*)x, 4);
  DumpTensor(g, 8, 4);
  DumpAccChkPoint(t, 9, 6, 100);
}
int main() {
  auto* x = (int32_t*)GmAlloc(16);
  for (int i = 0; i < 4; ++i) x[i] = i * 10;
  SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(dump, 1, (uint8_t*)x);
  return 0;
}
'''


def test_dump_tensor_prints_the_values(gxx, tmp_path):
    out = _built_and_run(gxx, tmp_path, DUMP_PROGRAM)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["DumpTensor: desc=7, offset=0, count=3", "[1.5, 1.5, 1.5]",
                                       "DumpTensor: desc=8, offset=0, count=4", "[0, 10, 20, 30]",
                                       "DumpAccChkPoint: desc=9, offset=6, count=2", "[1.5, 1.5]"]


def test_kernel_operator_leaves_limits_macros_undefined(gxx, tmp_path):
    """kernel_operator.h does not bring in <climits>: ops-nn e5c3fa93 index/gather_elements_v2/op_kernel/
    gather_elements_v2_last_dim.h:29 declares its own `constexpr int64_t INT_MAX`, and norm/deep_norm_grad includes
    <climits> itself (deep_norm_grad_common.h:17) -- both build on CANN."""
    r = compile_src(gxx, tmp_path, '#include "kernel_operator.h"\nconstexpr int64_t INT_MAX = 2147483647;\n'
                                   "static_assert(INT_MAX == 2147483647);\n")
    assert r.returncode == 0, r.stderr[-2000:]


TQUE_CONFIG_KERNEL = '''#include "kernel_operator.h"
using namespace AscendC;
constexpr TPosition tp[8] = {TPosition::MAX, TPosition::MAX, TPosition::MAX, TPosition::MAX,
                             TPosition::MAX, TPosition::MAX, TPosition::MAX, TPosition::MAX};
constexpr TQueConfig conf = GetTQueConfig(NDNZ, false, false, 0, 1, 0, tp, false, false);
static_assert(conf.bufferNumber == 1 && conf.consumer[7] == TPosition::MAX && !conf.enableLoopQueue);
void f() { TPipe pipe; TQue<TPosition::VECIN, 1, &conf> q; pipe.InitBuffer(q, 1, 256); }
'''


@pytest.mark.parametrize("nd2nz", [False, True])
def test_tque_config(gxx, tmp_path, nd2nz):
    """TQueConfig / GetTQueConfig (asc-devkit 82b89a15 impl/basic_api/utils/kernel_utils_ceil_oom_que.h:211-239) as
    TQue's third parameter (ops-nn loss/mse_loss_grad_v2 declares one); nd2nz on a VECIN queue is a compile error
    (TQue简介.md: A1/B1 only)."""
    r = compile_src(gxx, tmp_path, TQUE_CONFIG_KERNEL.replace("NDNZ", "true" if nd2nz else "false"))
    if nd2nz:
        assert r.returncode != 0 and "nd2nz is for A1/B1 queues" in r.stderr
    else:
        assert r.returncode == 0, r.stderr[-2000:]


def test_preload_is_the_cpu_debug_no_op(gxx, tmp_path):
    """PRELOAD(len) (asc-devkit 82b89a15 impl/basic_api/utils/kernel_utils_ceil_oom_que.h:25-27: `{}` in CANN's CPU
    debug build; ops-nn norm/masked_softmax_with_rel_pos_bias calls it under __CCE_AICORE__ == 220): compiles, and
    the code around it runs."""
    r = _built_and_run(gxx, tmp_path, '#include "kernel_operator.h"\n#include <cstdio>\n'
                       'int main() { int k = 1; PRELOAD(2); k += 1; std::printf("%d", k); }\n')
    assert r.stdout == "2", r.stdout + r.stderr


def test_topk_constants_visible_as_on_a2(gxx, tmp_path):
    """The TopK implementation's unnamed-namespace constants reach every A2 kernel through kernel_operator.h
    (asc-devkit 82b89a15 kernel_api.h:103 -> sort/topk.h:32 -> topk_common_utils.h:27-57; ops-nn
    index/top_k_top_p_sample uses SIXTEEN / EIGHT undeclared); a kernel's own namespaced TWO still wins inside it."""
    r = compile_src(gxx, tmp_path, '#include "kernel_operator.h"\n'
                                   "static_assert(SIXTEEN == 16 && EIGHT == 8 && MIN_SORT32_SIZE == 32 && "
                                   "TOPK_NORMAL_INNER_MAX_LEN == 4096);\n"
                                   "namespace k { constexpr int TWO = 22; static_assert(TWO == 22); }\n")
    assert r.returncode == 0, r.stderr[-2000:]


def test_barrier_is_a_compiler_memory_barrier(gxx, tmp_path):
    """AscendC::Barrier() (asc-devkit 82b89a15 impl/basic_api/dav_c220/kfc/kfc_comm.h:44-51: an empty asm with a
    memory clobber in CANN's CPU-debug build; ops-math experimental/math/reduce_prod_v2 calls it unqualified)."""
    r = _built_and_run(gxx, tmp_path, '#include "kernel_operator.h"\n#include <cstdio>\nusing namespace AscendC;\n'
                       'int main() { int k = 4; Barrier(); AscendC::Barrier(); std::printf("%d", k + 1); }\n')
    assert r.stdout == "5", r.stdout + r.stderr


def test_op_impl_registry_resolves_for_a_kernel_side_tiling_header(gxx, tmp_path):
    """CANN's kernel build has the toolkit's include folder on the path (asc-devkit compile_op.py:1356), so a
    kernel tiling header may include the host's register/op_impl_registry.h (ops-math experimental/math/real):
    it resolves; its host names are not there -- one used in a kernel is a compile error naming it."""
    r = compile_src(gxx, tmp_path, '#include "register/op_impl_registry.h"\n#include "kernel_operator.h"\n'
                                   "struct RealTilingData { int64_t n = 0; };\n"
                                   "namespace optiling { BEGIN_TILING_DATA_DEF(T) TILING_DATA_FIELD_DEF(int64_t, n);"
                                   " END_TILING_DATA_DEF; }\n")
    assert r.returncode == 0, r.stderr[-2000:]
    r = compile_src(gxx, tmp_path, '#include "register/op_impl_registry.h"\nIMPL_OP_OPTILING(Real);\n')
    assert r.returncode != 0 and "IMPL_OP_OPTILING" in r.stderr


def test_platform_infos_def_resolves_for_a_kernel_header(gxx, tmp_path):
    """The same for platform/platform_infos_def.h (ops-transformer interleave_rope's kernel headers include it):
    it resolves on the kernel path; its host names are not there."""
    r = compile_src(gxx, tmp_path, '#include "kernel_operator.h"\n#include "platform/platform_infos_def.h"\n'
                                   "int f() { return 1; }\n")
    assert r.returncode == 0, r.stderr[-2000:]
    r = compile_src(gxx, tmp_path, '#include "platform/platform_infos_def.h"\nfe::PlatFormInfos* p = nullptr;\n')
    # the error is the use on line 2 naming fe (quotes vary with the locale, wording with the g++ version)
    assert r.returncode != 0 and re.search(r"\.cpp:2:\d+: error: \W{1,3}fe\W{1,3} (does not name a type|has not been "
                                           r"declared)", r.stderr), r.stderr[-2000:]


@pytest.mark.parametrize("call,ok", [
    ("ShiftLeft(d, s, int16_t(3), 8)", True),                      # const T& scalar
    ("ShiftRight<int16_t, int16_t>(d, s, int16_t(3), 8)", True),   # const U& with U == PrimT<T>
    ("ShiftLeft(d, s, 3, 8)", False),                               # int scalar, int16_t tensor: CANN has no form
    ("ShiftLeft(d, s, c, 8)", False),                               # a tensor of shift counts: not on A2
])
def test_shift_forms_are_cann_s(gxx, tmp_path, call, ok):
    """ShiftLeft / ShiftRight take CANN's forms only (kernel_operator_vec_binary_scalar_intf.h:396-520); the
    tensor-count form (kernel_operator_vec_binary_intf.h:450-467) is not on A2 (its page) and is named."""
    r = compile_src(gxx, tmp_path, '#include "kernel_operator.h"\nusing namespace AscendC;\n'
                                   "void f(LocalTensor<int16_t> d, LocalTensor<int16_t> s, LocalTensor<int16_t> c) "
                                   f"{{ {call}; }}\n")
    if ok:
        assert r.returncode == 0, r.stderr[-2000:]
    else:
        assert r.returncode != 0, call
    if "c, 8" in call:
        assert "not supported on the emulator: ShiftLeft" in r.stderr, r.stderr[-2000:]


@pytest.mark.parametrize("name", ["Subs", "Divs", "Ands", "Ors"])
def test_scalar_forms_a2_lacks_are_named(gxx, tmp_path, name):
    """Subs / Divs with the scalar anywhere, Ands / Ors: their pages say "Atlas A2 ...: 不支持" (asc-devkit 82b89a15
    docs/zh/api/SIMD-API/基础API/Memory矢量计算/基础算术/Subs（灵活标量位置）.md, ..., 逻辑计算/Ands.md): a call is a
    compile error naming the call; a kernel's own function of the name still wins."""
    r = compile_src(gxx, tmp_path, '#include "kernel_operator.h"\nusing namespace AscendC;\n'
                                   f"void f(LocalTensor<int16_t> d, LocalTensor<int16_t> s) {{ {name}(d, s, int16_t(1), 8); }}\n")
    assert r.returncode != 0 and f"not supported on the emulator: {name}" in r.stderr, r.stderr[-2000:]
    r = compile_src(gxx, tmp_path, '#include "kernel_operator.h"\nusing namespace AscendC;\n'
                                   f"static int {name}(int a, int b) {{ return a - b; }}\nint g() {{ return {name}(3, 1); }}\n")
    assert r.returncode == 0, r.stderr[-2000:]


ATOMIC_TYPE_PROGRAM = r'''
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
using namespace AscendC;
extern "C" __global__ __aicore__ void atomic_type(GM_ADDR a, GM_ADDR b) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 32);
  LocalTensor<int32_t> t = buf.Get<int32_t>();
  Duplicate(t, 3, 8);
  PipeBarrier<PIPE_ALL>();
  GlobalTensor<int32_t> ga, gb;
  ga.SetGlobalBuffer((__gm__ int32_t*)a, 8);
  gb.SetGlobalBuffer((__gm__ int32_t*)b, 8);
  SetAtomicMax<float>();
  SetAtomicType<int32_t>();   // max goes on, as int32_t: max(-5, 3) = 3 (as float, -5's bits are a NaN)
  DataCopy(ga, t, 8);
  SetAtomicNone();
  SetAtomicType<float>();     // no operation on: a plain copy
  DataCopy(gb, t, 8);
}
int main() {
  auto* a = (int32_t*)GmAlloc(32);
  auto* b = (int32_t*)GmAlloc(32);
  for (int i = 0; i < 8; ++i) { a[i] = -5; b[i] = 7; }
  SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(atomic_type, 1, (uint8_t*)a, (uint8_t*)b);
  std::printf("%d %d\n", a[7], b[7]);
  return 0;
}
'''


def test_set_atomic_type_changes_the_type_of_the_operation_on(gxx, tmp_path):
    """SetAtomicType<T> (原子操作/SetAtomicType.md): the operation's element type only (asc-devkit 82b89a15
    impl/basic_api/dav_c220/kernel_operator_set_atomic_impl.h:25-95)."""
    out = _built_and_run(gxx, tmp_path, ATOMIC_TYPE_PROGRAM)
    assert out.returncode == 0 and out.stdout.split() == ["3", "3"], out.stdout + out.stderr


PAD_VALUE_PROGRAM = r'''
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
using namespace AscendC;
extern "C" __global__ __aicore__ void padv(GM_ADDR x, GM_ADDR y) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 64);
  LocalTensor<half> t = buf.Get<half>();
  GlobalTensor<half> gx, gy;
  gx.SetGlobalBuffer((__gm__ half*)x, 16);
  gy.SetGlobalBuffer((__gm__ half*)y, 16);
#if MODE == 1
  SetPadValue(1.0f);   // a float value for a half copy: the page ties the two types
#else
  SetPadValue((half)1);
#endif
  DataCopyPad(t, gx, DataCopyExtParams{1, 4 * sizeof(half), 0, 0, 0},
              DataCopyPadExtParams<half>{false, 0, 12, (half)0});   // the page's scenario 1
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, t, 16);
}
int main() {
  auto* x = (half*)GmAlloc(32);
  auto* y = (half*)GmAlloc(32);
  for (int i = 0; i < 16; ++i) { x[i] = half(float(i + 2)); y[i] = half(0.0f); }
  SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(padv, 1, (uint8_t*)x, (uint8_t*)y);
  for (int i = 0; i < 16; ++i) std::printf("%g ", float(y[i]));
  return 0;
}
'''


def test_set_pad_value_fills_the_padding_isPad_false_asks_for(gxx, tmp_path):
    """SetPadValue (数据搬运辅助配置接口/SetPadValue(ISASI).md, scenario 1: isPad=false, rightPadding 12): the padding
    holds the value; without it that padding is undefined (poison: the copy out reads it -> ub-uninitialized)."""
    out = _built_and_run(gxx, tmp_path, PAD_VALUE_PROGRAM)
    assert out.returncode == 0 and out.stdout.split() == ["2", "3", "4", "5"] + ["1"] * 12, out.stdout + out.stderr
    out = _built_and_run(gxx, tmp_path, PAD_VALUE_PROGRAM.replace("#if MODE == 1", "#if 1"), "p1")
    assert "[api-argument] DataCopyPad" in out.stdout + out.stderr, out.stdout + out.stderr
    out = _built_and_run(gxx, tmp_path, PAD_VALUE_PROGRAM.replace("SetPadValue((half)1);", ""), "p2")
    assert "ub-uninitialized" in out.stdout + out.stderr, out.stdout + out.stderr


ENHANCED_PROGRAM = r'''
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
using namespace AscendC;
extern "C" __global__ __aicore__ void enh(GM_ADDR x, GM_ADDR y) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b0, b1;
  pipe.InitBuffer(b0, 64);
  pipe.InitBuffer(b1, 64);
  LocalTensor<float> t0 = b0.Get<float>(), t1 = b1.Get<float>();
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x, 16);
  gy.SetGlobalBuffer((__gm__ float*)y, 16);
  DataCopyEnhancedParams e(BlockMode::BLOCK_MODE_NORMAL, DeqScale::DEQ, 7, 0, true, pad_t::PAD_NONE, 0);
  DataCopy(t0, gx, DataCopyParams{1, BLOCKS, 0, 0}, e);   // BLOCKS: 2 (64 bytes), or 3 (past t0's 64 bytes)
  PipeBarrier<PIPE_ALL>();
  DataCopy(t1, t0, DataCopyParams{1, 2, 0, 0}, DataCopyEnhancedParams{});
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, t1, DataCopyParams{1, 2, 0, 0}, e);
}
int main() {
  auto* x = (float*)GmAlloc(64);
  auto* y = (float*)GmAlloc(64);
  for (int i = 0; i < 16; ++i) { x[i] = -1.5f * i; y[i] = 0; }
  SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(enh, 1, (uint8_t*)x, (uint8_t*)y);
  std::printf("%g %g\n", y[1], y[15]);
  return 0;
}
'''


def test_data_copy_with_enhanced_params_is_the_basic_copy_on_a2(gxx, tmp_path):
    """DataCopy(..., DataCopyParams, DataCopyEnhancedParams): on A2 "the enhancement has no effect, the same as the
    basic copy" (矩阵计算的搬出/DataCopy（L0C到UB数据搬运）.md): no relu, no dequantisation, the basic copy's rules;
    the forms between element types (the cube's L0C path) are named."""
    out = _built_and_run(gxx, tmp_path, ENHANCED_PROGRAM.replace("BLOCKS", "2"))
    assert out.returncode == 0 and out.stdout.split() == ["-1.5", "-22.5"], out.stdout + out.stderr
    out = _built_and_run(gxx, tmp_path, ENHANCED_PROGRAM.replace("BLOCKS", "3"), "over")
    assert "[tensor-bounds] DataCopy" in out.stdout + out.stderr, out.stdout + out.stderr
    r = compile_src(gxx, tmp_path, '#include "kernel_operator.h"\nusing namespace AscendC;\n'
                                   "void f(LocalTensor<half> d, LocalTensor<float> s) "
                                   "{ DataCopy(d, s, DataCopyParams{}, DataCopyEnhancedParams{}); }\n")
    assert r.returncode != 0 and "not supported on the emulator: DataCopy" in r.stderr, r.stderr[-2000:]


def test_declared_only_names_compile(gxx, tmp_path):
    """BinaryConfig / DEFAULT_BINARY_CONFIG / BinaryDefaultType (kernel_struct_binary.h:37-43) and MutexID
    (kernel_common.h:143) are declared for every chip; the APIs taking them (Ascend 950's flexible scalar forms,
    Mutex) are not on A2 and stay named errors."""
    r = compile_src(gxx, tmp_path, '#include "kernel_operator.h"\nusing namespace AscendC;\n'
                                   "constexpr BinaryConfig c = DEFAULT_BINARY_CONFIG;\n"
                                   "static_assert(c.scalarTensorIndex == 1, \"CANN's default\");\n"
                                   "BinaryDefaultType t; MutexID id = 3;\n")
    assert r.returncode == 0, r.stderr[-2000:]
    r = compile_src(gxx, tmp_path, '#include "kernel_operator.h"\nusing namespace AscendC;\nMutex m{};\n')
    assert r.returncode != 0 and "not supported on the emulator: Mutex" in r.stderr
