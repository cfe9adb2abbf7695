// ScaledAdd host side: tiling function, shape inference and the OpDef (msOpGen layout).
#include "scaled_add_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
constexpr uint32_t BLOCK_BYTES = 32;
constexpr uint32_t QUEUE_TILES = 6;   // x, y, z double-buffered

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    ScaledAddTilingData tiling;
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t cores = platform.GetCoreNumAiv();

    const uint32_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    const uint32_t typeSize = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT ? 4 : 2;
    const uint32_t align = BLOCK_BYTES / typeSize;
    // fp16 computes in fp32: two more fp32 tiles per element.
    const uint32_t bytesPerElem = typeSize * QUEUE_TILES + (typeSize == 2 ? 8 : 0);
    uint32_t tile = static_cast<uint32_t>(ubSize / 2 / bytesPerElem) / align * align;
    if (tile > 4096) tile = 4096;

    uint32_t perBlock = (total + cores - 1) / cores;
    perBlock = (perBlock + align - 1) / align * align;
    if (perBlock == 0) perBlock = align;
    const uint32_t blocks = (total + perBlock - 1) / perBlock;

    const float* alpha = context->GetAttrs()->GetAttrPointer<float>(0);
    tiling.set_totalLength(total);
    tiling.set_blockLength(perBlock);
    tiling.set_tileLength(tile < perBlock ? tile : perBlock);
    tiling.set_alpha(*alpha);
    context->SetBlockDim(blocks == 0 ? 1 : blocks);
    context->SetTilingKey(total % align == 0 ? 1 : 2);   // 2: the last tile needs DataCopyPad
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class ScaledAdd : public OpDef {
public:
    explicit ScaledAdd(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("y").ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("z").ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("alpha").AttrType(OPTIONAL).Float(1.0);
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ScaledAdd);
}  // namespace ops
