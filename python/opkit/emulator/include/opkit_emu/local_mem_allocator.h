// LocalMemAllocator<Hardware> and the Hardware enum: tensors carved from UB in order, without TPipe
// (the "static tensor" style of newer samples). Doc: asc-devkit docs/zh/api/SIMD-API/基础API/资源管理/
// LocalMemAllocator/*.md, include/basic_api/kernel_tensor.h, impl/utils/common_types.h (mirror-cann/asc-devkit
// 82b89a15):
//  - Alloc<pos, T, tileSize>(), Alloc<pos, T>(tileSize), Alloc<T, tileSize>(), Alloc<T>(tileSize): tileSize
//    elements of T starting at the current address; the address then advances by exactly tileSize x
//    sizeof(T) bytes (no rounding: a tile that is not a multiple of 32 bytes leaves the next one unaligned,
//    which the vector and copy checks then report);
//  - GetCurAddr(): the current byte offset; the allocator starts at the beginning of UB.
// The emulator models vector cores only: Hardware other than UB (L1, L0A/B/C, BIAS, FIXBUF) is a compile error.
// The tensors are fixed buffers (like TBuf::Get): poisoned until written, no queue protocol, pipe hazards
// tracked. A tile past the end of UB is `ub-capacity`.
#pragma once
#include "opkit_emu/tpipe.h"

namespace AscendC {
enum class Hardware : uint8_t { GM, UB, L1, L0A, L0B, L0C, BIAS, FIXBUF, MAX };

template <Hardware hard = Hardware::UB>
class LocalMemAllocator {
  static_assert(hard == Hardware::UB || hard == Hardware::GM || hard == Hardware::MAX,
                "not supported on the emulator: LocalMemAllocator for a cube buffer (L1/L0A/L0B/L0C/BIAS/FIXBUF) "
                "(see docs/emulator.md)");
  static_assert(hard != Hardware::GM && hard != Hardware::MAX, "illegal hardware position GM or MAX");

 public:
  LocalMemAllocator() = default;
  uint32_t GetCurAddr() const { return head_; }

  template <TPosition pos, class T, uint32_t tileSize>
  LocalTensor<T> Alloc(OPKIT_LOC) { check_pos<pos>(); return take<T>(tileSize, pos, loc); }
  template <TPosition pos, class T>
  LocalTensor<T> Alloc(uint32_t tileSize, OPKIT_LOC) { check_pos<pos>(); return take<T>(tileSize, pos, loc); }
  template <class T, uint32_t tileSize>
  LocalTensor<T> Alloc(OPKIT_LOC) { return take<T>(tileSize, TPosition::VECCALC, loc); }
  template <class T>
  LocalTensor<T> Alloc(uint32_t tileSize, OPKIT_LOC) { return take<T>(tileSize, TPosition::VECCALC, loc); }

 private:
  template <TPosition pos>
  static void check_pos() {
    static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT || pos == TPosition::VECCALC,
                  "LocalMemAllocator<Hardware::UB>: logic position and hardware position do not match (UB holds "
                  "VECIN / VECOUT / VECCALC)");
  }
  template <class T>
  LocalTensor<T> take(uint32_t tileSize, TPosition pos, opkit_emu::SrcLoc loc) {
    using namespace opkit_emu;
    const uint64_t bytes = elem_bytes<T>(tileSize);
    if (is_int4_v<T> && tileSize % 2)  // two int4b_t to a byte: an odd tile would lose its last element
      fail("api-argument", "LocalMemAllocator::Alloc", loc, strf("int4b_t tile of %u elements is odd", tileSize));
    if (bytes == 0) fail("ub-capacity", "LocalMemAllocator::Alloc", loc, "tile of 0 elements");
    if (head_ + bytes > kChip.ub_total_bytes)
      fail("ub-capacity", "LocalMemAllocator::Alloc", loc,
           strf("a tile of %u x %zu bytes at UB offset %u ends at %llu bytes; %s has %u bytes of UB per core",
                tileSize, sizeof(T), head_, (unsigned long long)(head_ + bytes), kChip.profile, kChip.ub_total_bytes));
    BlockCtx& c = ctx();
    const uint32_t id = new_buf(head_, static_cast<uint32_t>(bytes), BufKind::TBuf, -1, 0);
    if (head_ + bytes > c.stats.ub_high_water) c.stats.ub_high_water = head_ + bytes;
    auto t = make_tensor<T>(id, 0, static_cast<uint32_t>(bytes));
    t.m_.pos = pos;
    head_ += static_cast<uint32_t>(bytes);
    return t;
  }
  uint32_t head_ = 0;
};
}  // namespace AscendC

namespace AscendC {
// LocalTensor(pos, addr, tileSize): tileSize elements of T at UB byte `addr`, a fixed buffer like LocalMemAllocator's
// (poisoned until written, no queue protocol, hazards tracked; it may overlap a TPipe's buffers, as on the device).
// Checked: a VECIN / VECOUT / VECCALC position, addr 32-byte aligned, the tile inside UB.
template <class T>
LocalTensor<T>::LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize, opkit_emu::SrcLoc loc) {
  using namespace opkit_emu;
  const char* call = "LocalTensor(pos, addr, tileSize)";
  if (pos != TPosition::VECIN && pos != TPosition::VECOUT && pos != TPosition::VECCALC)
    fail("api-argument", call, loc, "the emulator holds UB tensors only (VECIN / VECOUT / VECCALC)");
  const uint64_t bytes = elem_bytes<T>(tileSize);
  if (is_int4_v<T> && tileSize % 2)  // CANN asserts an even int4b_t tileSize (kernel_tensor_impl.h:1058-1063)
    fail("api-argument", call, loc, strf("int4b_t tileSize %u is odd: two elements to a byte", tileSize));
  if (addr % kBlk) fail("ub-alignment", call, loc, strf("UB address %u is not 32-byte aligned", addr));
  if (bytes == 0 || addr + bytes > kChip.ub_total_bytes)
    fail("ub-capacity", call, loc,
         strf("%u elements of %zu bytes at UB address %u end at %llu bytes; %s has %u bytes of UB per core", tileSize,
              sizeof(T), addr, (unsigned long long)(addr + bytes), kChip.profile, kChip.ub_total_bytes));
  BlockCtx& c = ctx();
  const uint32_t id = new_buf(addr, static_cast<uint32_t>(bytes), BufKind::TBuf, -1, 0);
  if (addr + bytes > c.stats.ub_high_water) c.stats.ub_high_water = addr + bytes;
  *this = make_tensor<T>(id, 0, static_cast<uint32_t>(bytes));
  m_.pos = pos;
}
}  // namespace AscendC
