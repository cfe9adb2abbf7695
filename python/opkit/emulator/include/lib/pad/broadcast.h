// CANN's lib/pad/broadcast.h (asc-devkit 82b89a15 include/adv_api/pad/broadcast.h:47-74; page
// docs/zh/api/SIMD-API/高阶API/张量变换/Broadcast.md): Broadcast / BroadCast (the implementation's name, which
// kernels call too) of a dim-1 or dim-2 ND tensor, A2 forms only:
//   template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
//   Broadcast(dst, src, const uint32_t dstShape[dim], const uint32_t srcShape[dim][, LocalTensor<uint8_t>& sharedTmpBuffer])
// dst[i][j] = src[srcShape[0] == 1 ? 0 : i][srcShape[1] == 1 ? 0 : j], int8_t / uint8_t / half / float (the A2 list
// of the page). Checked as the page and CANN's host checks state it: dim 1 or 2, axis 0 or 1, each srcShape[i]
// equal to dstShape[i] or 1, the broadcast axis the template's, for dim 2 / axis 0 srcShape[1] 32-byte aligned
// (api-argument). Minimum sharedTmpBuffer as GetBroadCastMaxMinTmpSize computes it for A2
// (impl/adv_api/tiling/pad/broadcast_tiling.cpp:29-75,126-157): int8 adds the half cast buffers; no broadcast
// (or a single source element) 0 (32 B for int8); axis 0: 32 B; axis 1: (32/size)^2 x size, plus (32/size) x
// align(dstShape[1]) x size when dstShape[1] is not 32-byte aligned. Below that: tensor-bounds.
// Exact (a copy); poison flows from each source lane to the dst lanes it fills. The dynamic-shape form with
// BroadcastTiling is Ascend 950 only (the page): not declared.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
#include "opkit_emu/adv_math.h"

