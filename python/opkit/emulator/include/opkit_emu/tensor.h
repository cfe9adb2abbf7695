// LocalTensor (a view of UB) and GlobalTensor (a view of GM). Facts sheet §1 "GlobalTensor", "LocalTensor".
#pragma once
#include <utility>

#include "opkit_emu/runtime.h"

namespace AscendC {

enum class TPosition : uint8_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM, TSCM, MAX };
using QuePosition = TPosition;
// GlobalTensor::SetL2CacheHint (impl/basic_api/utils/kernel_utils_macros.h)
enum class CacheMode { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL = 1, CACHE_MODE_LAST = 2, CACHE_MODE_PERSISTENT = 4 };
enum class CacheRwMode { READ = 1, WRITE = 2, RW = 3 };

template <class T> class LocalTensor;

}  // namespace AscendC

namespace opkit_emu {

// The part of a LocalTensor the checks need, independent of T.
struct TensorMeta {
  uint8_t* addr = nullptr;
  uint32_t bytes = 0;
  int32_t buf = -1;
  uint32_t gen = 0;
  AscendC::TPosition pos = AscendC::TPosition::VECCALC;
  uint16_t shape = 0;  // SetShapeInfo: index + 1 into the block's table (0: none)

  uint32_t ub_off() const { return static_cast<uint32_t>(addr - ctx().ub); }
  uint32_t ub_off(const BlockCtx& c) const { return static_cast<uint32_t>(addr - c.ub); }

  // The tensor's buffer is still the one it was handed out from (not freed, not re-allocated).
  void check_live(const char* call, SrcLoc loc, const char* name) const { check_live(ctx(), call, loc, name); }
  OPKIT_EMU_INLINE void check_live(const BlockCtx& c, const char* call, SrcLoc loc, const char* name) const {
    if (__builtin_expect(buf < 0 || static_cast<size_t>(buf) >= c.bufs.size() || c.bufs[buf].gen != gen ||
                             c.bufs[buf].state == BufState::Free, 0))
      not_live(c, call, loc, name);
  }
  // noinline on the definition below, not here: header-only, a noinline declaration followed by the inline
  // definition is -Wattributes (OPKIT_EMU_RT_NOINLINE_DECL's reason; a member cannot drop its declaration).
  [[noreturn]] __attribute__((cold)) void not_live(const BlockCtx& c, const char* call, SrcLoc loc,
                                                   const char* name) const;
  // Older per-operand checks, kept for headers not yet on the per-call hook (api_call.h ApiCall): live,
  // 32-byte aligned, large enough; strict initialisation (no poison flow); marking written bytes.
  void check_operand(uint64_t need_bytes, const char* call, SrcLoc loc, const char* name) const {
    check_live(call, loc, name);
    uint32_t off = ub_off();
    if (off % kBlk != 0)
      fail("ub-alignment", call, loc,
           strf("%s starts at UB offset %u, not 32-byte aligned (offset %% 32 = %u)", name, off, off % kBlk));
    if (need_bytes > bytes)
      fail("tensor-bounds", call, loc,
           strf("%s: the call touches %llu bytes but the tensor holds only %u bytes", name,
                (unsigned long long)need_bytes, bytes));
  }
  void check_initialized(uint32_t rel_off, uint64_t nbytes, uint32_t elem, const char* call, SrcLoc loc,
                         const char* name) const {
    int64_t hole = shadow_first_hole(ub_off() + rel_off, static_cast<uint32_t>(nbytes));
    if (hole >= 0)
      fail("ub-uninitialized", call, loc,
           strf("%s reads UB that nothing wrote: element %llu (UB offset %u) was never written since its "
                "buffer was allocated",
                name, (unsigned long long)((rel_off + hole) / elem), ub_off() + rel_off + static_cast<uint32_t>(hole)));
  }
  void mark_written(uint32_t rel_off, uint64_t nbytes) const { shadow_set(ub_off() + rel_off, static_cast<uint32_t>(nbytes)); }
  // Bytes from this view's start to the end of its UB buffer (what the hardware may touch past the view).
  uint32_t bytes_to_buffer_end() const;
};
#if OPKIT_EMU_RT_DEFS  // TensorMeta members compiled once (OPKIT_EMU_RT, config.h)
__attribute__((noinline)) OPKIT_EMU_RT void TensorMeta::not_live(const BlockCtx& c, const char* call, SrcLoc loc,
                                                                  const char* name) const {
  if (buf < 0 || static_cast<size_t>(buf) >= c.bufs.size())
    c.fail("queue-protocol", call, loc,
           strf("%s is not a tensor from AllocTensor/DeQue/TBuf::Get (never allocated)", name));
  const BufRec& b = c.bufs[buf];
  c.fail("queue-protocol", call, loc,
         strf("%s is used after FreeTensor (buffer at UB offset %u was freed%s)", name, b.off,
              b.state == BufState::Free ? "" : " and handed out again"));
}
OPKIT_EMU_RT uint32_t TensorMeta::bytes_to_buffer_end() const {
  const BlockCtx& c = ctx();
  if (buf < 0 || static_cast<size_t>(buf) >= c.bufs.size()) return bytes;
  const BufRec& b = c.bufs[buf];
  return b.off + b.len - ub_off();
}
#endif

// SetShapeInfo / GetShapeInfo (shape_info.h): a shape is kept once per block, tensors hold its index + 1.
[[noreturn]] inline void shape_dim_error(unsigned dim, SrcLoc loc) {
  fail("kernel-assert", "ShapeInfo", loc,
       strf("a shape of %u dimensions: at most K_MAX_SHAPE_DIM = %d are allowed", dim, K_MAX_SHAPE_DIM));
}
inline uint16_t shape_index(const AscendC::ShapeInfo& s) {
  std::vector<AscendC::ShapeInfo>& t = ctx().shapes;
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i].same(s)) return static_cast<uint16_t>(i + 1);
  if (t.size() >= 0xffff) throw std::runtime_error("opkit emulator: more than 65535 distinct tensor shapes in one block");
  t.push_back(s);
  return static_cast<uint16_t>(t.size());
}
inline AscendC::ShapeInfo shape_at(uint16_t i) { return i ? ctx().shapes[i - 1] : AscendC::ShapeInfo(); }

