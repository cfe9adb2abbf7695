// CANN's lib/pad/pad.h (asc-devkit 82b89a15 include/adv_api/pad/pad.h:23-70; PadParams / UnPadParams
// impl/basic_api/utils/kernel_utils_struct_confusion_pad.h:380-410; pages docs/zh/api/SIMD-API/高阶API/张量变换/
// Pad.md, UnPad.md): Pad / UnPad of a [height, width] ND tensor along width, half / float (2- or 4-byte T: CANN's
// host accepts typeSize 2 or 4), with and without sharedTmpBuffer, on the tiling PadTilingFunc / UnPadTilingFunc fill:
//   Pad(dst, src, PadParams& {leftPad, rightPad, int32 padValue}[, sharedTmpBuffer], PadTiling&)
//   UnPad(dst, src, UnPadParams& {leftPad, rightPad}[, sharedTmpBuffer], UnPadTiling&)
// As the A2 code does it (impl/adv_api/detail/pad/pad/pad_v220_impl.h, pad_base_impl.h):
//  - Pad, width 32-byte aligned (AlignedPad): dst = src, then in every row the columns [srcOriWidth, srcOriWidth +
//    rightPad) -- inside the row's last 32-byte block (the Duplicate mask) -- set to padValue; leftPad is not used
//    (the page: right pad only in this case).
//  - Pad, width not aligned (UnAlignedPad): each row of W elements, read from src as one continuous stream, becomes
//    [padValue x leftPad, the row, padValue x rightPad] at a row pitch of W + leftPad + rightPad, which must be W
//    rounded up to 32 bytes -- the code writes that many per row and takes W + leftPad + rightPad - pads elements
//    per row from the stream, so any other total shifts the rows and reads past src (api-argument here).
//  - padValue is an int32_t cast to T.
//  - UnPad (A2: one GatherMask, mode 7, count mask width - rightPad, repeat stride width): dst packs each row's
//    first width - rightPad elements, row after row; leftPad must be 0 (UnPad.md: "当前暂不支持左边unpad").
// Checked (api-argument): the tiling filled (srcWidth, srcHeight > 0), the tensors large enough, height x width x
// sizeof(T) 32-byte aligned (Pad.md), width - 32 / sizeof(T) <= oriWidth < width (aligned case: the page does not pad
// an all-valid row; the mask reaches the last block only), rightPad <= width - oriWidth, leftPad 0 (aligned Pad,
// UnPad), UnPad's width 32-byte aligned (its repeat stride is width x sizeof(T) / 32 blocks) and rightPad < width;
// the unaligned Pad's tiling made with a buffer (tmpBuffer1BlockNum > 0). tensor-bounds: the unaligned Pad's
// sharedTmpBuffer below GetPadMaxMinTmpSize's minimum (16 x 32 x 2 bytes, pad_tiling_impl.cpp:79-89) or below the
// two buffers the tiling lays out (2 x tmpBuffer2Offset elements). The forms without sharedTmpBuffer take CANN's
// stack buffer (not modelled). Poison flows element by element.
#pragma once
#include <vector>

#include "kernel_operator.h"  // the whole kernel API, as CANN's family headers need it
// PadTiling / UnPadTiling come from kernel_tiling/kernel_tiling.h, as in CANN; the tiling parameter is a template so
// that kernel_operator.h need not export their global names (a kernel may declare its own).

namespace AscendC {
struct PadParams {
  PadParams() {}
  PadParams(const uint16_t leftPadIn, const uint16_t rightPadIn, const int32_t padValueIn)
      : leftPad(leftPadIn), rightPad(rightPadIn), padValue(padValueIn) {}
  uint16_t leftPad = 0;
  uint16_t rightPad = 0;
  int32_t padValue = 0;
};
struct UnPadParams {
  UnPadParams() {}
  UnPadParams(const uint16_t leftPadIn, const uint16_t rightPadIn) : leftPad(leftPadIn), rightPad(rightPadIn) {}
  uint16_t leftPad = 0;
  uint16_t rightPad = 0;
};
}  // namespace AscendC

