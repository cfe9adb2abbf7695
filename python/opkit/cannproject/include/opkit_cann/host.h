// opkit's CPU stand-in for the host side of a CANN custom-op project: the ge:: / gert:: / fe:: / ops:: names an
// op_host/<op>.cpp uses (TilingFunc on a gert::TilingContext, InferShape, the OpDef), written here and
// runnable, so opkit can run a project's own tiling function per test case (docs/cann.md). NOT CANN's code:
// the names and signatures follow CANN's public headers (read, not copied):
//   hicann/metadef inc/external/exe_graph/runtime/{tiling_context,extended_kernel_context,runtime_attrs,shape,
//     storage_shape,tiling_data}.h, inc/external/graph/types.h (DataType / Format numbers),
//     inc/external/asc/register/op_def_registry.h (OpDef, OP_ADD)
//   mirror-cann/asc-devkit include/utils/tiling/platform/platform_ascendc.h (PlatformAscendC, CoreMemType)
// What the registration macros record (inputs, dtypes, attrs, the tiling function) is read back by
// python/opkit/cannproject through the runner (runtime/runner.cpp).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <functional>
#include <iostream>  // CANN's host headers bring it in: op_host code uses std::cout unincluded
#include <initializer_list>
#include <map>
#include <array>
#include <cstdio>
#include <limits>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <memory>
#include <string>
#include <vector>

#include "securec.h"

#include "graph/c_types.h"  // C_DT_* / C_FORMAT_* (python/opkit/include: the kernel side needs them too)

namespace ge {
using char_t = char;
using graphStatus = uint32_t;
const graphStatus GRAPH_SUCCESS = 0;
const graphStatus GRAPH_FAILED = 0xFFFFFFFF;
const graphStatus GRAPH_PARAM_INVALID = 50331649;
const uint32_t SUCCESS = 0;
const uint32_t FAILED = 0xFFFFFFFF;
enum DataType {
  DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 6, DT_UINT16 = 7, DT_UINT32 = 8,
  DT_INT64 = 9, DT_UINT64 = 10, DT_DOUBLE = 11, DT_BOOL = 12, DT_STRING = 13, DT_DUAL_SUB_INT8 = 14,
  DT_DUAL_SUB_UINT8 = 15, DT_COMPLEX64 = 16, DT_COMPLEX128 = 17, DT_QINT8 = 18, DT_QINT16 = 19, DT_QINT32 = 20,
  DT_QUINT8 = 21, DT_QUINT16 = 22, DT_RESOURCE = 23, DT_STRING_REF = 24, DT_DUAL = 25, DT_VARIANT = 26, DT_BF16 = 27,
  DT_UNDEFINED = 28, DT_INT4 = 29, DT_UINT1 = 30, DT_INT2 = 31, DT_UINT2 = 32, DT_COMPLEX32 = 33, DT_MAX = 42
};
enum Format {
  // the values of CANN's ge::Format (metadef graph/types.h: consecutive from FORMAT_NCHW = 0)
  FORMAT_NCHW = 0, FORMAT_NHWC = 1, FORMAT_ND = 2, FORMAT_NC1HWC0 = 3, FORMAT_FRACTAL_Z = 4, FORMAT_NC1C0HWPAD = 5,
  FORMAT_NHWC1C0 = 6, FORMAT_FSR_NCHW = 7, FORMAT_FRACTAL_DECONV = 8, FORMAT_C1HWNC0 = 9, FORMAT_NC1HWC0_C04 = 12,
  FORMAT_FRACTAL_Z_C04 = 13, FORMAT_CHWN = 14, FORMAT_HWCN = 16, FORMAT_NC1KHKWHWC0 = 17, FORMAT_C1HWNCoC0 = 25,
  FORMAT_MD = 26, FORMAT_NDHWC = 27, FORMAT_FRACTAL_ZZ = 28, FORMAT_FRACTAL_NZ = 29, FORMAT_NCDHW = 30, FORMAT_DHWCN = 31, FORMAT_NDC1HWC0 = 32, FORMAT_FRACTAL_Z_3D = 33,
  FORMAT_CN = 34, FORMAT_NC = 35, FORMAT_RESERVED = 40, FORMAT_ALL = 41, FORMAT_NULL = 42, FORMAT_MAX = 0xff
};
// Byte size per element (graph/types.h GetSizeByDataType); -1 where not a whole byte count.
inline int GetSizeByDataType(DataType t) {
  switch (t) {
    case DT_FLOAT: case DT_INT32: case DT_UINT32: case DT_QINT32: case DT_COMPLEX32: return 4;
    case DT_FLOAT16: case DT_BF16: case DT_INT16: case DT_UINT16: case DT_QINT16: case DT_QUINT16: return 2;
    case DT_INT8: case DT_UINT8: case DT_BOOL: case DT_QINT8: case DT_QUINT8: return 1;
    case DT_INT64: case DT_UINT64: case DT_DOUBLE: case DT_COMPLEX64: return 8;
    case DT_COMPLEX128: return 16;
    default: return -1;
  }
}
// Bytes of element_count elements of data_type (graph/types.h GetSizeInBytes): two int4 per byte; -1 for a type
// without a byte size.
inline int64_t GetSizeInBytes(int64_t element_count, DataType t) {
  if (t == DT_INT4) return (element_count + 1) / 2;
  const int n = GetSizeByDataType(t);
  return n < 0 ? -1 : element_count * n;
}
class AscendString {
 public:
  AscendString() = default;
  AscendString(const char* s) : s_(s ? s : "") {}  // NOLINT: implicit as in CANN
  const char* GetString() const { return s_.c_str(); }
  size_t GetLength() const { return s_.size(); }
  bool operator<(const AscendString& o) const { return s_ < o.s_; }
  bool operator==(const AscendString& o) const { return s_ == o.s_; }
 private:
  std::string s_;
};
// ge::Shape (graph/types.h): the shape the advanced-API tiling functions take (SoftMaxTilingFunc(ge::Shape...)).
class Shape {
 public:
  Shape() = default;
  explicit Shape(const std::vector<int64_t>& dims) : dims_(dims) {}
  size_t GetDimNum() const { return dims_.size(); }
  int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
  void SetDim(size_t i, int64_t v) { if (i < dims_.size()) dims_[i] = v; }
  std::vector<int64_t> GetDims() const { return dims_; }
  int64_t GetShapeSize() const {
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    return dims_.empty() ? 0 : n;
  }
 private:
  std::vector<int64_t> dims_;
};
// the primary format of a storage format (graph/types.h: the low byte; the rest carries sub-format / C0)
inline int32_t GetPrimaryFormat(int32_t format) { return format & 0xff; }
class TypeUtils {
 public:
  static std::string DataTypeToSerialString(DataType t) {
    static const std::map<int, const char*> names = {{DT_FLOAT, "DT_FLOAT"}, {DT_FLOAT16, "DT_FLOAT16"},
        {DT_BF16, "DT_BF16"}, {DT_INT8, "DT_INT8"}, {DT_UINT8, "DT_UINT8"}, {DT_INT16, "DT_INT16"},
        {DT_INT32, "DT_INT32"}, {DT_INT64, "DT_INT64"}, {DT_UINT32, "DT_UINT32"}, {DT_UINT64, "DT_UINT64"},
        {DT_BOOL, "DT_BOOL"}, {DT_DOUBLE, "DT_DOUBLE"}, {DT_COMPLEX64, "DT_COMPLEX64"}};
    auto it = names.find(t);
    return it == names.end() ? "DT_" + std::to_string(static_cast<int>(t)) : it->second;
  }
  static std::string FormatToSerialString(Format f) {
    switch (f) {
      case FORMAT_ND: return "ND";
      case FORMAT_NCHW: return "NCHW";
      case FORMAT_NHWC: return "NHWC";
      default: return "FORMAT_" + std::to_string(static_cast<int>(f));
    }
  }
  static bool GetDataTypeLength(DataType t, uint32_t& len) {
    int n = GetSizeByDataType(t);
    if (n < 0) return false;
    len = static_cast<uint32_t>(n);
    return true;
  }
};
}  // namespace ge