// GetValue / SetValue: one element on the scalar pipe (api_call.h; declared here, defined there).
void scalar_access(const TensorMeta& t, uint32_t rel_off, uint32_t bytes, bool write, const char* call, SrcLoc loc);
// GlobalTensor::GetValue / SetValue on GM padding a UB->GM copy landed garbage in (gm_pad.h; defined there).
// nibble: -1 for whole bytes, 0 / 1 for an int4b_t element's low / high half of its byte.
OPKIT_EMU_RT void gm_pad_scalar(const void* gm, size_t bytes, int nibble, bool write, const char* call, SrcLoc loc);

// Index argument of operator[]: converting from an integer records the caller's file:line.
struct Offset {
  uint32_t v;
  SrcLoc loc;
  template <class I, class = std::enable_if_t<std::is_integral<I>::value || std::is_enum<I>::value>>
  Offset(I i, SrcLoc l = SrcLoc::current()) : v(static_cast<uint32_t>(i)), loc(l) {}
};

// GlobalTensor's operator[] index: as Offset, 64-bit.
struct Offset64 {
  uint64_t v;
  SrcLoc loc;
  template <class I, class = std::enable_if_t<std::is_integral<I>::value || std::is_enum<I>::value>>
  Offset64(I i, SrcLoc l = SrcLoc::current()) : v(static_cast<uint64_t>(i)), loc(l) {}
};

