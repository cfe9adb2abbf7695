// CPU-debug host program (samples' convention): inputs from ./input, result to ./output.
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void static_sigmoid(GM_ADDR x, GM_ADDR y, GM_ADDR tiling);

int32_t main() {
  const size_t bytes = 8 * 2048 * sizeof(float);
  uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* t = (uint8_t*)AscendC::GmAlloc(32);
  ReadFile("./input/input_x.bin", bytes, x, bytes);
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(static_sigmoid, 8, x, y, t);
  WriteFile("./output/output_y.bin", y, bytes);
  for (uint8_t* p : {x, y, t}) AscendC::GmFree((void*)p);
  return 0;
}
