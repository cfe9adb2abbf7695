// ScaleShift tiling (ops-math layout): the plain tiling struct through GetTilingData, the template
// arguments through GET_TPL_TILING_KEY.
#include "register/op_impl_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "../op_kernel/scale_shift_tiling_data.h"
#include "../op_kernel/scale_shift_tiling_key.h"

namespace optiling {
constexpr int64_t UB_TILES = 4;   // input and output, double-buffered
constexpr int64_t BLOCK_BYTES = 32;

struct ScaleShiftCompileInfo {};

static ge::graphStatus ScaleShiftTilingFunc(gert::TilingContext* context)
{
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const int64_t cores = platform.GetCoreNumAiv();
    const ge::DataType dtype = context->GetInputDesc(0)->GetDataType();
    if (dtype != ge::DT_FLOAT && dtype != ge::DT_FLOAT16) {
        return ge::GRAPH_FAILED;
    }
    const int64_t typeSize = dtype == ge::DT_FLOAT ? 4 : 2;
    const int64_t align = BLOCK_BYTES / typeSize;
    const int64_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();

    ScaleShiftTilingData* tiling = context->GetTilingData<ScaleShiftTilingData>();
    if (tiling == nullptr) {
        return ge::GRAPH_FAILED;
    }
    int64_t blockFactor = (total + cores - 1) / cores;
    blockFactor = (blockFactor + align - 1) / align * align;
    const int64_t usedCores = (total + blockFactor - 1) / blockFactor;
    // fp32 work buffer per element besides the I/O tiles
    const int64_t perElem = typeSize * UB_TILES + 4;
    int64_t ubFactor = static_cast<int64_t>(ubSize) / perElem / align * align;
    if (ubFactor > blockFactor) {
        ubFactor = blockFactor;
    }
    tiling->totalNum = total;
    tiling->blockFactor = blockFactor;
    tiling->ubFactor = ubFactor;
    const auto* attrs = context->GetAttrs();
    tiling->scale = *attrs->GetAttrPointer<float>(0);
    tiling->shift = *attrs->GetAttrPointer<float>(1);

    const bool aligned = total % align == 0 && blockFactor % align == 0;
    const uint64_t key = GET_TPL_TILING_KEY(static_cast<uint64_t>(dtype), aligned ? 1 : 0);
    context->SetTilingKey(key);
    context->SetBlockDim(static_cast<uint32_t>(usedCores));
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}

static ge::graphStatus TilingParseForScaleShift(gert::TilingParseContext* context)
{
    (void)context;
    return ge::GRAPH_SUCCESS;
}

IMPL_OP_OPTILING(ScaleShift).Tiling(ScaleShiftTilingFunc).TilingParse<ScaleShiftCompileInfo>(TilingParseForScaleShift);
}  // namespace optiling
