// Host side of CANN's template-argument tiling keys, written here after mirror-cann/asc-devkit
// include/utils/tiling/template_argument.h and impl/utils/tiling/template_argument.cpp (read, not copied):
// ASCENDC_TPL_ARGS_DECL lists the kernel's template parameters (DTYPE / FORMAT / UINT / BOOL, each with a bit
// width), ASCENDC_TPL_SEL the combinations the build instantiates; GET_TPL_TILING_KEY(v...) packs the values
// in declaration order, low bits first, a UINT parameter as its index in the declared value list.
// Both tables are also registered for opkit's runner, which decodes keys into template arguments.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <utility>
#include <vector>

#include "opkit_cann/host.h"

#define ASCENDC_TPL_AIV_ONLY 0
#define ASCENDC_TPL_AIC_ONLY 1
#define ASCENDC_TPL_MIX_AIV_1_0 4
#define ASCENDC_TPL_MIX_AIC_1_0 5
#define ASCENDC_TPL_MIX_AIC_1_1 6
#define ASCENDC_TPL_MIX_AIC_1_2 7
#define ASCENDC_TPL_AICORE 8
#define ASCENDC_TPL_VECTORCORE 9
#define ASCENDC_TPL_MIX_AICORE 10
#define ASCENDC_TPL_MIX_VECTOR_CORE 11
#define ASCENDC_TPL_1_BW 1
#define ASCENDC_TPL_2_BW 2
#define ASCENDC_TPL_4_BW 4
#define ASCENDC_TPL_8_BW 8
#define ASCENDC_TPL_DTYPE 0
#define ASCENDC_TPL_FORMAT 1
#define ASCENDC_TPL_UINT 2
#define ASCENDC_TPL_BOOL 3
constexpr uint32_t ASCENDC_TPL_KERNEL_TYPE = 4;
constexpr uint32_t ASCENDC_TPL_DETERMINISTIC = 5;
constexpr uint32_t ASCENDC_TPL_SHARED_KERNEL_TYPE = 6;
#define ASCENDC_TPL_INPUT_BIAS 100000000
#define ASCENDC_TPL_OUTPUT_BIAS 900000000
#define ASCENDC_TPL_INPUT(x) (ASCENDC_TPL_INPUT_BIAS + (x))
#define ASCENDC_TPL_OUTPUT(x) (ASCENDC_TPL_OUTPUT_BIAS + (x))
#define ASCENDC_TPL_UI_RANGE 0
#define ASCENDC_TPL_UI_LIST 1
#define ASCENDC_TPL_UI_MIX 2
constexpr uint64_t INVALID_TILING_KEY = 0xFFFFFFFFFFFFFFFFull;

struct ParamStruct {
  const char* name;
  uint32_t paramType;
  uint8_t bitWidth;
  std::vector<uint64_t> vals;
  const char* macroType;
  ParamStruct(const char* n, uint32_t t, uint8_t bw, std::vector<uint64_t> v, const char* m)
      : name(n), paramType(t), bitWidth(bw), vals(std::move(v)), macroType(m) {
    if (t == ASCENDC_TPL_UINT) expand();
  }
  // UI_LIST: the values; UI_RANGE: a count then [lo, hi] pairs; UI_MIX: ranges then listed values.
  void expand() {
    if (vals.empty()) return;
    const uint64_t flag = vals[0];
    if (flag == ASCENDC_TPL_UI_LIST) {
      vals.erase(vals.begin());
      return;
    }
    std::vector<uint64_t> out;
    const size_t n = vals.size() > 1 ? vals[1] : 0;
    for (size_t i = 1; i <= n && 2 * i + 1 < vals.size(); ++i)
      for (uint64_t v = vals[2 * i]; v <= vals[2 * i + 1]; ++v) out.push_back(v);
    if (flag == ASCENDC_TPL_UI_MIX)
      for (size_t i = 2 + 2 * n; i < vals.size(); ++i) out.push_back(vals[i]);
    vals = std::move(out);
  }
};
using TilingDeclareParams = std::vector<ParamStruct>;
using TilingSelectParams = std::vector<std::vector<ParamStruct>>;

namespace opkit_cann {
struct TplTables {
  const TilingDeclareParams* decl = nullptr;
  const TilingSelectParams* sel = nullptr;
};
inline TplTables& tpl_tables() {
  static TplTables t;
  return t;
}
struct TplRegistrar {
  explicit TplRegistrar(const TilingDeclareParams* d) { tpl_tables().decl = d; }
  explicit TplRegistrar(const TilingSelectParams* s) { tpl_tables().sel = s; }
};
}  // namespace opkit_cann