namespace fe {
// The chip the tiling runs for (opkit's profiles, python/opkit/include/opkit/platform.h), filled by the runner.
class PlatFormInfos {
 public:
  std::string soc = "Ascend910B1";
  uint32_t core_aiv = 48, core_aic = 24, core_num = 48;
  uint64_t ub_bytes = 196608, l1_bytes = 524288, l0a_bytes = 65536, l0b_bytes = 65536, l0c_bytes = 131072;
  uint64_t l2_bytes = 201326592, hbm_bytes = 64ull << 30;
  uint32_t lib_api_workspace = 16u * 1024u * 1024u;
  int soc_kind = 1;  // platform_ascendc::SocVersion
  bool GetPlatformRes(const std::string&, const std::string&, std::string&) const { return false; }
  uint32_t GetCoreNum() const { return core_num; }
};
}  // namespace fe

namespace gert {
class Shape {
 public:
  static constexpr size_t kMaxDimNum = 25;
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) {
    for (int64_t d : dims) AppendDim(d);
  }
  size_t GetDimNum() const { return dim_num_; }
  void SetDimNum(size_t n) { dim_num_ = n < kMaxDimNum ? n : kMaxDimNum; }
  int64_t GetDim(size_t i) const { return i < dim_num_ ? dims_[i] : 0; }
  void SetDim(size_t i, int64_t v) { if (i < kMaxDimNum) dims_[i] = v; }
  Shape& AppendDim(int64_t v) {
    if (dim_num_ < kMaxDimNum) dims_[dim_num_++] = v;
    return *this;
  }
  int64_t GetShapeSize() const {
    int64_t n = 1;
    for (size_t i = 0; i < dim_num_; ++i) n *= dims_[i];
    return n;
  }
  bool IsScalar() const { return dim_num_ == 0; }
  void SetScalar() { dim_num_ = 0; }
  const int64_t& operator[](size_t i) const { return dims_[i]; }
  int64_t& operator[](size_t i) { return dims_[i]; }
  bool operator==(const Shape& o) const {
    if (dim_num_ != o.dim_num_) return false;
    for (size_t i = 0; i < dim_num_; ++i) if (dims_[i] != o.dims_[i]) return false;
    return true;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }
 private:
  size_t dim_num_ = 0;
  int64_t dims_[kMaxDimNum] = {};
};
class StorageShape {
 public:
  StorageShape() = default;
  StorageShape(std::initializer_list<int64_t> origin, std::initializer_list<int64_t> storage)
      : origin_(origin), storage_(storage) {}
  const Shape& GetOriginShape() const { return origin_; }
  const Shape& GetStorageShape() const { return storage_; }
  const Shape& GetShape() const { return storage_; }
  Shape& MutableOriginShape() { return origin_; }
  Shape& MutableStorageShape() { return storage_; }
  Shape& MutableShape() { return storage_; }
 private:
  Shape origin_, storage_;
};
class StorageFormat {
 public:
  ge::Format GetOriginFormat() const { return origin; }
  ge::Format GetStorageFormat() const { return storage; }
  ge::Format origin = ge::FORMAT_ND, storage = ge::FORMAT_ND;
};
class CompileTimeTensorDesc {
 public:
  ge::DataType GetDataType() const { return dtype; }
  ge::Format GetOriginFormat() const { return format.origin; }
  ge::Format GetStorageFormat() const { return format.storage; }
  const StorageFormat& GetFormat() const { return format; }
  void SetDataType(ge::DataType t) { dtype = t; }
  ge::DataType dtype = ge::DT_FLOAT;
  StorageFormat format;
};
class Tensor {
 public:
  const StorageShape& GetShape() const { return shape; }
  const Shape& GetStorageShape() const { return shape.GetStorageShape(); }
  const Shape& GetOriginShape() const { return shape.GetOriginShape(); }
  StorageShape& MutableShape() { return shape; }
  int64_t GetShapeSize() const { return shape.GetStorageShape().GetShapeSize(); }
  ge::DataType GetDataType() const { return dtype; }
  ge::Format GetStorageFormat() const { return format.storage; }
  ge::Format GetOriginFormat() const { return format.origin; }
  const StorageFormat& GetFormat() const { return format; }
  template <class T> const T* GetData() const { return reinterpret_cast<const T*>(data.empty() ? nullptr : data.data()); }
  const void* GetAddr() const { return data.empty() ? nullptr : data.data(); }
  size_t GetSize() const { return data.size(); }
  StorageShape shape;
  ge::DataType dtype = ge::DT_FLOAT;
  StorageFormat format;
  std::vector<uint8_t> data;  // only for inputs the op marks ValueDepend
};
template <class T>
class TypedContinuousVector {
 public:
  size_t GetSize() const { return v.size(); }
  const T* GetData() const { return v.data(); }
  std::vector<T> v;
};
// One attr value: what AttrDef declared, what the case sets.
struct AttrValue {
  enum Kind { NONE, INT, FLOAT, BOOL, STR, LIST_INT, LIST_FLOAT, LIST_BOOL } kind = NONE;
  int64_t i = 0;
  float f = 0;
  bool b = false;
  std::string s;
  TypedContinuousVector<int64_t> li;
  TypedContinuousVector<float> lf;
  TypedContinuousVector<bool> lb;
};
class RuntimeAttrs {
 public:
  template <class T> const T* GetAttrPointer(size_t i) const {
    if (i >= attrs.size()) return nullptr;
    return reinterpret_cast<const T*>(raw(attrs[i]));
  }
  const int64_t* GetInt(size_t i) const { return i < attrs.size() && attrs[i].kind == AttrValue::INT ? &attrs[i].i : nullptr; }
  const float* GetFloat(size_t i) const { return i < attrs.size() && attrs[i].kind == AttrValue::FLOAT ? &attrs[i].f : nullptr; }
  const bool* GetBool(size_t i) const { return i < attrs.size() && attrs[i].kind == AttrValue::BOOL ? &attrs[i].b : nullptr; }
  const char* GetStr(size_t i) const { return i < attrs.size() && attrs[i].kind == AttrValue::STR ? attrs[i].s.c_str() : nullptr; }
  const TypedContinuousVector<int64_t>* GetListInt(size_t i) const {
    return i < attrs.size() && attrs[i].kind == AttrValue::LIST_INT ? &attrs[i].li : nullptr;
  }
  const TypedContinuousVector<float>* GetListFloat(size_t i) const {
    return i < attrs.size() && attrs[i].kind == AttrValue::LIST_FLOAT ? &attrs[i].lf : nullptr;
  }
  size_t GetAttrNum() const { return attrs.size(); }
  std::vector<AttrValue> attrs;
 private:
  static const void* raw(const AttrValue& a) {
    switch (a.kind) {
      case AttrValue::INT: return &a.i;
      case AttrValue::FLOAT: return &a.f;
      case AttrValue::BOOL: return &a.b;
      case AttrValue::STR: return a.s.c_str();
      case AttrValue::LIST_INT: return &a.li;
      case AttrValue::LIST_FLOAT: return &a.lf;
      case AttrValue::LIST_BOOL: return &a.lb;
      default: return nullptr;
    }
  }
};
class TilingData {
 public:
  explicit TilingData(size_t cap = 64 * 1024) : buf_(cap, 0) {}
  void* GetData() { return buf_.data(); }
  const void* GetData() const { return buf_.data(); }
  size_t GetCapacity() const { return buf_.size(); }
  size_t GetDataSize() const { return size_; }
  void SetDataSize(size_t n) { size_ = n; }
  template <class T> ge::graphStatus Append(const T& v) { return Append(&v, 1); }
  template <class T> ge::graphStatus Append(const T* v, size_t n) {
    if (size_ + n * sizeof(T) > buf_.size()) return ge::GRAPH_FAILED;
    std::memcpy(buf_.data() + size_, v, n * sizeof(T));
    size_ += n * sizeof(T);
    return ge::GRAPH_SUCCESS;
  }
 private:
  std::vector<uint8_t> buf_;
  size_t size_ = 0;
};

