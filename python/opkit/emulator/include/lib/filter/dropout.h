// CANN's lib/filter/dropout.h (asc-devkit 82b89a15 include/adv_api/filter/dropout.h:18-47; page
// docs/zh/api/SIMD-API/高阶API/数据过滤/DropOut.md):
//   template <typename T, bool isInitBitMode = false, uint32_t dropOutMode = 0>
//   DropOut(dst, src, LocalTensor<uint8_t> mask, [sharedTmpBuffer,] const float keepProb, const DropOutShapeInfo& info)
// half and float on A2, src / dst [firstAxis, srcLastAxis]. The A2 code (impl/adv_api/detail/filter/dropout/
// dropout_impl.h, dropout_membase_impl.h, dropout_c220_impl.h), by mode (0 picks it from the shape):
//   byte (srcLastAxis == maskLastAxis, mode 2; srcLastAxis < maskLastAxis, mode 1): dst = (mask byte as T x src) x
//     T(1 / keepProb), each product rounded to T -- the byte multiplies, so a mask of 0 / 1 drops / keeps;
//   bit (srcLastAxis == 8 x maskLastAxis, mode 3; otherwise mode 4): bit j (LSB first) of the row's mask bytes set
//     keeps src x T(1 / keepProb), clear gives 0.
// The misaligned modes (1, 4) first pack each row's used mask bytes to the front of the mask in place (GatherMask,
// dropout_c220_impl.h:14-40): the mask is modified, as here. Checked (api-argument, dropout_impl.h): firstAxis > 0,
// 0 < keepProb < 1, maskLastAxis even for modes 1 and 4, tensors holding the shape; a sharedTmpBuffer below 2 x 256
// bytes (GetDropOutMaxMinTmpSize, impl/adv_api/tiling/filter/dropout_tiling_impl.cpp:21-25) is tensor-bounds.
// Poison anywhere in src or the used mask poisons all of dst.
#pragma once
#include <cstring>
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace AscendC {
// impl/basic_api/utils/kernel_utils_struct_norm_sort.h:34-39, kernel_utils_constants.h:324-327
struct DropOutShapeInfo {
  DropOutShapeInfo() {}
  uint32_t firstAxis = 0;
  uint32_t srcLastAxis = 0;
  uint32_t maskLastAxis = 0;
};
inline constexpr uint32_t DROPOUT_MODE_BYTE_MISALIGN = 1;
inline constexpr uint32_t DROPOUT_MODE_BYTE_ALIGN = 2;
inline constexpr uint32_t DROPOUT_MODE_BIT_ALIGN = 3;
inline constexpr uint32_t DROPOUT_MODE_BIT_MISALIGN = 4;
}  // namespace AscendC