namespace opkit_emu {
inline uint32_t brc_align(uint32_t x, uint32_t a) { return (x + a - 1) / a * a; }

// GetBroadCastMaxMinTmpSize's minimum on A2 (broadcast_tiling.cpp, see above)
inline uint32_t broadcast_min_tmp(uint32_t size, uint32_t dim, const uint32_t* dstS, const uint32_t* srcS) {
  const uint32_t srcN = dim == 2 ? srcS[0] * srcS[1] : srcS[0], dstN = dim == 2 ? dstS[0] * dstS[1] : dstS[0];
  uint32_t cast = 0, ts = size;
  if (size == 1) {  // int8: computed in half
    ts = 2;
    cast = (brc_align(srcN, 16) + brc_align(dstN, 16)) * 2;
  }
  if (srcN == dstN || srcN == 1) return size == 1 ? cast + 32 : 0;
  if (srcS[1] != 1) return 32 + cast;  // axis 0
  const uint32_t blk = 32 / ts, brcb = blk * blk * ts;
  return dstS[1] % blk == 0 ? brcb + cast : brcb + blk * brc_align(dstS[1], blk) * ts + cast;
}

template <class T, int32_t dim, int32_t axis>
void broadcast(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
               const uint32_t* dstShape, const uint32_t* srcShape, const AscendC::LocalTensor<uint8_t>* tmp,
               SrcLoc loc) {
  static_assert(std::is_same<T, int8_t>::value || std::is_same<T, uint8_t>::value || std::is_same<T, half>::value ||
                    std::is_same<T, float>::value,
                "opkit emulator: Broadcast supports int8_t, uint8_t, half and float on this chip");
  static_assert(dim == 1 || dim == 2, "opkit emulator: Broadcast supports dim 1 or 2 on this chip");
  static_assert(axis == 0 || axis == 1, "opkit emulator: Broadcast supports axis 0 or 1 on this chip");
  const uint32_t d0 = dstShape[0], d1 = dim == 2 ? dstShape[1] : 1, s0 = srcShape[0], s1 = dim == 2 ? srcShape[1] : 1;
  for (int i = 0; i < dim; ++i)
    if (srcShape[i] != dstShape[i] && srcShape[i] != 1)
      fail("api-argument", api, loc,
           strf("srcShape[%d] = %u cannot broadcast to dstShape[%d] = %u (must be equal or 1)", i, srcShape[i], i,
                dstShape[i]));
  if (d0 == 0 || d1 == 0) fail("api-argument", api, loc, "an empty shape");
  if (dim == 2 && srcShape[axis] != dstShape[axis] && srcShape[1 - axis] != dstShape[1 - axis])
    fail("api-argument", api, loc, "both axes broadcast; CANN's A2 Broadcast broadcasts one axis");
  if (dim == 2 && s0 * s1 != d0 * d1 && srcShape[axis] != 1)
    fail("api-argument", api, loc,
         strf("template axis %d, but srcShape[%d] = %u: the broadcast axis is %d", axis, axis, srcShape[axis],
              1 - axis));
  if (dim == 2 && axis == 0 && s0 != d0 && s1 * sizeof(T) % 32 != 0)
    fail("api-argument", api, loc,
         strf("dim 2, axis 0: srcShape[1] = %u is not 32-byte aligned (Broadcast.md)", s1));
  const uint32_t dstShape2[2] = {d0, d1}, srcShape2[2] = {s0, s1};
  if (tmp) {
    const uint32_t need = broadcast_min_tmp(sizeof(T), 2, dstShape2, srcShape2);
    if (tmp->GetSize() < need)
      fail("tensor-bounds", api, loc,
           strf("sharedTmpBuffer holds %u bytes, below the %u bytes GetBroadCastMaxMinTmpSize gives as the minimum "
                "for this shape and type", tmp->GetSize(), need));
  }
  const uint64_t n = uint64_t(d0) * d1, m = uint64_t(s0) * s1;
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, n, "dstLocal").src(src, m, "srcLocal");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  auto from = [&](uint64_t k) { return (s0 == 1 ? 0 : k / d1) * s1 + (s1 == 1 ? 0 : k % d1); };
  std::vector<uint8_t> bad;
  if (c.commit(Flow::Manual)) {
    bad.assign(n, 0);
    for (uint64_t k = 0; k < n; ++k) bad[k] = ApiCall::lane_poisoned(c.operand(1), static_cast<uint32_t>(from(k)));
  }
  ctx().stats.vector_elems += n;
  std::vector<T> s(src.data(), src.data() + m);  // the page forbids overlap; a copy keeps the result defined anyway
  for (uint64_t k = 0; k < n; ++k) dst.data()[k] = s[from(k)];
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  if (bad.empty()) {
    shadow_fill(dst.m_.ub_off(), static_cast<uint32_t>(n * sizeof(T)), true);
  } else {
    for (uint64_t k = 0; k < n; ++k)
      shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(k * sizeof(T)), sizeof(T), !bad[k]);
  }
}
}  // namespace opkit_emu

namespace AscendC {
#define OPKIT_EMU_BROADCAST(NAME)                                                                                  \
  template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>                                     \
  void NAME(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dstShape[dim],          \
            const uint32_t srcShape[dim], LocalTensor<uint8_t>& sharedTmpBuffer, OPKIT_LOC) {                      \
    ::opkit_emu::broadcast<T, dim, axis>(#NAME, dstLocal, srcLocal, dstShape, srcShape, &sharedTmpBuffer, loc);    \
  }                                                                                                                \
  template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>                                     \
  void NAME(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dstShape[dim],          \
            const uint32_t srcShape[dim], OPKIT_LOC) {                                                             \
    ::opkit_emu::broadcast<T, dim, axis>(#NAME, dstLocal, srcLocal, dstShape, srcShape, nullptr, loc);             \
  }
OPKIT_EMU_BROADCAST(Broadcast)
OPKIT_EMU_BROADCAST(BroadCast)
#undef OPKIT_EMU_BROADCAST
}  // namespace AscendC
