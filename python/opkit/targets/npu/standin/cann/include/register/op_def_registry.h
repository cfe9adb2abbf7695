// opkit --check-only STAND-IN for CANN's <cann>/include/register/op_def_registry.h (and the ge:: / gert::
// headers it brings in). NOT CANN's header: it declares only the names opkit's generated op_host/<op>.cpp
// uses, with the spelling of CANN's public op-project API (docs/facts/ascendc-facts.md: OpDef, gert contexts), so the
// check can compile op_host/<op>.cpp the way CANN's raw op_host compile does (C++11, old ABI, this
// include folder only). A signature that differs in the real CANN is caught only by a build with CANN.
#ifndef OPKIT_STANDIN_OP_DEF_REGISTRY_H
#define OPKIT_STANDIN_OP_DEF_REGISTRY_H
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace ge {
typedef uint32_t graphStatus;
const graphStatus GRAPH_SUCCESS = 0;
const graphStatus GRAPH_FAILED = 0xFFFFFFFF;
enum DataType { DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT64 = 9, DT_BOOL = 12,
                DT_BF16 = 27 };
enum Format { FORMAT_ND = 2 };
}  // namespace ge

namespace gert {
class Shape {
 public:
  size_t GetDimNum() const;
  int64_t GetDim(size_t i) const;
  void SetDimNum(size_t n);
  Shape& AppendDim(int64_t d);
};
class StorageShape {
 public:
  const Shape& GetStorageShape() const;
  const Shape& GetOriginShape() const;
};
class CompileTimeTensorDesc {
 public:
  ge::DataType GetDataType() const;
};
class RuntimeAttrs {
 public:
  template <typename T> const T* GetAttrPointer(size_t index) const;
};
class TilingData {
 public:
  void* GetData();
  size_t GetCapacity() const;
  void SetDataSize(size_t size);
};
class TilingContext {
 public:
  const StorageShape* GetInputShape(size_t i) const;
  const StorageShape* GetOutputShape(size_t i) const;
  const CompileTimeTensorDesc* GetInputDesc(size_t i) const;
  const CompileTimeTensorDesc* GetOutputDesc(size_t i) const;
  const RuntimeAttrs* GetAttrs() const;
  TilingData* GetRawTilingData();
  ge::graphStatus SetBlockDim(uint32_t block_dim);
  ge::graphStatus SetTilingKey(uint64_t key);
  size_t* GetWorkspaceSizes(size_t n);
  const void* GetPlatformInfo() const;
};
class InferShapeContext {
 public:
  const Shape* GetInputShape(size_t i) const;
  Shape* GetOutputShape(size_t i);
  const RuntimeAttrs* GetAttrs() const;
};
class InferDataTypeContext {
 public:
  ge::DataType GetInputDataType(size_t i) const;
  ge::graphStatus SetOutputDataType(size_t i, ge::DataType t);
};
}  // namespace gert

namespace ops {
enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3 };
class OpParamDef {
 public:
  OpParamDef& ParamType(Option t);
  OpParamDef& DataType(std::vector<ge::DataType> types);
  OpParamDef& Format(std::vector<ge::Format> formats);
  OpParamDef& InitValue(uint64_t value);
};
class OpAttrDef {
 public:
  OpAttrDef& AttrType(Option t);
  OpAttrDef& Bool();
  OpAttrDef& Bool(bool v);
  OpAttrDef& Float();
  OpAttrDef& Float(float v);
  OpAttrDef& Int();
  OpAttrDef& Int(int64_t v);
  OpAttrDef& String();
  OpAttrDef& String(const char* v);
};
class OpAICoreDef {
 public:
  OpAICoreDef& SetTiling(ge::graphStatus (*func)(gert::TilingContext*));
  OpAICoreDef& AddConfig(const char* soc);
};
class OpDef {
 public:
  explicit OpDef(const char* type);
  OpParamDef& Input(const char* name);
  OpParamDef& Output(const char* name);
  OpAttrDef& Attr(const char* name);
  OpDef& SetInferShape(ge::graphStatus (*func)(gert::InferShapeContext*));
  OpDef& SetInferDataType(ge::graphStatus (*func)(gert::InferDataTypeContext*));
  OpAICoreDef& AICore();
};
}  // namespace ops

// CANN's OP_ADD registers the class under its name; here: a static instance, which is enough to compile.
#define OP_ADD(opType) static ::ops::opType g_opkit_standin_##opType(#opType)
#endif
