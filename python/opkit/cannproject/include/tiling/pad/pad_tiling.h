// Host side of CANN's Pad / UnPad tiling (asc-devkit 82b89a15 include/adv_api/pad/pad_tiling.h, the structs
// pad_tilingdata.h:21-63), reached through tiling/tiling_api.h as CANN's includes "pad/pad_tiling.h":
// optiling::PadTiling / UnPadTiling, GetPadMaxMinTmpSize, PadTilingFunc, GetUnPadMaxMinTmpSize, UnPadTilingFunc (the
// overloads filling optiling:: and AscendC::tiling:: structs), written after impl/adv_api/tiling/pad/pad_tiling_impl.cpp
// :79-215 (read, not copied). CANN's argument checks log and go on; here they print to stderr and go on. The kernel
// runs Pad / UnPad on the emulator (lib/pad/pad.h).
#pragma once
#include <cstdint>
#include <cstdio>

#include "opkit/adv_tiling_structs.h"
#include "register/tilingdata_base.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(UnPadTiling)
TILING_DATA_FIELD_DEF(uint32_t, srcHeight);
TILING_DATA_FIELD_DEF(uint32_t, srcWidth);
TILING_DATA_FIELD_DEF(uint32_t, tmpBuffer1BlockNum);
TILING_DATA_FIELD_DEF(uint32_t, tmpBuffer1RowNum);
TILING_DATA_FIELD_DEF(uint32_t, tmpBuffer2Offset);
TILING_DATA_FIELD_DEF(uint32_t, widthTiling);
TILING_DATA_FIELD_DEF(uint32_t, widthFractal);
TILING_DATA_FIELD_DEF(uint32_t, widthFractalTail);
END_TILING_DATA_DEF;
BEGIN_TILING_DATA_DEF(PadTiling)
TILING_DATA_FIELD_DEF(uint32_t, srcHeight);
TILING_DATA_FIELD_DEF(uint32_t, srcWidth);
TILING_DATA_FIELD_DEF(uint32_t, srcOriWidth);
TILING_DATA_FIELD_DEF(uint32_t, widthWithoutLastBlock);
TILING_DATA_FIELD_DEF(uint32_t, blocksPerRow);
TILING_DATA_FIELD_DEF(uint32_t, heightTiling);
TILING_DATA_FIELD_DEF(uint32_t, heightFractal);
TILING_DATA_FIELD_DEF(uint32_t, heightFractalTail);
TILING_DATA_FIELD_DEF(uint32_t, mainLoopOffset);
TILING_DATA_FIELD_DEF(uint32_t, tailBlockOffset);
TILING_DATA_FIELD_DEF(uint32_t, tmpBuffer1BlockNum);
TILING_DATA_FIELD_DEF(uint32_t, tmpBuffer1RowNum);
TILING_DATA_FIELD_DEF(uint32_t, tmpBuffer2Offset);
TILING_DATA_FIELD_DEF(uint32_t, widthTiling);
TILING_DATA_FIELD_DEF(uint32_t, widthFractal);
TILING_DATA_FIELD_DEF(uint32_t, widthFractalTail);
TILING_DATA_FIELD_DEF(uint32_t, widthFractalTailAlingned);
TILING_DATA_FIELD_DEF(uint32_t, brcbTiling);
TILING_DATA_FIELD_DEF(uint32_t, brcbFractal);
TILING_DATA_FIELD_DEF(uint32_t, brcbFractalTail);
TILING_DATA_FIELD_DEF(uint32_t, maxRepeatTimes);
TILING_DATA_FIELD_DEF(uint32_t, brcbTilingRepeatTimes);
TILING_DATA_FIELD_DEF(uint32_t, brcbTilingRepeatTimesTail);
TILING_DATA_FIELD_DEF(uint32_t, brcbFractalTailRepeatTimes);
TILING_DATA_FIELD_DEF(uint32_t, brcbFractalTailRepeatTimesTail);
TILING_DATA_FIELD_DEF(uint32_t, reserved);
END_TILING_DATA_DEF;
}  // namespace optiling

