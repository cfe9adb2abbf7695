// ListTensorDesc / TensorDesc: a dynamic list of GM tensors passed to a kernel as one GM address (CANN's
// include/basic_api/kernel_operator_list_tensor_intf.h; the A2 decoding read in
// impl/basic_api/dav_c220/kernel_operator_list_tensor_impl.h, asc-devkit 82b89a15, not copied).
// The list's layout, 64-bit words from its address:
//   [0]                  byte offset from the list's address to its array of data pointers
//   [1 + i * S ...]      tensor i's description, S = 1 + dim words (S = 2 when dim is 0: pointers only):
//                        low 32 bits of the first word dim, high 32 bits the tensor's index (the first
//                        description may hold the count there instead); then dim shape values
//   [offset / 8 + i]     tensor i's data pointer
// CANN's CPU build ASSERTs the layout (the description area fills exactly the space before the pointers; a caller's
// length / shapeSize, when given, agree; an index below the count; GetDesc needs dim > 0 and a shape buffer):
// here each is rule kernel-assert at the kernel's call. Reading the list is scalar GM access, as on the device.
#pragma once
#include <cstdint>

#include "opkit_emu/diag.h"
#include "opkit_emu/runtime.h"
#include "opkit_emu/tensor.h"

namespace AscendC {
class ListTensorDesc;

template <class T>
class TensorDesc {
 public:
  TensorDesc() = default;
  void SetShapeAddr(uint64_t* shapePtr) { shape_ = shapePtr; }
  uint64_t GetDim() { return dim_; }
  uint64_t GetIndex() { return index_; }
  uint64_t GetShape(uint32_t offset, OPKIT_LOC) {
    if (offset >= dim_ || shape_ == nullptr)
      opkit_emu::fail("kernel-assert", "TensorDesc::GetShape", loc,
                      opkit_emu::strf("shape offset %u of a %u-dimensional tensor (or no SetShapeAddr)", offset, dim_));
    return shape_[offset];
  }
  __gm__ T* GetDataPtr() { return ptr_; }
  GlobalTensor<T> GetDataObj() {
    uint64_t n = 1;
    for (uint32_t i = 0; i < dim_; ++i) n *= shape_[i];
    GlobalTensor<T> g;
    g.SetGlobalBuffer(ptr_, n);
    return g;
  }
  friend class ListTensorDesc;

 private:
  uint32_t dim_ = 0, index_ = 0;
  uint64_t* shape_ = nullptr;
  __gm__ T* ptr_ = nullptr;
};

class ListTensorDesc {
 public:
  ListTensorDesc() = default;
  ListTensorDesc(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff, OPKIT_LOC) {
    Init(data, length, shapeSize, loc);
  }
  void Init(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff, OPKIT_LOC) {
    if (data == nullptr) bad(loc, "the list's GM address is null");
    auto* head = reinterpret_cast<const uint64_t*>(data);
    const uint64_t ptr_offset = head[0];
    shapes_ = head + 1;
    ptrs_ = head + ptr_offset / sizeof(uint64_t);
    dim_ = static_cast<uint32_t>(shapes_[0] & 0xffffffffu);
    const uint32_t first_high = static_cast<uint32_t>(shapes_[0] >> 32);
    stride_ = dim_ == 0 ? 2 : 1 + dim_;
    count_ = first_high != 0 ? first_high : static_cast<uint32_t>(*(ptrs_ - stride_) >> 32) + 1;
    const bool ok = dim_ != 0 ? count_ == (ptr_offset - sizeof(uint64_t)) / (stride_ * sizeof(uint64_t))
                              : (shapes_[1] == 0xffffffffu && ptr_offset == 24);
    if (!ok)
      bad(loc, opkit_emu::strf("the list's layout is inconsistent: pointer offset %llu bytes, dim %u, count %u",
                               static_cast<unsigned long long>(ptr_offset), dim_, count_));
    if (length != 0xffffffff && shapeSize != 0xffffffff &&
        (count_ != shapeSize || length != ptr_offset + count_ * sizeof(uint64_t)))
      bad(loc, opkit_emu::strf("length %u / shapeSize %u disagree with the list (count %u)", length, shapeSize,
                               count_));
  }
  template <class T>
  void GetDesc(TensorDesc<T>& desc, uint32_t index, OPKIT_LOC) {
    if (index >= count_ || dim_ == 0 || desc.shape_ == nullptr)
      bad(loc, opkit_emu::strf("GetDesc(%u) of a list of %u tensors of dim %u%s", index, count_, dim_,
                               desc.shape_ == nullptr ? " (no SetShapeAddr)" : ""));
    desc.dim_ = dim_;
    desc.index_ = index;
    desc.ptr_ = reinterpret_cast<__gm__ T*>(ptrs_[index]);
    const uint64_t* s = shapes_ + uint64_t(index) * stride_ + 1;
    for (uint32_t i = 0; i < dim_; ++i) desc.shape_[i] = s[i];
  }
  template <class T>
  __gm__ T* GetDataPtr(uint32_t index, OPKIT_LOC) {
    if (index >= count_) bad(loc, opkit_emu::strf("GetDataPtr(%u) of a list of %u tensors", index, count_));
    return reinterpret_cast<__gm__ T*>(ptrs_[index]);
  }
  uint32_t GetSize() { return count_; }

 private:
  [[noreturn]] static void bad(opkit_emu::SrcLoc loc, std::string why) {
    opkit_emu::fail("kernel-assert", "ListTensorDesc", loc, std::move(why));
  }
  const uint64_t* shapes_ = nullptr;
  const uint64_t* ptrs_ = nullptr;
  uint32_t dim_ = 0, stride_ = 0, count_ = 0;
};
}  // namespace AscendC