// Inputs/outputs of one call, as the runner fills them (shared by the tiling and infer contexts).
struct OpCall {
  std::string op_type;
  std::vector<Tensor> inputs, outputs;
  std::vector<CompileTimeTensorDesc> input_desc, output_desc;
  std::vector<int> input_instance;        // per IR input: how many tensors (0: an absent optional input)
  RuntimeAttrs attrs;
  fe::PlatFormInfos platform;
  size_t ir_index(size_t ir, size_t rel = 0) const {  // the tensor index of IR input `ir`
    size_t k = 0;
    for (size_t j = 0; j < ir && j < input_instance.size(); ++j) k += input_instance[j];
    return k + rel;
  }
  // tensor `rel` of a DYNAMIC IR input, or past every tensor (so the getters return nullptr) when `rel` is not
  // below its count, as CANN's context does (metadef extended_kernel_context.h: GetDynamicInputDesc)
  size_t dyn_index(size_t ir, size_t rel) const {
    return ir < input_instance.size() && rel < static_cast<size_t>(input_instance[ir]) ? ir_index(ir, rel)
                                                                                       : static_cast<size_t>(-1);
  }
};

// where an IR input's tensors start among the node's inputs, and how many (exe_graph/runtime/
// compute_node_info.h AnchorInstanceInfo)
class AnchorInstanceInfo {
 public:
  AnchorInstanceInfo() = default;
  AnchorInstanceInfo(size_t start, size_t num) : start_(start), num_(num) {}
  size_t GetInstanceStart() const { return start_; }
  size_t GetInstanceNum() const { return num_; }
 private:
  size_t start_ = 0, num_ = 0;
};

