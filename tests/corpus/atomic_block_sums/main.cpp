// CPU-debug host program (samples' convention); the output starts zeroed, as the atomic add needs.
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void block_sums(GM_ADDR x, GM_ADDR out, GM_ADDR tiling);

int32_t main() {
  const size_t bytes = 8 * 2048 * sizeof(float), outBytes = 9 * sizeof(float);
  uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* out = (uint8_t*)AscendC::GmAlloc(outBytes);
  uint8_t* t = (uint8_t*)AscendC::GmAlloc(32);
  std::memset(out, 0, outBytes);
  ReadFile("./input/input_x.bin", bytes, x, bytes);
  ICPU_RUN_KF(block_sums, 8, x, out, t);
  WriteFile("./output/output_sums.bin", out, outBytes);
  for (uint8_t* p : {x, out, t}) AscendC::GmFree((void*)p);
  return 0;
}