namespace opkit_emu {
template <class T, class Tiling>
void adv_pad(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const AscendC::PadParams& p,
             const AscendC::LocalTensor<uint8_t>* tmp, const Tiling& t, SrcLoc loc) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "opkit emulator: Pad supports 2- and 4-byte types (Pad.md)");
  const char* api = "Pad";
  const uint32_t H = t.srcHeight, W = t.srcWidth, oriW = t.srcOriWidth, epb = 32 / sizeof(T);
  const uint32_t L = p.leftPad, R = p.rightPad;
  if (H == 0 || W == 0)
    fail("api-argument", api, loc, "tiling.srcHeight / srcWidth is 0: the PadTiling was not filled (PadTilingFunc)");
  if (uint64_t(H) * W * sizeof(T) % 32)
    fail("api-argument", api, loc,
         strf("height %u x width %u x %u bytes is not 32-byte aligned (Pad.md: 源操作数的数据量必须32B对齐)", H, W,
              unsigned(sizeof(T))));
  const bool aligned = W * sizeof(T) % 32 == 0;
  const uint32_t Wd = aligned ? W : W + L + R, rup = (W + epb - 1) / epb * epb;
  if (aligned) {
    if (L != 0 || oriW >= W || W - oriW > epb || R > W - oriW)
      fail("api-argument", api, loc,
           strf("width %u is 32-byte aligned: Pad then fills columns [srcOriWidth, srcOriWidth + rightPad) of the "
                "row's last 32-byte block, so it needs leftPad 0 (got %u), srcOriWidth %u in [width - %u, width) and "
                "rightPad %u <= width - srcOriWidth (Pad.md: right pad only; an all-valid aligned width is not padded)",
                W, L, oriW, epb, R));
  } else {
    if (Wd != rup)
      fail("api-argument", api, loc,
           strf("width %u + leftPad %u + rightPad %u = %u, but the A2 code writes width rounded up to 32 bytes (%u) "
                "per row and takes that less the pads from src: the padded width must be exactly %u (Pad.md: not "
                "beyond the aligned width)", W, L, R, Wd, rup, rup));
    if (t.tmpBuffer1BlockNum == 0)
      fail("api-argument", api, loc,
           "tiling.tmpBuffer1BlockNum is 0: an unaligned width needs the PadTiling made with a buffer size "
           "(PadTilingFunc's stackBufferSize, at least GetPadMaxMinTmpSize's minimum)");
    if (tmp) {
      const uint64_t need = std::max<uint64_t>(16u * 32u * 2u, uint64_t(t.tmpBuffer2Offset) * 2 * sizeof(T));
      if (tmp->GetSize() < need)
        fail("tensor-bounds", api, loc,
             strf("sharedTmpBuffer holds %u bytes, below %llu: GetPadMaxMinTmpSize's minimum is 1024 and the tiling "
                  "lays out two buffers of tmpBuffer2Offset = %u elements", tmp->GetSize(),
                  static_cast<unsigned long long>(need), t.tmpBuffer2Offset));
    }
  }
  const uint64_t nin = uint64_t(H) * W, nout = uint64_t(H) * Wd;
  if (src.GetSize() < nin || dst.GetSize() < nout)
    fail("api-argument", api, loc,
         strf("[%u, %u] to [%u, %u]: srcTensor holds %u elements, dstTensor %u", H, W, H, Wd, src.GetSize(),
              dst.GetSize()));
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, nout, "dstTensor").src(src, nin, "srcTensor");
  if (tmp && tmp->GetSize()) c.dst(*tmp, tmp->GetSize(), "sharedTmpBuffer");
  const bool checked = c.commit(Flow::Manual);
  std::vector<uint8_t> bad(nout, 0);
  std::vector<T> out(nout);
  T pv;  // static_cast<T>(padValue) as CANN's pad_base_impl.h:97,102,184,191 (through float only for half / bfloat16)
  if constexpr (std::is_integral<T>::value) pv = static_cast<T>(p.padValue);
  else pv = from_f<T>(static_cast<float>(p.padValue));
  for (uint32_t r = 0; r < H; ++r)
    for (uint32_t j = 0; j < Wd; ++j) {
      const uint64_t o = uint64_t(r) * Wd + j;
      int64_t from = -1;  // the src element, or -1 for the pad value
      if (aligned) from = (j >= oriW && j < oriW + R) ? -1 : int64_t(o);
      else from = (j < L || j >= L + W) ? -1 : int64_t(uint64_t(r) * W + (j - L));
      out[o] = from < 0 ? pv : src.data()[from];
      if (checked && from >= 0) bad[o] = ApiCall::lane_poisoned(c.operand(1), uint64_t(from));
    }
  for (uint64_t o = 0; o < nout; ++o) dst.data()[o] = out[o];
  ctx().stats.vector_elems += nout;
  if (tmp && tmp->GetSize()) shadow_fill(tmp->m_.ub_off(), tmp->m_.bytes, true);
  for (uint64_t o = 0; o < nout; ++o)
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(o * sizeof(T)), sizeof(T), !bad[o]);
}