// the node a context belongs to (exe_graph/runtime/compute_node_info.h): its IR input and output counts
class ComputeNodeInfo {
 public:
  explicit ComputeNodeInfo(const OpCall* c) : call_(c) {}
  size_t GetInputsNum() const { return call_->inputs.size(); }
  size_t GetOutputsNum() const { return call_->outputs.size(); }
  size_t GetIrInputsNum() const { return call_->input_instance.size(); }
  const AnchorInstanceInfo* GetInputInstanceInfo(size_t ir) const {
    if (ir >= call_->input_instance.size()) return nullptr;
    info_ = AnchorInstanceInfo(call_->ir_index(ir), static_cast<size_t>(call_->input_instance[ir]));
    return &info_;
  }
  const char* GetNodeType() const { return call_->op_type.c_str(); }
  const char* GetNodeName() const { return call_->op_type.c_str(); }
 private:
  const OpCall* call_;
  mutable AnchorInstanceInfo info_;
};

class ExtendedKernelContext {
 public:
  const ComputeNodeInfo* GetComputeNodeInfo() const { node_ = ComputeNodeInfo(call_); return &node_; }
  // metadef extended_kernel_context.h: the IR input's tensors (a DYNAMIC input: its count)
  const AnchorInstanceInfo* GetIrInputInstanceInfo(size_t ir) const { return GetComputeNodeInfo()->GetInputInstanceInfo(ir); }
  explicit ExtendedKernelContext(OpCall* c) : call_(c) {}
  const CompileTimeTensorDesc* GetInputDesc(size_t i) const { return i < call_->input_desc.size() ? &call_->input_desc[i] : nullptr; }
  const CompileTimeTensorDesc* GetOutputDesc(size_t i) const { return i < call_->output_desc.size() ? &call_->output_desc[i] : nullptr; }
  const CompileTimeTensorDesc* GetOptionalInputDesc(size_t ir) const { return present(ir) ? GetInputDesc(call_->ir_index(ir)) : nullptr; }
  const CompileTimeTensorDesc* GetRequiredInputDesc(size_t ir) const { return GetInputDesc(call_->ir_index(ir)); }
  const CompileTimeTensorDesc* GetDynamicInputDesc(size_t ir, size_t rel) const { return GetInputDesc(call_->dyn_index(ir, rel)); }
  size_t GetComputeNodeInputNum() const { return call_->inputs.size(); }
  size_t GetComputeNodeOutputNum() const { return call_->outputs.size(); }
  const RuntimeAttrs* GetAttrs() const { return &call_->attrs; }
  const char* GetNodeType() const { return call_->op_type.c_str(); }
  const char* GetNodeName() const { return call_->op_type.c_str(); }
  const char* GetKernelName() const { return call_->op_type.c_str(); }
 protected:
  mutable ComputeNodeInfo node_{nullptr};
  bool present(size_t ir) const { return ir < call_->input_instance.size() && call_->input_instance[ir] > 0; }
  OpCall* call_;
};

class TilingContext : public ExtendedKernelContext {
 public:
  explicit TilingContext(OpCall* c) : ExtendedKernelContext(c) {}
  const StorageShape* GetInputShape(size_t i) const { return i < call_->inputs.size() ? &call_->inputs[i].shape : nullptr; }
  const StorageShape* GetOutputShape(size_t i) const { return i < call_->outputs.size() ? &call_->outputs[i].shape : nullptr; }
  const Tensor* GetInputTensor(size_t i) const { return i < call_->inputs.size() ? &call_->inputs[i] : nullptr; }
  const StorageShape* GetOptionalInputShape(size_t ir) const { return present(ir) ? GetInputShape(call_->ir_index(ir)) : nullptr; }
  const StorageShape* GetRequiredInputShape(size_t ir) const { return GetInputShape(call_->ir_index(ir)); }
  const StorageShape* GetDynamicInputShape(size_t ir, size_t rel) const { return GetInputShape(call_->dyn_index(ir, rel)); }
  const Tensor* GetOptionalInputTensor(size_t ir) const { return present(ir) ? GetInputTensor(call_->ir_index(ir)) : nullptr; }
  const Tensor* GetRequiredInputTensor(size_t ir) const { return GetInputTensor(call_->ir_index(ir)); }
  const Tensor* GetDynamicInputTensor(size_t ir, size_t rel) const { return GetInputTensor(call_->dyn_index(ir, rel)); }
  ge::graphStatus SetTilingKey(uint64_t k) { tiling_key = k; return ge::GRAPH_SUCCESS; }
  uint64_t GetTilingKey() const { return tiling_key; }
  ge::graphStatus SetBlockDim(uint32_t n) { block_dim = n; return ge::GRAPH_SUCCESS; }
  ge::graphStatus SetSimdNumBlocks(uint32_t n) { block_dim = n; return ge::GRAPH_SUCCESS; }
  uint32_t GetBlockDim() const { return block_dim; }
  ge::graphStatus SetScheduleMode(uint32_t m) { schedule_mode = m; return ge::GRAPH_SUCCESS; }
  uint32_t GetScheduleMode() const { return schedule_mode; }
  ge::graphStatus SetNeedAtomic(bool a) { need_atomic = a; return ge::GRAPH_SUCCESS; }
  bool NeedAtomic() const { return need_atomic; }
  ge::graphStatus SetTilingCond(int32_t c) { tiling_cond = c; return ge::GRAPH_SUCCESS; }
  int32_t GetTilingCond() const { return tiling_cond; }
  template <class T> T* GetTilingData() {
    if (tiling.GetCapacity() < sizeof(T)) return nullptr;
    tiling.SetDataSize(sizeof(T));
    return static_cast<T*>(tiling.GetData());
  }
  TilingData* GetRawTilingData() { return &tiling; }
  size_t* GetWorkspaceSizes(size_t n) {
    if (workspace.size() < n) workspace.resize(n, 0);
    workspace_num = n;
    return workspace.data();
  }
  size_t GetWorkspaceNum() const { return workspace_num; }
  fe::PlatFormInfos* GetPlatformInfo() const { return &call_->platform; }
  int32_t GetDeterministic() const { return 0; }
  int32_t GetDeterministicLevel() const { return 0; }
  const void* GetCompileInfo() const { return compile_info; }
  template <class T> const T* GetCompileInfo() const { return reinterpret_cast<const T*>(compile_info); }

