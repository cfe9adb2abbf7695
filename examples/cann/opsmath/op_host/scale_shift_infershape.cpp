// ScaleShift shape inference: y has x's shape.
#include "register/op_impl_registry.h"

namespace ops {
static ge::graphStatus InferShapeScaleShift(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    gert::Shape* y = context->GetOutputShape(0);
    if (x == nullptr || y == nullptr) {
        return ge::GRAPH_FAILED;
    }
    *y = *x;
    return ge::GRAPH_SUCCESS;
}
IMPL_OP_INFERSHAPE(ScaleShift).InferShape(InferShapeScaleShift);
}  // namespace ops