#define ASCENDC_TPL_DTYPE_DECL(x, ...) ParamStruct{#x, ASCENDC_TPL_DTYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "DECL"}
#define ASCENDC_TPL_DATATYPE_DECL(x, ...) ParamStruct{#x, ASCENDC_TPL_DTYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "DECL"}
#define ASCENDC_TPL_FORMAT_DECL(x, ...) ParamStruct{#x, ASCENDC_TPL_FORMAT, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "DECL"}
#define ASCENDC_TPL_UINT_DECL(x, bw, ...) ParamStruct{#x, ASCENDC_TPL_UINT, bw, {__VA_ARGS__}, "DECL"}
#define ASCENDC_TPL_BOOL_DECL(x, ...) ParamStruct{#x, ASCENDC_TPL_BOOL, ASCENDC_TPL_1_BW, {__VA_ARGS__}, "DECL"}
#define ASCENDC_TPL_KERNEL_TYPE_DECL(x, ...) \
  ParamStruct{#x, ASCENDC_TPL_SHARED_KERNEL_TYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "DECL"}
#define ASCENDC_TPL_ARGS_DECL(x, ...)                              \
  static TilingDeclareParams g_tilingDeclareParams{__VA_ARGS__}; \
  static ::opkit_cann::TplRegistrar g_opkit_tpl_decl_(&g_tilingDeclareParams)

#define ASCENDC_TPL_DTYPE_SEL(x, ...) ParamStruct{#x, ASCENDC_TPL_DTYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_DATATYPE_SEL(x, ...) ParamStruct{#x, ASCENDC_TPL_DTYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_FORMAT_SEL(x, ...) ParamStruct{#x, ASCENDC_TPL_FORMAT, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_UINT_SEL(x, ...) ParamStruct{#x, ASCENDC_TPL_UINT, 0, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_BOOL_SEL(x, ...) ParamStruct{#x, ASCENDC_TPL_BOOL, ASCENDC_TPL_1_BW, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_TILING_STRUCT_SEL(x, ...)
#define ASCENDC_TPL_KERNEL_TYPE_SEL(...) \
  ParamStruct{"kernel_type", ASCENDC_TPL_KERNEL_TYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_DETERMINISTIC_SEL(...) \
  ParamStruct{"deterministic", ASCENDC_TPL_DETERMINISTIC, ASCENDC_TPL_1_BW, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_SHARED_KERNEL_TYPE_SEL(x, ...) \
  ParamStruct{#x, ASCENDC_TPL_SHARED_KERNEL_TYPE, ASCENDC_TPL_8_BW, {__VA_ARGS__}, "SEL"}
#define ASCENDC_TPL_ARGS_SEL(...) {__VA_ARGS__}
#define ASCENDC_TPL_SEL(...)                                      \
  static TilingSelectParams g_tilingSelectParams{__VA_ARGS__}; \
  static ::opkit_cann::TplRegistrar g_opkit_tpl_sel_(&g_tilingSelectParams)

namespace AscendC {
inline uint64_t OpkitEncodeTilingKey(const TilingDeclareParams& decl, std::initializer_list<uint64_t> args) {
  uint64_t key = 0;
  unsigned bits = 0;
  auto it = args.begin();
  for (size_t i = 0; i < decl.size() && it != args.end(); ++i, ++it) {
    uint64_t v = *it;
    if (decl[i].paramType == ASCENDC_TPL_UINT) {
      auto f = std::find(decl[i].vals.begin(), decl[i].vals.end(), v);
      if (f == decl[i].vals.end()) {
        std::printf("[ERROR] ASCENDC_TPL_UINT_SEL %s value %llu does not exist in ASCENDC_TPL_UINT_DECL\n",
                    decl[i].name, static_cast<unsigned long long>(v));
        return INVALID_TILING_KEY;
      }
      v = static_cast<uint64_t>(f - decl[i].vals.begin());
    }
    key |= v << bits;
    bits += decl[i].bitWidth;
  }
  return bits > 64 ? INVALID_TILING_KEY : key;
}
}  // namespace AscendC
#define GET_TPL_TILING_KEY(...) ::AscendC::OpkitEncodeTilingKey(g_tilingDeclareParams, {__VA_ARGS__})
#define ASCENDC_TPL_SEL_PARAM(context, ...)          \
  do {                                               \
    uint64_t key = GET_TPL_TILING_KEY(__VA_ARGS__); \
    (context)->SetTilingKey(key);                    \
  } while (0)