namespace AscendC {
namespace pad_host_detail {
constexpr uint32_t kBlk = 32, kRepeat = 255, kAddrList = 16, kBufs = 2;
inline bool check(const char* api, const char* fn, const ge::Shape& s, uint32_t typeSize) {
  if (typeSize != 2 && typeSize != 4)
    std::fprintf(stderr, "[%s][%s] The value of typeSize is %u, should be 2 or 4.\n", api, fn, typeSize);
  if (s.GetDimNum() != 2)
    std::fprintf(stderr, "[%s][%s] The dims of srcShape is %zu, should be 2.\n", api, fn, s.GetDimNum());
  return typeSize > 0 && s.GetDimNum() == 2;
}
// the two work buffers an unaligned row is staged in (pad_tiling_impl.cpp:140-145, :200-204)
inline uint32_t block_num(uint32_t stackBufferSize, uint32_t typeSize) {
  return stackBufferSize / typeSize / (kAddrList * kBlk / typeSize) / 2;
}
}  // namespace pad_host_detail

// :79-89: max covers all of height x width, min one 16-row block, both doubled
inline void GetPadMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                uint32_t& minValue) {
  using namespace pad_host_detail;
  if (!check("Pad", "GetPadMaxMinTmpSize", srcShape, typeSize)) return;
  const uint32_t hw = static_cast<uint32_t>(srcShape.GetDim(0) * srcShape.GetDim(1));
  maxValue = ((hw - 1) / kAddrList + 1) * kAddrList * (kBlk / typeSize) * kBufs * typeSize;
  minValue = kAddrList * (kBlk / typeSize) * kBufs * typeSize;
}

// :90-162
inline void PadTilingFunc(const ge::Shape srcShape, const ge::Shape oriSrcShape, const uint32_t stackBufferSize,
                          const uint32_t typeSize, optiling::PadTiling& tiling) {
  using namespace pad_host_detail;
  if (!check("Pad", "PadTilingFunc", srcShape, typeSize)) return;
  if (oriSrcShape.GetDimNum() != 2) {
    std::fprintf(stderr, "[Pad][PadTilingFunc] The dims of oriSrcShape is %zu, should be 2.\n", oriSrcShape.GetDimNum());
    return;
  }
  if (oriSrcShape.GetShapeSize() > srcShape.GetShapeSize())
    std::fprintf(stderr, "[Pad][PadTilingFunc] The size of oriSrcShape should be less than or equal to srcShape's.\n");
  const uint32_t h = static_cast<uint32_t>(srcShape.GetDim(0)), w = static_cast<uint32_t>(srcShape.GetDim(1));
  const uint32_t epb = kBlk / typeSize;
  tiling.set_srcHeight(h);
  tiling.set_srcWidth(w);
  tiling.set_srcOriWidth(static_cast<uint32_t>(oriSrcShape.GetDim(1)));
  const uint32_t wNoLast = w - epb;  // the aligned case pads inside the row's last block
  tiling.set_widthWithoutLastBlock(wNoLast);
  tiling.set_blocksPerRow(w * typeSize / kBlk);
  tiling.set_heightTiling(kRepeat);
  tiling.set_heightFractal(h / kRepeat);
  tiling.set_heightFractalTail(h % kRepeat);
  tiling.set_mainLoopOffset(kRepeat * w);
  tiling.set_tailBlockOffset(h / kRepeat * kRepeat * w + wNoLast);
  if (stackBufferSize == 0) return;  // the aligned case needs no buffer
  const uint32_t blocks = block_num(stackBufferSize, typeSize), wt = kAddrList * blocks;
  tiling.set_tmpBuffer1RowNum(wt);
  tiling.set_tmpBuffer1BlockNum(blocks);
  tiling.set_tmpBuffer2Offset(blocks * (kAddrList * kBlk / typeSize));
  if (wt == 0) return;  // a buffer below the minimum: CANN divides by zero here
  const uint32_t tail = w % wt;
  tiling.set_widthTiling(wt);
  tiling.set_widthFractal(w / wt);
  tiling.set_widthFractalTail(tail);
  tiling.set_widthFractalTailAlingned(((tail - 1) / epb + 1) * epb);  // as CANN: tail 0 wraps
  const uint32_t brcbFrac = h * w / wt, brcbTail = h * w % wt, maxRep = 254;  // 255 x 8 is not 32-byte aligned
  tiling.set_brcbTiling(wt);
  tiling.set_brcbFractal(brcbFrac);
  tiling.set_brcbFractalTail(brcbTail);
  tiling.set_maxRepeatTimes(maxRep);
  tiling.set_brcbTilingRepeatTimes(wt / 8 / maxRep);
  tiling.set_brcbTilingRepeatTimesTail(wt / 8 % maxRep);
  tiling.set_brcbFractalTailRepeatTimes(brcbTail / 8 / maxRep);
  tiling.set_brcbFractalTailRepeatTimesTail(brcbTail / 8 % maxRep);
}
inline void PadTilingFunc(const ge::Shape srcShape, const ge::Shape oriSrcShape, const uint32_t stackBufferSize,
                          const uint32_t typeSize, AscendC::tiling::PadTiling& tiling) {
  optiling::PadTiling t;
  PadTilingFunc(srcShape, oriSrcShape, stackBufferSize, typeSize, t);
  t.SaveToBuffer(&tiling, sizeof(AscendC::tiling::PadTiling));
}