template <class T, class Tiling>
void adv_unpad(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const AscendC::UnPadParams& p,
               const Tiling& t, SrcLoc loc) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "opkit emulator: UnPad supports 2- and 4-byte types (UnPad.md)");
  const char* api = "UnPad";
  const uint32_t H = t.srcHeight, W = t.srcWidth, R = p.rightPad;
  if (H == 0 || W == 0)
    fail("api-argument", api, loc, "tiling.srcHeight / srcWidth is 0: the UnPadTiling was not filled (UnPadTilingFunc)");
  // CANN's checks (api_check/kernel_check/pad/pad/unpad_check_common.h:50-71): width x sizeof(T) 32-byte aligned,
  // 0 < rightPad x sizeof(T) < 32 asserted; leftPad only warned about ("may not be effective": the A2 code ignores it)
  if (R == 0 || R * sizeof(T) >= 32 || R >= W || W * sizeof(T) % 32)
    fail("api-argument", api, loc,
         strf("rightPad %u (must be > 0 with rightPad x %u bytes below 32, and below width %u), width x %u bytes must "
              "be 32-byte aligned (the A2 GatherMask steps rows by width x sizeof(T) / 32 blocks)",
              R, unsigned(sizeof(T)), W, unsigned(sizeof(T))));
  if (p.leftPad != 0)
    warn_once("api-argument", api, loc,
              strf("leftPad %u is ignored (UnPad.md: 当前暂不生效; the A2 code unpads on the right only)",
                   unsigned(p.leftPad)));
  const uint32_t Wo = W - R;
  const uint64_t nin = uint64_t(H) * W, nout = uint64_t(H) * Wo;
  if (src.GetSize() < nin || dst.GetSize() < nout)
    fail("api-argument", api, loc,
         strf("[%u, %u] to [%u, %u]: srcTensor holds %u elements, dstTensor %u", H, W, H, Wo, src.GetSize(),
              dst.GetSize()));
  ApiCall c(Pipe::V, api, loc);
  c.dst(dst, nout, "dstTensor").src(src, nin, "srcTensor");
  const bool checked = c.commit(Flow::Manual);
  std::vector<T> out(nout);
  std::vector<uint8_t> bad(nout, 0);
  for (uint32_t r = 0; r < H; ++r)
    for (uint32_t j = 0; j < Wo; ++j) {
      out[uint64_t(r) * Wo + j] = src.data()[uint64_t(r) * W + j];
      if (checked) bad[uint64_t(r) * Wo + j] = ApiCall::lane_poisoned(c.operand(1), uint64_t(r) * W + j);
    }
  for (uint64_t o = 0; o < nout; ++o) dst.data()[o] = out[o];
  ctx().stats.vector_elems += nout;
  for (uint64_t o = 0; o < nout; ++o)
    shadow_fill(dst.m_.ub_off() + static_cast<uint32_t>(o * sizeof(T)), sizeof(T), !bad[o]);
}
}  // namespace opkit_emu

namespace AscendC {
template <typename T, class PadTilingT>
void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, PadParams& padParams,
         const LocalTensor<uint8_t>& sharedTmpBuffer, PadTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_pad(dstTensor, srcTensor, padParams, &sharedTmpBuffer, tiling, loc);
}
template <typename T, class PadTilingT>
void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, PadParams& padParams, PadTilingT& tiling,
         OPKIT_LOC) {
  ::opkit_emu::adv_pad(dstTensor, srcTensor, padParams, nullptr, tiling, loc);
}
template <typename T, class UnPadTilingT>
void UnPad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, UnPadParams& unPadParams,
           LocalTensor<uint8_t>& sharedTmpBuffer, UnPadTilingT& tiling, OPKIT_LOC) {
  (void)sharedTmpBuffer;  // A2 needs none (GetUnPadMaxMinTmpSize gives 0)
  ::opkit_emu::adv_unpad(dstTensor, srcTensor, unPadParams, tiling, loc);
}
template <typename T, class UnPadTilingT>
void UnPad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, UnPadParams& unPadParams,
           UnPadTilingT& tiling, OPKIT_LOC) {
  ::opkit_emu::adv_unpad(dstTensor, srcTensor, unPadParams, tiling, loc);
}
}  // namespace AscendC
