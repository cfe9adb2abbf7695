// Host side of CANN's register/tilingdata_base.h for opkit's CPU run of a project's TilingFunc (docs/cann.md).
// Written here after hicann/metadef inc/external/register/tilingdata_base.h and base/asc/tilingdata_base_impl.cc
// (read, not copied): a BEGIN_TILING_DATA_DEF class lays its fields out in declaration order, padding the
// running size to each field's type size (a struct field: to 8) and the total to 8; set_<f> writes the value
// at its offset, SaveToBuffer copies GetDataSize() bytes. The emulator's kernel-side header of the same name
// (python/opkit/emulator/include/register/tilingdata_base.h) gives the kernel the same offsets.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "opkit_cann/host.h"

namespace optiling {
class TilingDef {
 public:
  virtual ~TilingDef() = default;
  void SaveToBuffer(void* dst, size_t capacity) const {
    std::memcpy(dst, bytes().data(), size_ <= capacity ? size_ : capacity);
  }
  size_t GetDataSize() const { return size_; }
  const char* GetTilingClassName() const { return name_; }
  void SetDataPtr(void* p) {
    ext_ = static_cast<uint8_t*>(p);
    for (auto& s : subs_) s.first->SetDataPtr(data() + s.second);
  }
  TilingDef() = default;
  TilingDef(const TilingDef&) = delete;
  TilingDef& operator=(const TilingDef&) = delete;

 protected:
  // Called from the member initializers, so in declaration order: returns the field's offset.
  size_t place(size_t type_size, size_t count, size_t align) {
    pad(align);
    size_t at = size_;
    size_ += type_size * count;
    return at;
  }
  size_t place_struct(TilingDef* sub, size_t bytes) {
    size_t at = place(bytes, 1, 8);
    subs_.push_back({sub, at});
    return at;
  }
  void finish() {  // the trailing placeholder: the total padded to 8; nested structs write into our bytes
    pad(8);
    own_.assign(size_, 0);
    for (auto& s : subs_) s.first->SetDataPtr(own_.data() + s.second);
  }
  uint8_t* data() { return ext_ ? ext_ : own_.data(); }
  const std::vector<uint8_t>& bytes() const {
    if (ext_) sync_.assign(ext_, ext_ + size_);
    return ext_ ? sync_ : own_;
  }
  void pad(size_t align) {
    if (size_ % align) size_ += align - size_ % align;
  }
  const char* name_ = "";
  size_t size_ = 0;
  std::vector<uint8_t> own_;
  uint8_t* ext_ = nullptr;
  mutable std::vector<uint8_t> sync_;
  std::vector<std::pair<TilingDef*, size_t>> subs_;
};

using TilingDataConstructor = std::shared_ptr<TilingDef> (*)();
class CTilingDataClassFactory {
 public:
  static CTilingDataClassFactory& GetInstance() {
    static CTilingDataClassFactory f;
    return f;
  }
  void RegisterTilingData(const char* op, TilingDataConstructor c) { m_[op] = c; }
  std::shared_ptr<TilingDef> CreateTilingDataInstance(const char* op) {
    auto it = m_.find(op);
    return it == m_.end() ? nullptr : it->second();
  }
 private:
  std::map<std::string, TilingDataConstructor> m_;
};
}  // namespace optiling

#define BEGIN_TILING_DATA_DEF(class_name)      \
  class class_name : public ::optiling::TilingDef { \
   public:                                     \
    class_name() {                             \
      name_ = #class_name;                     \
      finish();                                \
    }                                          \
    explicit class_name(void* p) : class_name() { SetDataPtr(p); }

#define TILING_DATA_FIELD_DEF(data_type, field_name)                                              \
 public:                                                                                          \
  void set_##field_name(data_type v) {                                                            \
    field_name##_ = v;                                                                            \
    std::memcpy(data() + field_name##_offset_, &v, sizeof(data_type));                            \
  }                                                                                               \
  data_type get_##field_name() { return field_name##_; }                                         \
                                                                                                  \
 private:                                                                                         \
  data_type field_name##_ = 0;                                                                    \
  size_t field_name##_offset_ = place(sizeof(data_type), 1, sizeof(data_type));

#define TILING_DATA_FIELD_DEF_ARR(arr_type, arr_size, field_name)                                 \
 public:                                                                                          \
  void set_##field_name(const arr_type* v) {                                                      \
    if (data() + field_name##_offset_ != reinterpret_cast<const uint8_t*>(v))                     \
      std::memcpy(data() + field_name##_offset_, v, (arr_size) * sizeof(arr_type));               \
  }                                                                                               \
  arr_type* get_##field_name() { return reinterpret_cast<arr_type*>(data() + field_name##_offset_); } \
                                                                                                  \
 private:                                                                                         \
  size_t field_name##_offset_ = place(sizeof(arr_type), (arr_size), sizeof(arr_type));

#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name) \
 public:                                                   \
  struct_type field_name;                                  \
                                                           \
 private:                                                  \
  size_t field_name##_offset_ = place_struct(&field_name, field_name.GetDataSize());

#define END_TILING_DATA_DEF \
  }                         \
  ;

#define REGISTER_TILING_DATA_CLASS(op_type, class_name)                                            \
  namespace {                                                                                      \
  struct op_type##class_name##OpkitHelper {                                                        \
    op_type##class_name##OpkitHelper() {                                                           \
      ::optiling::CTilingDataClassFactory::GetInstance().RegisterTilingData(#op_type, &make);     \
    }                                                                                              \
    static std::shared_ptr<::optiling::TilingDef> make() { return std::make_shared<class_name>(); } \
  };                                                                                               \
  static op_type##class_name##OpkitHelper g_opkit_tiling_##op_type##class_name;                    \
  }