// `tensor(i)`: CANN returns a reference to the element, read and written by the scalar unit
// (include/basic_api/kernel_tensor.h, `__inout_pipe__(S) PrimType& operator()`). Here a proxy, so that a read is
// checked as GetValue (bounds, poison, pipe hazards) and a write as SetValue, each at the caller's line.
template <class Tensor, class T>
class ElemRef {
 public:
  ElemRef(const Tensor& t, uint32_t i, SrcLoc loc) : t_(t), i_(i), loc_(loc) {}
  ElemRef(const ElemRef&) = default;
  operator T() const { return t_.GetValue(i_, loc_); }
  // CANN returns T&, so static_cast<float>(halfTensor(i)) goes through half's own conversion: one more step here
  template <class U, class = std::enable_if_t<!std::is_same<U, T>::value && std::is_constructible<U, T>::value>>
  explicit operator U() const { return static_cast<U>(static_cast<T>(*this)); }
  const ElemRef& operator=(T v) const {
    t_.SetValue(i_, v, loc_);
    return *this;
  }
  const ElemRef& operator=(const ElemRef& o) const { return *this = static_cast<T>(o); }
  const ElemRef& operator+=(T v) const { return *this = static_cast<T>(static_cast<T>(*this) + v); }
  const ElemRef& operator-=(T v) const { return *this = static_cast<T>(static_cast<T>(*this) - v); }
  const ElemRef& operator*=(T v) const { return *this = static_cast<T>(static_cast<T>(*this) * v); }
  const ElemRef& operator/=(T v) const { return *this = static_cast<T>(static_cast<T>(*this) / v); }

 private:
  Tensor t_;
  uint32_t i_;
  SrcLoc loc_;
};

}  // namespace opkit_emu

namespace opkit_emu {
// int4b_t tensors: two elements to a byte, element 2k in the low nibble (asc-devkit 82b89a15
// impl/basic_api/kernel_tensor_impl.h:195-196 GetValue, :325-328 SetValue). Sizes and offsets are in elements, the
// tensor's bytes n / 2 (GetSize :992, SetSize :973, operator[] :453-455); a view must start on a byte -- CANN's
// operator[] drops an odd offset's half byte silently and its GetPhyAddr asserts it even (:117-119) -- so an odd
// offset is api-argument here.
template <class T> inline constexpr bool is_int4_v = std::is_same<T, int4b_t>::value;
template <class T> constexpr uint64_t elem_bytes(uint64_t n) { return is_int4_v<T> ? n / 2 : n * sizeof(T); }
[[noreturn]] inline void int4_odd(const char* call, uint64_t off, SrcLoc loc) {
  fail("api-argument", call, loc,
       strf("int4b_t offset %llu is odd: a view of int4b_t must start on a byte (two elements to a byte; CANN drops "
            "the half byte, kernel_tensor_impl.h:453)", (unsigned long long)off));
}
inline int4b_t nibble_get(uint8_t byte, uint64_t idx) { return int4b_t(uint32_t(byte >> (4 * (idx % 2)))); }
inline uint8_t nibble_set(uint8_t byte, uint64_t idx, int4b_t v) {
  return idx % 2 ? uint8_t((byte & 0x0fu) | (v.storage << 4)) : uint8_t((byte & 0xf0u) | v.storage);
}
}  // namespace opkit_emu

namespace AscendC {

template <class T>
class LocalTensor {
 public:
  using PrimType = T;
  LocalTensor() = default;
  // A tensor at a fixed UB byte address, outside any TPipe (asc-devkit 82b89a15 include/basic_api/kernel_tensor.h:189,
  // impl/basic_api/kernel_tensor_impl.h:1088-1093; defined in local_mem_allocator.h).
  LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize, OPKIT_LOC);

