// Kernel of test_gm_pad_span.py: the padding arithmetic of gm_pad.h past 4 GiB, on a made-up region that is never
// dereferenced (a launch over a 4 GiB buffer is too big for CI). InitOutput clears the padding it fills with one
// gm_pad_scalar call of the whole fill (up to 2^32 - 1 elements of 8 bytes), so its byte count and the span test
// below it are 64-bit. y[0..3] get: whether a 4 GiB + 48-byte access from the base touches the padding of a
// 4 GiB + 64-byte region whose data ends at 4 GiB + 32 (1); whether one ending at the data's end does (0); whether
// one starting at 4 GiB + 40 does (1); the padding bytes gm_pad_spans finds in all of it (32).
#include <type_traits>

#include "kernel_operator.h"

using namespace AscendC;

static_assert(std::is_same<decltype(&opkit_emu::gm_pad_scalar),
                           void (*)(const void*, size_t, int, bool, const char*, opkit_emu::SrcLoc)>::value,
              "gm_pad_scalar takes a 64-bit byte count");

extern "C" __global__ __aicore__ void emu_gm_pad_span(GM_ADDR y, GM_ADDR tiling) {
  (void)tiling;
  const uint64_t four_g = uint64_t(1) << 32;
  const auto* base = reinterpret_cast<const uint8_t*>(y);   // only compared and offset, never read past y's 4 bytes
  opkit_emu::GmRegion r{base, four_g + 64, 0, four_g + 32};
  auto* out = reinterpret_cast<__gm__ uint8_t*>(y);
  uint64_t pad = 0;
  opkit_emu::gm_pad_spans(r, base, base + four_g + 64, [&](const uint8_t* a, const uint8_t* b) { pad += b - a; });
  const bool long_touch = opkit_emu::gm_pad_touches(r, base, 1, four_g + 48, 0);
  const bool to_data_end = opkit_emu::gm_pad_touches(r, base, 1, four_g + 32, 0);
  const bool late_start = opkit_emu::gm_pad_touches(r, base + four_g + 40, 1, 8, 0);
  out[0] = long_touch;
  out[1] = to_data_end;
  out[2] = late_start;
  out[3] = static_cast<uint8_t>(pad);
}