  TilingData tiling;
  uint64_t tiling_key = 0;
  uint32_t block_dim = 0, schedule_mode = 0;
  int32_t tiling_cond = 0;
  bool need_atomic = false;
  std::vector<size_t> workspace = std::vector<size_t>(16, 0);
  size_t workspace_num = 0;
  const void* compile_info = nullptr;
};

class InferShapeContext : public ExtendedKernelContext {
 public:
  explicit InferShapeContext(OpCall* c) : ExtendedKernelContext(c) {}
  const Shape* GetInputShape(size_t i) const { return i < call_->inputs.size() ? &call_->inputs[i].shape.GetOriginShape() : nullptr; }
  const Shape* GetOptionalInputShape(size_t ir) const { return present(ir) ? GetInputShape(call_->ir_index(ir)) : nullptr; }
  const Shape* GetRequiredInputShape(size_t ir) const { return GetInputShape(call_->ir_index(ir)); }
  const Shape* GetDynamicInputShape(size_t ir, size_t rel) const { return GetInputShape(call_->dyn_index(ir, rel)); }
  const Tensor* GetInputTensor(size_t i) const { return i < call_->inputs.size() ? &call_->inputs[i] : nullptr; }
  Shape* GetOutputShape(size_t i) { return i < call_->outputs.size() ? &call_->outputs[i].shape.MutableOriginShape() : nullptr; }
};
class InferDataTypeContext : public ExtendedKernelContext {
 public:
  explicit InferDataTypeContext(OpCall* c) : ExtendedKernelContext(c) {}
  ge::DataType GetInputDataType(size_t i) const { return i < call_->inputs.size() ? call_->inputs[i].dtype : ge::DT_UNDEFINED; }
  ge::DataType GetOptionalInputDataType(size_t ir) const { return present(ir) ? GetInputDataType(call_->ir_index(ir)) : ge::DT_UNDEFINED; }
  ge::DataType GetRequiredInputDataType(size_t ir) const { return GetInputDataType(call_->ir_index(ir)); }
  ge::DataType GetDynamicInputDataType(size_t ir, size_t rel) const { return GetInputDataType(call_->dyn_index(ir, rel)); }
  ge::DataType GetOutputDataType(size_t i) const { return i < call_->outputs.size() ? call_->outputs[i].dtype : ge::DT_UNDEFINED; }
  ge::graphStatus SetOutputDataType(size_t i, ge::DataType t) {
    if (i >= call_->outputs.size()) return ge::GRAPH_FAILED;
    call_->outputs[i].dtype = t;
    if (i < call_->output_desc.size()) call_->output_desc[i].dtype = t;
    return ge::GRAPH_SUCCESS;
  }
};
class InferShapeRangeContext : public ExtendedKernelContext {
 public:
  using ExtendedKernelContext::ExtendedKernelContext;
};
class TilingParseContext : public ExtendedKernelContext {
 public:
  using ExtendedKernelContext::ExtendedKernelContext;
  fe::PlatFormInfos* GetPlatformInfo() const { return &call_->platform; }
  // the op's CompileInfo struct (IMPL_OP_OPTILING(op).TilingParse<CompileInfo>(f)): f fills it, the TilingFunc
  // reads it through TilingContext::GetCompileInfo
  template <class T> T* GetCompiledInfo() { return static_cast<T*>(compiled); }
  void* compiled = nullptr;
};
}  // namespace gert

// CANN declares NpuArch in platform_ascendc.h (asc-devkit include/utils/tiling/platform/platform_ascendc.h:44) and
// defines it in platform/soc_spec.h (not public); the names are those ops-math / ops-nn compare against.
enum class NpuArch : uint32_t { DAV_1001 = 1001, DAV_2002 = 2002, DAV_2201 = 2201, DAV_3002 = 3002, DAV_3003 = 3003,
                                DAV_3102 = 3102, DAV_3113 = 3113, DAV_3510 = 3510, DAV_5102 = 5102, DAV_RESV = 0xFFFFFFFF };