  // Element access (scalar unit). Checked: bounds, buffer liveness, initialisation on read.
  T GetValue(uint32_t idx, OPKIT_LOC) const {
    check_index(idx, "LocalTensor::GetValue", loc);
    if constexpr (opkit_emu::is_int4_v<T>) {
      opkit_emu::scalar_access(m_, idx / 2, 1, false, "LocalTensor::GetValue", loc);
      return opkit_emu::nibble_get(m_.addr[idx / 2], idx);
    }
    opkit_emu::scalar_access(m_, idx * sizeof(T), sizeof(T), false, "LocalTensor::GetValue", loc);
    T v;
    std::memcpy(&v, m_.addr + idx * sizeof(T), sizeof(T));
    return v;
  }
  void SetValue(uint32_t idx, T v, OPKIT_LOC) const {
    check_index(idx, "LocalTensor::SetValue", loc);
    if constexpr (opkit_emu::is_int4_v<T>) {  // the byte's other nibble is kept (CANN reads the byte, :327-328)
      opkit_emu::scalar_access(m_, idx / 2, 1, true, "LocalTensor::SetValue", loc);
      m_.addr[idx / 2] = opkit_emu::nibble_set(m_.addr[idx / 2], idx, v);
      return;
    }
    opkit_emu::scalar_access(m_, idx * sizeof(T), sizeof(T), true, "LocalTensor::SetValue", loc);
    std::memcpy(m_.addr + idx * sizeof(T), &v, sizeof(T));
  }
  // operator[] cannot take a default argument; the offset's implicit conversion captures the call site.
  LocalTensor operator[](opkit_emu::Offset off) const { return at(off.v, off.loc); }
  opkit_emu::ElemRef<LocalTensor, T> operator()(opkit_emu::Offset off) const { return {*this, off.v, off.loc}; }
  // Same as operator[] but with the caller's location (used by the emulator's own helpers).
  LocalTensor at(uint32_t off, opkit_emu::SrcLoc loc) const {
    if (static_cast<uint64_t>(off) > GetSize())
      opkit_emu::fail("tensor-bounds", "LocalTensor::operator[]", loc,
                      opkit_emu::strf("offset %u is past the end of a tensor of %u elements", off, GetSize()));
    if (opkit_emu::is_int4_v<T> && off % 2) opkit_emu::int4_odd("LocalTensor::operator[]", off, loc);
    const uint32_t b = static_cast<uint32_t>(opkit_emu::elem_bytes<T>(off));
    LocalTensor r = *this;
    r.m_.addr += b;
    r.m_.bytes -= b;
    return r;
  }
  uint32_t GetSize() const { return opkit_emu::is_int4_v<T> ? m_.bytes * 2 : m_.bytes / uint32_t(sizeof(T)); }
  uint32_t GetLength() const { return m_.bytes; }
  void SetSize(uint32_t n, OPKIT_LOC) {
    const opkit_emu::BlockCtx& c = opkit_emu::ctx();
    uint32_t cap = (m_.buf >= 0 && static_cast<size_t>(m_.buf) < c.bufs.size())
                       ? c.bufs[m_.buf].off + c.bufs[m_.buf].len - m_.ub_off() : m_.bytes;
    if (opkit_emu::elem_bytes<T>(n) > cap)
      opkit_emu::fail("tensor-bounds", "LocalTensor::SetSize", loc,
                      opkit_emu::strf("size %u elements exceeds the %u bytes left in the buffer", n, cap));
    if (opkit_emu::is_int4_v<T> && n % 2)  // CANN keeps n / 2 bytes (:973): the last element would be lost
      opkit_emu::fail("api-argument", "LocalTensor::SetSize", loc,
                      opkit_emu::strf("int4b_t size %u is odd: a tensor holds whole bytes, two elements each", n));
    m_.bytes = static_cast<uint32_t>(opkit_emu::elem_bytes<T>(n));
  }
  TPosition GetPosition() const { return m_.pos; }
  void SetShapeInfo(const ShapeInfo& shapeInfo) { m_.shape = opkit_emu::shape_index(shapeInfo); }
  ShapeInfo GetShapeInfo() const { return opkit_emu::shape_at(m_.shape); }
  // Host pointer of the first element (the device returns a UB address; only use it for arithmetic).
  T* GetPhyAddr() const { return reinterpret_cast<T*>(m_.addr); }
  T* GetPhyAddr(uint32_t off, OPKIT_LOC) const {
    if (opkit_emu::is_int4_v<T> && off % 2) opkit_emu::int4_odd("LocalTensor::GetPhyAddr", off, loc);
    return reinterpret_cast<T*>(m_.addr + opkit_emu::elem_bytes<T>(off));
  }
  template <class U> LocalTensor<U> ReinterpretCast() const {
    LocalTensor<U> r;
    r.m_ = m_;
    return r;
  }
  // `dst = a + b` etc. (vector.h): the right side is an expression object that writes into dst.
  template <class E, class = decltype(std::declval<const E&>().opkit_emu_eval(std::declval<const LocalTensor&>()))>
  LocalTensor& operator=(const E& e) {
    e.opkit_emu_eval(*this);
    return *this;
  }
  LocalTensor(const LocalTensor&) = default;
  LocalTensor& operator=(const LocalTensor&) = default;
  // Emulator internals.
  opkit_emu::TensorMeta m_;
  T* data() const { return reinterpret_cast<T*>(m_.addr); }

