// What an op_host tiling header's host includes become in a KERNEL translation unit (`opkit cflags --cann`;
// docs/cann.md "Compiling a kernel in place"). CANN's build never compiles host code with a kernel: it generates
// the kernel's tiling structs from the op's registrations (python/opkit/cannproject/tiling_view.py does the same
// for import-cann). A kernel compiled in place with its op_host tiling header included first -- as CANN's own CPU
// tests do -- still reads that header's host includes (register/op_impl_registry.h, log/log.h, ...); here they
// declare the host names such a header mentions in declarations (log and check macros that compile to nothing,
// the gert / ge / fe / optiling names as incomplete types), so the tiling-data blocks compile, and a header whose
// inline host code calls into CANN's host API fails with g++ naming the incomplete type.
// Not opkit_cann/host.h: the kernel side defines DT_FLOAT etc. as macros (kernel_type.h), the host ge::DataType as
// an enum, so the two views cannot share a translation unit.
#pragma once
#include <cstdint>
#include <string>
#include "register/tilingdata_base.h"

namespace ge {
enum DataType : int;   // opaque: usable in declarations; the values are the kernel side's DT_* macros
enum Format : int;
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFF;
class Shape;
class AscendString;
}  // namespace ge
namespace gert {
class TilingContext;
class TilingParseContext;
class InferShapeContext;
class InferDataTypeContext;
class Shape;
class StorageShape;
class Tensor;
class CompileTimeTensorDesc;
}  // namespace gert
namespace fe { class PlatFormInfos; }
namespace platform_ascendc {
class PlatformAscendC;
enum class CoreMemType;
enum class SocVersion;
}  // namespace platform_ascendc
enum class NpuArch : uint32_t;
namespace ops { class OpDef; }

// log/log.h (hicann/opbase include/op_common/log/log.h:1074-1100): no logging in a kernel view
#define OP_LOGD(...) ((void)0)
#define OP_LOGI(...) ((void)0)
#define OP_LOGW(...) ((void)0)
#define OP_LOGE(...) ((void)0)
#define OP_LOGE_WITHOUT_REPORT(...) ((void)0)
#define OP_CHECK_IF(cond, log, ret) ((void)0)
#define OP_CHECK_NULL_WITH_CONTEXT(ctx, ptr) ((void)0)
// registrations (register/op_impl_registry.h, op_def_registry.h): a kernel view registers nothing
#define IMPL_OP_OPTILING(op) [[maybe_unused]] static int opkit_kernel_view_tiling_##op
#define IMPL_OP_INFERSHAPE(op) [[maybe_unused]] static int opkit_kernel_view_infer_##op
#define OP_ADD(op, ...) [[maybe_unused]] static int opkit_kernel_view_op_##op
