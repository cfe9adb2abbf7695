// CPU-debug host program (samples' convention).
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void pad_rowmax(GM_ADDR x, GM_ADDR out, GM_ADDR tiling);

int32_t main() {
  const size_t bytes = 16 * 37 * sizeof(float), outBytes = 16 * sizeof(float);
  uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* out = (uint8_t*)AscendC::GmAlloc(outBytes);
  uint8_t* t = (uint8_t*)AscendC::GmAlloc(32);
  ReadFile("./input/input_x.bin", bytes, x, bytes);
  ICPU_RUN_KF(pad_rowmax, 1, x, out, t);
  WriteFile("./output/output_max.bin", out, outBytes);
  for (uint8_t* p : {x, out, t}) AscendC::GmFree((void*)p);
  return 0;
}