 private:
  void check_index(uint32_t idx, const char* call, opkit_emu::SrcLoc loc) const {
    m_.check_live(call, loc, "tensor");
    if (idx >= GetSize())
      opkit_emu::fail("tensor-bounds", call, loc,
                      opkit_emu::strf("index %u is out of range for a tensor of %u elements", idx, GetSize()));
  }
};

template <class T>
class GlobalTensor {
 public:
  using PrimType = T;
  GlobalTensor() = default;
  void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) { ptr_ = buffer; size_ = bufferSize; }
  void SetGlobalBuffer(__gm__ T* buffer) { ptr_ = buffer; size_ = 0; }
  uint64_t GetSize() const { return size_; }
  __gm__ T* GetPhyAddr() const { return ptr_; }
  __gm__ T* GetPhyAddr(uint64_t off, OPKIT_LOC) const {
    if (opkit_emu::is_int4_v<T> && off % 2) opkit_emu::int4_odd("GlobalTensor::GetPhyAddr", off, loc);
    return reinterpret_cast<__gm__ T*>(reinterpret_cast<uint8_t*>(ptr_) + opkit_emu::elem_bytes<T>(off));
  }
  GlobalTensor operator[](opkit_emu::Offset64 o) const {
    const uint64_t off = o.v;
    GlobalTensor r = *this;
    if (opkit_emu::is_int4_v<T> && off % 2) opkit_emu::int4_odd("GlobalTensor::operator[]", off, o.loc);
    r.ptr_ = reinterpret_cast<__gm__ T*>(reinterpret_cast<uint8_t*>(ptr_) + opkit_emu::elem_bytes<T>(off));
    r.size_ = size_ > off ? size_ - off : 0;
    r.sized_ = sized_ || size_ > 0;
    r.overrun_ = size_ > 0 && off > size_;
    return r;
  }
  opkit_emu::ElemRef<GlobalTensor, T> operator()(opkit_emu::Offset off) const { return {*this, off.v, off.loc}; }
  T GetValue(uint64_t off, OPKIT_LOC) const {
    if constexpr (opkit_emu::is_int4_v<T>) {
      check(off & ~uint64_t(1), 1, "GlobalTensor::GetValue", loc);
      opkit_emu::gm_pad_scalar(reinterpret_cast<const uint8_t*>(ptr_) + off / 2, 1, static_cast<int>(off % 2), false,
                               "GlobalTensor::GetValue", loc);
      opkit_emu::ctx().stats.gm_read_bytes += 1;  // the byte holding the nibble
      return opkit_emu::nibble_get(reinterpret_cast<const uint8_t*>(ptr_)[off / 2], off);
    }
    check(off, 1, "GlobalTensor::GetValue", loc);
    opkit_emu::gm_pad_scalar(ptr_ + off, sizeof(T), -1, false, "GlobalTensor::GetValue", loc);
    opkit_emu::ctx().stats.gm_read_bytes += sizeof(T);
    T v;
    std::memcpy(&v, ptr_ + off, sizeof(T));
    return v;
  }
  void SetValue(uint64_t off, T v, OPKIT_LOC) const {
    if constexpr (opkit_emu::is_int4_v<T>) {
      check(off & ~uint64_t(1), 1, "GlobalTensor::SetValue", loc);
      opkit_emu::gm_pad_scalar(reinterpret_cast<const uint8_t*>(ptr_) + off / 2, 1, static_cast<int>(off % 2), true,
                               "GlobalTensor::SetValue", loc);
      opkit_emu::ctx().stats.gm_write_bytes += 1;
      uint8_t* b = reinterpret_cast<uint8_t*>(ptr_) + off / 2;
      opkit_emu::gm_mark_write(b);  // the byte written: an offset may reach past the tensor's own region
      *b = opkit_emu::nibble_set(*b, off, v);
      return;
    }
    check(off, 1, "GlobalTensor::SetValue", loc);
    opkit_emu::gm_pad_scalar(ptr_ + off, sizeof(T), -1, true, "GlobalTensor::SetValue", loc);
    opkit_emu::ctx().stats.gm_write_bytes += sizeof(T);
    opkit_emu::gm_mark_write(ptr_ + off);
    std::memcpy(ptr_ + off, &v, sizeof(T));
  }
  void SetShapeInfo(const ShapeInfo& shapeInfo) { shape_ = opkit_emu::shape_index(shapeInfo); }
  ShapeInfo GetShapeInfo() const { return opkit_emu::shape_at(shape_); }
  void SetL2CacheHint(int) {}
  template <CacheRwMode rwMode = CacheRwMode::RW> void SetL2CacheHint(CacheMode) {}

  // [off, off+count) elements must lie inside a kernel GM buffer (gm-bounds). Past the SetGlobalBuffer size
  // but inside the buffer is legal on the device -- the size is bookkeeping for GetSize(), no hardware or
  // CANN CPU-debug check reads it (asc-devkit impl/basic_api/utils/kernel_check_data_copy_overflow.h passes
  // 0 as the GM size) -- so it is a warning, once per call site.
  // For int4b_t, `count` is in bytes (sizeof(int4b_t) units: what A2's DataCopy moves, kernel_operator_data_copy_
  // intf_impl.h:800-812 with sizeof 1) and off in elements; the size check compares bytes.
  void check(uint64_t off, uint64_t count, const char* call, opkit_emu::SrcLoc loc) const {
    if (count == 0) return;
    if (!ptr_) opkit_emu::fail("gm-bounds", call, loc, "GlobalTensor used before SetGlobalBuffer");
    opkit_emu::gm_check(reinterpret_cast<uint8_t*>(ptr_) + opkit_emu::elem_bytes<T>(off), count * sizeof(T), call, loc,
                        "GlobalTensor");
    if constexpr (opkit_emu::is_int4_v<T>) { off /= 2; }
    const uint64_t lim = opkit_emu::is_int4_v<T> ? (size_ + 1) / 2 : size_;  // in count's units
    bool limited = lim > 0 || sized_;
    if (limited && (overrun_ || off + count > lim)) {
      const uint64_t first = overrun_ ? off : std::max<uint64_t>(off, lim);  // first unit out of range
      // int4b_t: off / count are bytes here; reported as elements (two to a byte), as the view's size is
      const uint64_t k = opkit_emu::is_int4_v<T> ? 2 : 1;
      opkit_emu::warn_once("gm-bounds", call, loc,
                           opkit_emu::strf("element %llu is beyond the SetGlobalBuffer size: the access covers elements "
                                           "[%llu, %llu) and this view holds %s; it stays inside the GM buffer, which "
                                           "the NPU allows (the size is not checked on the device)",
                                           (unsigned long long)(first * k), (unsigned long long)(off * k),
                                           (unsigned long long)((off + count) * k),
                                           opkit_emu::plural(size_, "element").c_str()));
    }
  }

 private:
  __gm__ T* ptr_ = nullptr;
  uint64_t size_ = 0;
  bool sized_ = false;    // a view cut from a sized buffer: size_ == 0 means "nothing left", not "unknown"
  bool overrun_ = false;  // the view starts past the end of the sized buffer
  uint16_t shape_ = 0;    // SetShapeInfo: index + 1 into the block's table
};

}  // namespace AscendC
