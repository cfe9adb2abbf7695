// RowSoftmax host side: each block takes whole rows; SoftMax's tiling for one block's rows.
#include "row_softmax_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    RowSoftmaxTilingData tiling;
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    const uint32_t cols = static_cast<uint32_t>(shape.GetDim(shape.GetDimNum() - 1));
    const uint32_t rows = static_cast<uint32_t>(shape.GetShapeSize() / cols);
    uint32_t typeSize = 0;
    ge::TypeUtils::GetDataTypeLength(context->GetInputDesc(0)->GetDataType(), typeSize);
    const uint32_t align = 32 / typeSize;
    const uint32_t colsAligned = (cols + align - 1) / align * align;
    const uint32_t rowsPerBlock = rows < 8 ? rows : 8;
    ge::Shape blockShape({rowsPerBlock, colsAligned});
    const uint32_t work = AscendC::GetSoftMaxMinTmpSize(blockShape, typeSize, false);
    AscendC::SoftMaxTilingFunc(blockShape, typeSize, work, tiling.softmax);
    tiling.set_rows(rows);
    tiling.set_cols(cols);
    tiling.set_colsAligned(colsAligned);
    tiling.set_rowsPerBlock(rowsPerBlock);
    tiling.set_workBytes(work);
    context->SetBlockDim((rows + rowsPerBlock - 1) / rowsPerBlock);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    context->GetWorkspaceSizes(1)[0] = 0;
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
class RowSoftmax : public OpDef {
public:
    explicit RowSoftmax(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(RowSoftmax);
}  // namespace ops
