// Host side of CANN's TransData buffer query (asc-devkit 82b89a15 include/adv_api/transpose/transdata_tiling.h:60-63),
// reached through tiling/tiling_api.h: GetTransDataMaxMinTmpSize, written after
// impl/adv_api/tiling/transpose/transdata_tiling.cpp:40-215 (read, not copied): 2-byte types, the four format pairs,
// the shapes checked as CANN checks them (false, with the reason on stderr, when they disagree); max = min.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "opkit_cann/host.h"
#include "tiling/platform/platform_ascendc.h"

namespace AscendC {
#ifndef OPKIT_ASCENDC_DATAFORMAT  // the kernel side (opkit_emu/shape_info.h) declares the same enum
#define OPKIT_ASCENDC_DATAFORMAT
enum class DataFormat : uint8_t { ND = 0, NZ, NCHW, NC1HWC0, NHWC, NCDHW, NDC1HWC0, FRACTAL_Z_3D };
#endif
#ifndef ASCC_PARAM_TRANSDATACONFIG
#define ASCC_PARAM_TRANSDATACONFIG
struct TransDataConfig {
  DataFormat srcFormat;
  DataFormat dstFormat;
};
#endif

inline bool GetTransDataMaxMinTmpSize(const platform_ascendc::PlatformAscendC& platform, const ge::Shape& srcShape,
                                      const ge::Shape& dstShape, const ge::DataType dataType,
                                      const TransDataConfig& config, uint32_t& maxValue, uint32_t& minValue) {
  using DF = DataFormat;
  auto bad = [](const char* why) {
    std::fprintf(stderr, "[TransData][GetTransDataMaxMinTmpSize] %s\n", why);
    return false;
  };
  if (dataType != ge::DT_FLOAT16 && dataType != ge::DT_BF16 && dataType != ge::DT_UINT16 && dataType != ge::DT_INT16)
    return bad("it only supports DT_FLOAT16/DT_BF16/DT_UINT16/DT_INT16 data type");
  const DF s = config.srcFormat, t = config.dstFormat;
  const bool toNcdhw = t == DF::NCDHW;
  const DF other = toNcdhw ? s : t;
  if (!((s == DF::NCDHW && (t == DF::NDC1HWC0 || t == DF::FRACTAL_Z_3D)) ||
        (toNcdhw && (s == DF::NDC1HWC0 || s == DF::FRACTAL_Z_3D))))
    return bad("The parameter config srcFormat/dstFormat only supports (NCDHW, FRACTAL_Z_3D)/(FRACTAL_Z_3D, NCDHW)/"
               "(NCDHW, NDC1HWC0)/(NDC1HWC0, NCDHW)!");
  const NpuArch a = platform.GetCurNpuArch();
  if (a != NpuArch::DAV_2201 && a != NpuArch::DAV_3510 && a != NpuArch::DAV_5102)
    return bad("Unsupported NpuArch for TransData API.");
  const ge::Shape& nc = toNcdhw ? dstShape : srcShape;
  const ge::Shape& os = toNcdhw ? srcShape : dstShape;
  if (nc.GetDimNum() != 5 || os.GetDimNum() != (other == DF::NDC1HWC0 ? 6u : 7u))
    return bad("input shapes are not matched with DataFormat.");
  const int64_t n = nc.GetDim(0), c = nc.GetDim(1), d = nc.GetDim(2), h = nc.GetDim(3), w = nc.GetDim(4);
  const int64_t c1 = (c + 15) / 16, n1 = (n + 15) / 16, pad = (h * w + 15) / 16 * 16;
  const bool agree = other == DF::NDC1HWC0
                         ? os.GetDim(0) == n && os.GetDim(1) == d && os.GetDim(3) == h && os.GetDim(4) == w &&
                               os.GetDim(5) == 16 && os.GetDim(2) * 16 == c1 * 16
                         : os.GetDim(0) == d && os.GetDim(2) == h && os.GetDim(3) == w && os.GetDim(6) == 16 &&
                               os.GetDim(1) * 16 == c1 * 16 && os.GetDim(5) == 16 && os.GetDim(4) * 16 == n1 * 16;
  if (!agree) return bad("failed to validate inputs informations.");
  constexpr int64_t sz = 2;
  int64_t bytes = 0;
  if (s == DF::NCDHW && t == DF::NDC1HWC0) bytes = d * pad * sz + d * c1 * 16 * pad * sz;
  else if (s == DF::NDC1HWC0) bytes = d * c1 * 16 * pad * sz + 512;
  else if (s == DF::NCDHW) bytes = std::max(c * d * pad * sz, d * h * w * n1 * 16 * sz) + n1 * 16 * d * c1 * 16 * pad * sz;
  else bytes = n1 * 16 * c1 * 16 * d * pad * sz * ((n == n1 * 16 && c == c1 * 16) ? 1 : 2);
  maxValue = minValue = static_cast<uint32_t>(bytes);
  return true;
}
}  // namespace AscendC