namespace platform_ascendc {
enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, FB = 7, BT = 8, RESERVED };
// CANN's enumerators in its order (mirror-cann/asc-devkit@82b89a1 include/utils/tiling/platform/platform_ascendc.h:60-86)
enum class SocVersion { ASCEND910 = 0, ASCEND910B, ASCEND310P, ASCEND310B, ASCEND950, ASCEND910_55,
                        ASCEND910_95 = ASCEND950, AS31XM1, ASCEND031, ASCEND035, ASCEND310, ASCEND610, ASCEND610Lite,
                        ASCEND910_93, BS9SX1A, BS9SX2A, HI3796CV300CS, HI3796CV300ES, MC61AM21A, MC62, SD3403,
                        KIRINX90, KIRIN9030, MC32DM11A, ASCEND350, RESERVED_VERSION = 99999 };
enum class ReservedSize { RESERVED_SIZE_8K, RESERVED_SIZE_16K, RESERVED_SIZE_32K };
class PlatformAscendC {
 public:
  PlatformAscendC() = delete;
  explicit PlatformAscendC(fe::PlatFormInfos* p) : p_(p) {}
  explicit PlatformAscendC(const void* p) : p_(static_cast<fe::PlatFormInfos*>(const_cast<void*>(p))) {}
  uint32_t GetCoreNum() const { return p_->core_num; }
  uint32_t GetCoreNumAic() const { return p_->core_aic; }
  uint32_t GetCoreNumAiv() const { return p_->core_aiv; }
  uint32_t GetCoreNumVector() const { return 0; }
  // Cube/vector split chips (A2) run one AIC with two AIVs: CANN's documented rule for the AIV-only case.
  uint32_t CalcTschBlockDim(uint32_t slice, uint32_t aic, uint32_t aiv) const {
    if (aic == 0 || aiv == 0 || p_->core_aic == p_->core_aiv) return slice;
    return (slice + 1) / 2;
  }
  uint32_t CalcTschNumBlocks(uint32_t slice, uint32_t aic, uint32_t aiv) const { return CalcTschBlockDim(slice, aic, aiv); }
  uint32_t GetLibApiWorkSpaceSize() const { return p_->lib_api_workspace; }
  void GetCoreMemSize(const CoreMemType& t, uint64_t& size) const {
    // On the 910B CANN keeps 256 bytes of UB and L1 back for the KFC server (asc-devkit@82b89a15
    // impl/utils/tiling/platform/platform_ascendc.cpp:27 LOCAL_RESERV_SIZE, :149-159), so a tiling budgets
    // ub_size - 256, not the ini's whole 196608.
    const uint64_t kfc = GetSocVersion() == SocVersion::ASCEND910B ? 256 : 0;
    switch (t) {
      case CoreMemType::UB: size = p_->ub_bytes - kfc - reserved_; break;
      case CoreMemType::L1: size = p_->l1_bytes - kfc; break;
      case CoreMemType::L0_A: size = p_->l0a_bytes; break;
      case CoreMemType::L0_B: size = p_->l0b_bytes; break;
      case CoreMemType::L0_C: size = p_->l0c_bytes; break;
      case CoreMemType::L2: size = p_->l2_bytes; break;
      case CoreMemType::HBM: size = p_->hbm_bytes; break;
      default: size = 0;
    }
  }
  void GetCoreMemBw(const CoreMemType&, uint64_t& bw) const { bw = 0; }
  void ReserveLocalMemory(ReservedSize s) {
    reserved_ = s == ReservedSize::RESERVED_SIZE_8K ? 8192 : s == ReservedSize::RESERVED_SIZE_16K ? 16384 : 32768;
  }
  SocVersion GetSocVersion() const { return static_cast<SocVersion>(p_->soc_kind); }
  // the chip's architecture (A2 = DAV_2201): ops-math / ops-nn tiling branches on it
  NpuArch GetCurNpuArch() const {
    switch (GetSocVersion()) {
      case SocVersion::ASCEND910: return NpuArch::DAV_1001;
      case SocVersion::ASCEND910B: case SocVersion::ASCEND910_93: return NpuArch::DAV_2201;
      case SocVersion::ASCEND310P: return NpuArch::DAV_2002;
      case SocVersion::ASCEND950: return NpuArch::DAV_3510;
      default: return NpuArch::DAV_RESV;
    }
  }
  uint32_t GetVecRegLen() const { return 256; }   // bytes of a vector register on DAV_2201 (RegBase chips differ)
 private:
  fe::PlatFormInfos* p_;
  uint32_t reserved_ = 0;
};
}  // namespace platform_ascendc

namespace opkit_cann {
// What an OpDef registered: read back by the runner.
struct ParamInfo {
  std::string name;
  int param_type = 2;  // ops::Option
  std::vector<int> dtypes, formats;
  bool value_depend = false;
  bool init_value = false;  // InitValue(...): CANN clears the output before the launch
};
struct AttrInfo {
  std::string name;
  bool required = false;
  gert::AttrValue def;
};
using TilingFn = std::function<ge::graphStatus(gert::TilingContext*)>;
using InferShapeFn = std::function<ge::graphStatus(gert::InferShapeContext*)>;
using InferDtypeFn = std::function<ge::graphStatus(gert::InferDataTypeContext*)>;
struct OpInfo {
  std::string type;
  std::vector<ParamInfo> inputs, outputs;
  std::vector<AttrInfo> attrs;
  std::vector<std::string> socs;
  TilingFn tiling;
  InferShapeFn infer_shape;
  InferDtypeFn infer_dtype;
};
inline std::map<std::string, OpInfo>& registry() {
  static std::map<std::string, OpInfo> r;
  return r;
}
using TilingParseFn = std::function<ge::graphStatus(gert::TilingParseContext*, std::shared_ptr<void>&)>;
inline std::map<std::string, TilingParseFn>& impl_tiling_parse() {  // IMPL_OP_OPTILING(op).TilingParse<CI>(f)
  static std::map<std::string, TilingParseFn> m;
  return m;
}
inline std::map<std::string, TilingFn>& impl_tiling() {  // IMPL_OP_OPTILING(op).Tiling(f)
  static std::map<std::string, TilingFn> r;
  return r;
}
// IMPL_OP_OPTILING(op).InputsDataDependency({i, ...}): the inputs whose data the op's host code reads, as an OpDef's
// ValueDepend marks them (metadef OpImplRegisterV2::InputsDataDependency); the runner reports them as value_depend.
inline std::map<std::string, std::vector<int>>& impl_data_deps() {
  static std::map<std::string, std::vector<int>> r;
  return r;
}
inline std::map<std::string, std::pair<InferShapeFn, InferDtypeFn>>& impl_infer() {  // IMPL_OP_INFERSHAPE
  static std::map<std::string, std::pair<InferShapeFn, InferDtypeFn>> r;
  return r;
}
}  // namespace opkit_cann