namespace opkit_emu {
template <class T, uint32_t mode>
void dropout(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
             const AscendC::LocalTensor<uint8_t>& mask, const AscendC::LocalTensor<uint8_t>* tmp, float keepProb,
             const AscendC::DropOutShapeInfo& info, SrcLoc loc) {
  static_assert(mode <= 4, "opkit emulator: DropOut's dropOutMode is 0 / 1 / 2 / 3 / 4 (DropOut.md)");
  const char* api = "DropOut";
  const uint32_t rows = info.firstAxis, cols = info.srcLastAxis, mcols = info.maskLastAxis;
  if (rows == 0) fail("api-argument", api, loc, "info.firstAxis is 0: it must be > 0");
  if (!(keepProb > 0.0f && keepProb < 1.0f))
    fail("api-argument", api, loc, strf("keepProb is %g: it must be larger than 0 and smaller than 1", keepProb));
  uint32_t m = mode;
  if (m == 0) m = cols < mcols ? 1 : cols == mcols ? 2 : cols == mcols * 8 ? 3 : 4;
  if (cols == 0) fail("api-argument", api, loc, "info.srcLastAxis is 0: it must be > 0");
  const bool bits = m >= 3;
  if (bits ? cols > mcols * 8 : cols > mcols)
    fail("api-argument", api, loc,
         strf("info.srcLastAxis %u does not fit the mask's last axis %u (%s mode)", cols, mcols, bits ? "bit" : "byte"));
  // Modes 1 / 4 (a mask row wider than its data): CANN's A2 code packs each row's used mask bytes with GatherMask at
  // a row stride of maskLastAxis / 32 blocks and then reads the packed mask across rows (dropout_c220_impl.h:39-65),
  // which is the row-wise result only for the layouts the page requires (DropOut.md: the mask row padded to 32
  // bytes, an even number of used mask bytes); another layout gives something else on the device, so it is refused.
  if ((m == 1 || m == 4) && (mcols % 32 || (m == 1 ? cols % 2 : cols % 16)))
    fail("api-argument", api, loc,
         strf("info.maskLastAxis %u / srcLastAxis %u: with dropOutMode %u the mask row must be a multiple of 32 bytes "
              "and srcLastAxis a multiple of %u (an even number of used mask bytes)", mcols, cols, m, m == 1 ? 2 : 16));
  // Modes 2 / 3 read the mask flat over the data (dropout_membase_impl.h): the row-wise reading is CANN's only when
  // the rows are the same length.
  if ((m == 2 && cols != mcols) || (m == 3 && cols != mcols * 8))
    fail("api-argument", api, loc,
         strf("info.srcLastAxis %u, maskLastAxis %u: dropOutMode %u reads the mask flat over the data, so srcLastAxis "
              "must be %s maskLastAxis", cols, mcols, m, m == 2 ? "equal to" : "8 x"));
  const uint32_t n = rows * cols, mbytes = rows * mcols;
  if (tmp && tmp->GetSize() < 512)
    fail("tensor-bounds", api, loc,
         strf("sharedTmpBuffer holds %u bytes, below the 512 bytes GetDropOutMaxMinTmpSize gives as the minimum",
              tmp->GetSize()));
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, n, "dstLocal");
  c.src(src, n, "srcLocal");
  c.src(mask, mbytes, "maskLocal");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  c.commit(Flow::All);
  ctx().stats.vector_elems += n;
  const T div = from_f<T>(1.0f / keepProb);
  std::vector<uint8_t> mk(mask.data(), mask.data() + mbytes);
  T* d = dst.data();
  const T* s = src.data();
  for (uint32_t i = 0; i < rows; ++i) {
    const uint8_t* row = mk.data() + i * mcols;
    for (uint32_t j = 0; j < cols; ++j) {
      const uint32_t k = i * cols + j;
      if (bits) d[k] = (row[j / 8] >> (j % 8)) & 1 ? from_f<T>(to_f(s[k]) * to_f(div)) : from_f<T>(0.0f);
      else d[k] = from_f<T>(to_f(from_f<T>(static_cast<float>(row[j]) * to_f(s[k]))) * to_f(div));
    }
  }
  if (m == 1 || m == 4) {  // the rows' used mask bytes packed to the front, in place (GatherMask)
    const uint32_t used = m == 1 ? cols : (cols + 7) / 8;
    for (uint32_t i = 0; i < rows; ++i) std::memcpy(mask.data() + i * used, mk.data() + i * mcols, used);
  }
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, bool isInitBitMode = false, uint32_t dropOutMode = 0>
void DropOut(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<uint8_t>& maskLocal,
             const LocalTensor<uint8_t>& sharedTmpBuffer, const float keepProb, const DropOutShapeInfo& info,
             OPKIT_LOC) {
  static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: DropOut supports half and float on A2 (DropOut.md)");
  ::opkit_emu::dropout<T, dropOutMode>(dstLocal, srcLocal, maskLocal, &sharedTmpBuffer, keepProb, info, loc);
}
template <typename T, bool isInitBitMode = false, uint32_t dropOutMode = 0>
void DropOut(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<uint8_t>& maskLocal,
             const float keepProb, const DropOutShapeInfo& info, OPKIT_LOC) {
  static_assert(::opkit_emu::is_adv_float_t<T>, "opkit emulator: DropOut supports half and float on A2 (DropOut.md)");
  ::opkit_emu::dropout<T, dropOutMode>(dstLocal, srcLocal, maskLocal, nullptr, keepProb, info, loc);
}
}  // namespace AscendC
