// Tiling macros as CANN's CPU-debug build expands them (opkit_emu/tiling_macros.h, register/tilingdata_base.h,
// ascendc/host_api/tiling/template_argument.h). A standalone CPU-debug program: an op_host tiling header
// written for CANN (namespace optiling, REGISTER_TILING_DATA_CLASS) compiled into the kernel's translation
// unit, the layout checked against CANN's host rule, the kernel reading it with GET_TILING_DATA.
#include "kernel_operator.h"
#include "tikicpulib.h"
#include "ascendc/host_api/tiling/template_argument.h"

// ---- an op_host/<op>_tiling.h as users write it -------------------------------------------------------
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(InnerTiling)
TILING_DATA_FIELD_DEF(uint32_t, rows);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(InnerTilingOp, InnerTiling)

BEGIN_TILING_DATA_DEF(MixedTiling)
TILING_DATA_FIELD_DEF(uint8_t, flag);
TILING_DATA_FIELD_DEF(uint32_t, total);
TILING_DATA_FIELD_DEF(int64_t, big);
TILING_DATA_FIELD_DEF_ARR(uint16_t, 3, lens);
TILING_DATA_FIELD_DEF(float, scale);
TILING_DATA_FIELD_DEF_STRUCT(InnerTiling, inner);
TILING_DATA_FIELD_DEF(uint16_t, tail);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(Mixed, MixedTiling)
}  // namespace optiling

// CANN's host layout (metadef base/asc/tilingdata_base_impl.cc CheckAlignAndGenPlaceHolder): each field
// padded to its type size, a struct field to 8, the whole to 8. InnerTiling: 4 bytes, padded to 8.
static_assert(sizeof(InnerTiling) == 8, "InnerTiling size");
static_assert(offsetof(MixedTiling, flag) == 0, "flag");
static_assert(offsetof(MixedTiling, total) == 4, "total");
static_assert(offsetof(MixedTiling, big) == 8, "big");
static_assert(offsetof(MixedTiling, lens) == 16, "lens");
static_assert(offsetof(MixedTiling, scale) == 24, "scale");
static_assert(offsetof(MixedTiling, inner) == 32, "inner");
static_assert(offsetof(MixedTiling, tail) == 40, "tail");
static_assert(sizeof(MixedTiling) == 48, "MixedTiling size");
// Global scope, as in the generated header; still reachable as optiling::.
static_assert(std::is_same<MixedTiling, optiling::MixedTiling>::value, "same struct");
static_assert(std::is_same<TypeFromId<DT_FLOAT16>::type, half>::value, "TypeFromId");
ASCENDC_TPL_ARGS_DECL(Mixed, ASCENDC_TPL_UINT_DECL(mode, 1, ASCENDC_TPL_UI_LIST, 0, 1));
ASCENDC_TPL_SEL(ASCENDC_TPL_ARGS_SEL(ASCENDC_TPL_UINT_SEL(mode, ASCENDC_TPL_UI_LIST, 0, 1)));

extern "C" __global__ __aicore__ void read_tiling(GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA(td, tiling);  // the registered struct, as in an msOpGen project's kernel
  GET_TILING_DATA_MEMBER(MixedTiling, big, big, tiling);
  GET_TILING_DATA_PTR_WITH_STRUCT(MixedTiling, tp, tiling);
  AscendC::GlobalTensor<int64_t> o;
  o.SetGlobalBuffer((__gm__ int64_t*)out, 12);
  if (AscendC::GetBlockIdx() != 0) return;
  o.SetValue(0, td.flag);
  o.SetValue(1, td.total);
  o.SetValue(2, big);
  o.SetValue(3, td.lens[0] + td.lens[1] + td.lens[2]);
  o.SetValue(4, static_cast<int64_t>(td.scale * 4));
  o.SetValue(5, td.inner.rows);
  o.SetValue(6, tp->tail);
  o.SetValue(7, TILING_KEY_IS(7) ? 1 : 0);
  o.SetValue(8, TILING_KEY_LIST(1, 7, 9) ? 1 : 0);
  o.SetValue(9, TILING_KEY_LIST(2, 3) ? 1 : 0);
}

extern "C" __global__ __aicore__ void read_default(GM_ADDR out, GM_ADDR tiling) {
  REGISTER_TILING_DEFAULT(InnerTiling);  // the kernel's own default wins over the registered one
  GET_TILING_DATA(td, tiling);
  AscendC::GlobalTensor<int64_t> o;
  o.SetGlobalBuffer((__gm__ int64_t*)out, 1);
  if (AscendC::GetBlockIdx() == 0) o.SetValue(0, td.rows);
}

int main(int argc, char** argv) {
  const bool short_tiling = argc > 1;
  auto* out = reinterpret_cast<int64_t*>(AscendC::GmAlloc(12 * sizeof(int64_t)));
  auto* tiling = reinterpret_cast<uint8_t*>(AscendC::GmAlloc(short_tiling ? 40 : sizeof(MixedTiling)));
  if (!short_tiling) {
    // Bytes at CANN's host offsets (not through the struct): flag 0, total 4, big 8, lens 16, scale 24, inner 32, tail 40.
    std::memset(tiling, 0, sizeof(MixedTiling));
    tiling[0] = 3;
    uint32_t total = 1000; std::memcpy(tiling + 4, &total, 4);
    int64_t big = -5000000000LL; std::memcpy(tiling + 8, &big, 8);
    uint16_t lens[3] = {1, 2, 3}; std::memcpy(tiling + 16, lens, 6);
    float scale = 2.5f; std::memcpy(tiling + 24, &scale, 4);
    uint32_t rows = 77; std::memcpy(tiling + 32, &rows, 4);
    uint16_t tail = 9; std::memcpy(tiling + 40, &tail, 2);
  }
  ICPU_SET_TILING_KEY(7);
  ICPU_RUN_KF(read_tiling, 2, reinterpret_cast<GM_ADDR>(out), tiling);
  for (int i = 0; i < 10; ++i) std::printf("%lld ", static_cast<long long>(out[i]));
  ICPU_RUN_KF(read_default, 1, reinterpret_cast<GM_ADDR>(out), tiling);
  std::printf("| %lld\n", static_cast<long long>(out[0]));
  AscendC::GmFree(out);
  AscendC::GmFree(tiling);
  return 0;
}