// :170-188: the A2 (DAV_2201) needs no buffer
inline void GetUnPadMaxMinTmpSize(const platform_ascendc::PlatformAscendC& ascendcPlatform, const ge::Shape& srcShape,
                                  const uint32_t typeSize, uint32_t& maxValue, uint32_t& minValue) {
  using namespace pad_host_detail;
  if (!check("UnPad", "GetUnPadMaxMinTmpSize", srcShape, typeSize)) return;
  const NpuArch a = ascendcPlatform.GetCurNpuArch();
  if (a == NpuArch::DAV_2201 || a == NpuArch::DAV_3510 || a == NpuArch::DAV_5102) {
    maxValue = minValue = 0;
    return;
  }
  const uint32_t hw = static_cast<uint32_t>(srcShape.GetDim(0) * srcShape.GetDim(1));
  maxValue = ((hw - 1) / kAddrList + 1) * kAddrList * (kBlk / typeSize) * kBufs * typeSize;
  minValue = kAddrList * (kBlk / typeSize) * kBufs * typeSize;
}
// :189-215
inline void UnPadTilingFunc(const ge::Shape srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                            optiling::UnPadTiling& tiling) {
  using namespace pad_host_detail;
  if (!check("UnPad", "UnPadTilingFunc", srcShape, typeSize)) return;
  const uint32_t w = static_cast<uint32_t>(srcShape.GetDim(1));
  tiling.set_srcHeight(static_cast<uint32_t>(srcShape.GetDim(0)));
  tiling.set_srcWidth(w);
  if (stackBufferSize == 0) return;  // the A2 needs no buffer
  const uint32_t blocks = block_num(stackBufferSize, typeSize), wt = kAddrList * blocks;
  tiling.set_tmpBuffer1BlockNum(blocks);
  tiling.set_tmpBuffer1RowNum(wt);
  tiling.set_tmpBuffer2Offset(blocks * (kAddrList * kBlk / typeSize));
  if (wt == 0) return;
  uint32_t frac = w / wt, tail = w % wt;
  if (tail != 0) frac += 1;
  else tail = wt;
  tiling.set_widthTiling(wt);
  tiling.set_widthFractal(frac);
  tiling.set_widthFractalTail(tail);
}
inline void UnPadTilingFunc(const ge::Shape srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                            AscendC::tiling::UnPadTiling& tiling) {
  optiling::UnPadTiling t;
  UnPadTilingFunc(srcShape, stackBufferSize, typeSize, t);
  t.SaveToBuffer(&tiling, sizeof(AscendC::tiling::UnPadTiling));
}
}  // namespace AscendC
