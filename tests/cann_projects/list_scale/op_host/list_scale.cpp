// ListScale host side: the tensor count from the node's input instance info, the list attr, one block per tensor.
#include "list_scale_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    ListScaleTilingData tiling;
    const uint32_t count =
        static_cast<uint32_t>(context->GetComputeNodeInfo()->GetInputInstanceInfo(0)->GetInstanceNum());
    const gert::TypedContinuousVector<float>* scales = context->GetAttrs()->GetListFloat(0);
    const float* bias = context->GetAttrs()->GetAttrPointer<float>(1);
    if (count == 0 || count > LIST_SCALE_MAX || scales == nullptr || scales->GetSize() != count) {
        return ge::GRAPH_FAILED;   // one scale per tensor, at most LIST_SCALE_MAX tensors
    }
    uint32_t lengths[LIST_SCALE_MAX] = {};
    float s[LIST_SCALE_MAX] = {};
    for (uint32_t i = 0; i < count; ++i) {
        lengths[i] = static_cast<uint32_t>(context->GetDynamicInputShape(0, i)->GetStorageShape().GetShapeSize());
        s[i] = scales->GetData()[i];
    }
    if (context->GetDynamicInputShape(0, count) != nullptr) {
        return ge::GRAPH_FAILED;   // past the list: CANN's context returns nullptr
    }
    tiling.set_count(count);
    tiling.set_tile(2048);
    tiling.set_bias(bias == nullptr ? 0.0f : *bias);
    tiling.set_lengths(lengths);
    tiling.set_scales(s);
    context->SetBlockDim(count);
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
    for (size_t i = 0; context->GetInputShape(i) != nullptr; ++i) {
        *context->GetOutputShape(i) = *context->GetInputShape(i);
    }
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class ListScale : public OpDef {
public:
    explicit ListScale(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(DYNAMIC)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(DYNAMIC)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("scales").AttrType(OPTIONAL).ListFloat({2.0f, 0.5f});
        this->Attr("bias").AttrType(OPTIONAL).Float(0.0);
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ListScale);
}  // namespace ops