namespace ops {
enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };
enum class AttrDataType { ATTR_DT_BOOL = 0, ATTR_DT_FLOAT, ATTR_DT_INT, ATTR_DT_STR };
class OpParamDef {
 public:
  explicit OpParamDef(opkit_cann::ParamInfo* p) : p_(p) {}
  OpParamDef& ParamType(Option t) { p_->param_type = t; return *this; }
  OpParamDef& DataType(std::vector<ge::DataType> v) { p_->dtypes.assign(v.begin(), v.end()); return *this; }
  OpParamDef& DataTypeList(std::vector<ge::DataType> v) { return DataType(v); }
  OpParamDef& Format(std::vector<ge::Format> v) { p_->formats.assign(v.begin(), v.end()); return *this; }
  OpParamDef& FormatList(std::vector<ge::Format> v) { return Format(v); }
  OpParamDef& UnknownShapeFormat(std::vector<ge::Format>) { return *this; }
  OpParamDef& ValueDepend(Option) { p_->value_depend = true; return *this; }
  OpParamDef& ValueDepend(Option, int) { p_->value_depend = true; return *this; }
  OpParamDef& AutoContiguous() { return *this; }
  OpParamDef& IgnoreContiguous() { return *this; }
  OpParamDef& Scalar() { return *this; }
  OpParamDef& ScalarList() { return *this; }
  OpParamDef& To(ge::DataType) { return *this; }
  OpParamDef& To(const char*) { return *this; }
  OpParamDef& InitValue(uint64_t) { p_->init_value = true; return *this; }
  OpParamDef& InitValue(double) { p_->init_value = true; return *this; }
  OpParamDef& OutputShapeDependOnCompute() { return *this; }
  OpParamDef& Follow(const char*) { return *this; }
  OpParamDef& Comment(const char*) { return *this; }
 private:
  opkit_cann::ParamInfo* p_;
};
class OpAttrDef {
 public:
  explicit OpAttrDef(opkit_cann::AttrInfo* a) : a_(a) {}
  OpAttrDef& AttrType(Option t) { a_->required = t == REQUIRED; return *this; }
  OpAttrDef& Bool() { a_->def.kind = gert::AttrValue::BOOL; return *this; }
  OpAttrDef& Bool(bool v) { Bool(); a_->def.b = v; return *this; }
  OpAttrDef& Float() { a_->def.kind = gert::AttrValue::FLOAT; return *this; }
  OpAttrDef& Float(float v) { Float(); a_->def.f = v; return *this; }
  OpAttrDef& Int() { a_->def.kind = gert::AttrValue::INT; return *this; }
  OpAttrDef& Int(int64_t v) { Int(); a_->def.i = v; return *this; }
  OpAttrDef& String() { a_->def.kind = gert::AttrValue::STR; return *this; }
  OpAttrDef& String(const char* v) { String(); a_->def.s = v; return *this; }
  OpAttrDef& ListInt() { a_->def.kind = gert::AttrValue::LIST_INT; return *this; }
  OpAttrDef& ListInt(std::vector<int64_t> v) { ListInt(); a_->def.li.v = v; return *this; }
  OpAttrDef& ListFloat() { a_->def.kind = gert::AttrValue::LIST_FLOAT; return *this; }
  OpAttrDef& ListFloat(std::vector<float> v) { ListFloat(); a_->def.lf.v = v; return *this; }
  OpAttrDef& ListBool() { a_->def.kind = gert::AttrValue::LIST_BOOL; return *this; }
  OpAttrDef& ListBool(std::vector<bool> v) { ListBool(); a_->def.lb.v = v; return *this; }
  OpAttrDef& Comment(const char*) { return *this; }
 private:
  opkit_cann::AttrInfo* a_;
};
class OpAICoreConfig {
 public:
  OpAICoreConfig() = default;
  explicit OpAICoreConfig(const char*) {}
  OpAICoreConfig& DynamicCompileStaticFlag(bool) { return *this; }
  OpAICoreConfig& DynamicFormatFlag(bool) { return *this; }
  OpAICoreConfig& DynamicRankSupportFlag(bool) { return *this; }
  OpAICoreConfig& DynamicShapeSupportFlag(bool) { return *this; }
  OpAICoreConfig& NeedCheckSupportFlag(bool) { return *this; }
  OpAICoreConfig& PrecisionReduceFlag(bool) { return *this; }
  OpAICoreConfig& ExtendCfgInfo(const char*, const char*) { return *this; }
  OpParamDef Input(const char*) { return OpParamDef(&scratch_); }
  OpParamDef Output(const char*) { return OpParamDef(&scratch_); }
 private:
  opkit_cann::ParamInfo scratch_;
};
class OpAICoreDef {
 public:
  explicit OpAICoreDef(opkit_cann::OpInfo* o) : o_(o) {}
  OpAICoreDef& SetTiling(ge::graphStatus (*f)(gert::TilingContext*)) { o_->tiling = f; return *this; }
  OpAICoreDef& SetTilingParse(ge::graphStatus (*)(gert::TilingParseContext*)) { return *this; }
  template <class F> OpAICoreDef& SetCheckSupport(F) { return *this; }
  template <class F> OpAICoreDef& SetOpSelectFormat(F) { return *this; }
  OpAICoreDef& AddConfig(const char* soc) { o_->socs.push_back(soc); return *this; }
  OpAICoreDef& AddConfig(const char* soc, OpAICoreConfig&) { return AddConfig(soc); }
 private:
  opkit_cann::OpInfo* o_;
};
class OpDef {
 public:
  explicit OpDef(const char* type) { info_.type = type; }
  virtual ~OpDef() = default;
  OpParamDef Input(const char* name) { return OpParamDef(&add(info_.inputs, name)); }
  OpParamDef Output(const char* name) { return OpParamDef(&add(info_.outputs, name)); }
  OpAttrDef Attr(const char* name) {
    info_.attrs.push_back({});
    info_.attrs.back().name = name;
    return OpAttrDef(&info_.attrs.back());
  }
  OpDef& SetInferShape(ge::graphStatus (*f)(gert::InferShapeContext*)) { info_.infer_shape = f; return *this; }
  OpDef& SetInferShapeRange(ge::graphStatus (*)(gert::InferShapeRangeContext*)) { return *this; }
  OpDef& SetInferDataType(ge::graphStatus (*f)(gert::InferDataTypeContext*)) { info_.infer_dtype = f; return *this; }
  OpAICoreDef& AICore() { return aicore_; }
  OpDef& Comment(const char*) { return *this; }
  const opkit_cann::OpInfo& Info() const { return info_; }
 private:
  static opkit_cann::ParamInfo& add(std::vector<opkit_cann::ParamInfo>& v, const char* name) {
    for (auto& p : v) if (p.name == name) return p;
    v.push_back({});
    v.back().name = name;
    return v.back();
  }
  opkit_cann::OpInfo info_;
  OpAICoreDef aicore_{&info_};
};
}  // namespace ops

