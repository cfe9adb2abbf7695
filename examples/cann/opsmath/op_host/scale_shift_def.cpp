// ScaleShift OpDef (ops-math layout: the definition in its own file).
#include "register/op_def_registry.h"

namespace ops {
class ScaleShift : public OpDef {
public:
    explicit ScaleShift(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND})
            .AutoContiguous();
        this->Output("y").ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND})
            .AutoContiguous();
        this->Attr("scale").AttrType(OPTIONAL).Float(1.0);
        this->Attr("shift").AttrType(OPTIONAL).Float(0.0);
        OpAICoreConfig config;
        config.DynamicCompileStaticFlag(true).DynamicShapeSupportFlag(true)
            .ExtendCfgInfo("opFile.value", "scale_shift");
        this->AICore().AddConfig("ascend910b", config);
    }
};
OP_ADD(ScaleShift);
}  // namespace ops