namespace opkit_cann {
template <class Op>
struct OpAdder {
  explicit OpAdder(const char* type) {
    Op op(type);
    registry()[type] = op.Info();
  }
};
struct TilingRegistrar {
  explicit TilingRegistrar(const char* type) : type_(type) {}
  TilingRegistrar& Tiling(ge::graphStatus (*f)(gert::TilingContext*)) { impl_tiling()[type_] = f; return *this; }
  // CANN's second argument is the raw tiling buffer's capacity, 2048 bytes by default (metadef
  // OpImplRegisterV2::Tiling(TilingKernelFunc, size_t max_tiling_data_size = 2048)); the runner's buffer holds
  // 64 KiB whatever is asked, and the launch passes GetDataSize() bytes, so the value changes nothing here.
  TilingRegistrar& Tiling(ge::graphStatus (*f)(gert::TilingContext*), size_t) { return Tiling(f); }
  // CANN runs the parse function when the op is loaded, on a fresh CompileInfo; the runner runs it before each
  // TilingFunc (impl_tiling_parse) so that GetCompileInfo() points at a filled struct.
  template <class CompileInfo, class F> TilingRegistrar& TilingParse(F f) {
    impl_tiling_parse()[type_] = [f](gert::TilingParseContext* ctx, std::shared_ptr<void>& keep) {
      auto info = std::make_shared<CompileInfo>();
      keep = info;
      ctx->compiled = info.get();
      return static_cast<ge::graphStatus>(f(ctx));
    };
    return *this;
  }
  template <class F> TilingRegistrar& TilingInputsDataDependency(F) { return *this; }
  TilingRegistrar& TilingInputsDataDependency(std::initializer_list<int>) { return *this; }
  TilingRegistrar& InputsDataDependency(std::initializer_list<int> ids) {
    impl_data_deps()[type_].assign(ids.begin(), ids.end());
    return *this;
  }
  std::string type_;
};
struct InferRegistrar {
  explicit InferRegistrar(const char* type) : type_(type) {}
  InferRegistrar& InferShape(ge::graphStatus (*f)(gert::InferShapeContext*)) { impl_infer()[type_].first = f; return *this; }
  InferRegistrar& InferDataType(ge::graphStatus (*f)(gert::InferDataTypeContext*)) { impl_infer()[type_].second = f; return *this; }
  template <class F> InferRegistrar& InferShapeRange(F) { return *this; }
  InferRegistrar& InputsDataDependency(std::initializer_list<int> ids) {
    impl_data_deps()[type_].assign(ids.begin(), ids.end());
    return *this;
  }
  std::string type_;
};
}  // namespace opkit_cann

#define OPKIT_CANN_CAT_(a, b) a##b
#define OPKIT_CANN_CAT(a, b) OPKIT_CANN_CAT_(a, b)
#define OP_ADD(opType, ...) static ::opkit_cann::OpAdder<::ops::opType> g_opkit_op_add_##opType(#opType)
#define IMPL_OP_OPTILING(opType) \
  static ::opkit_cann::TilingRegistrar OPKIT_CANN_CAT(g_opkit_tiling_, __COUNTER__) = ::opkit_cann::TilingRegistrar(#opType)
#define IMPL_OP_INFERSHAPE(opType) \
  static ::opkit_cann::InferRegistrar OPKIT_CANN_CAT(g_opkit_infer_, __COUNTER__) = ::opkit_cann::InferRegistrar(#opType)
#define IMPL_OP(opType) IMPL_OP_INFERSHAPE(opType)
