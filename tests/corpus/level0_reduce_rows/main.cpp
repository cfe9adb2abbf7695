// CPU-debug host program (samples' convention): inputs from ./input, result to ./output.
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void rows_reduce(GM_ADDR x, GM_ADDR out, GM_ADDR tiling);

int32_t main() {
  const size_t bytes = 32 * 200 * sizeof(float), outBytes = 2 * 32 * sizeof(float);
  uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* out = (uint8_t*)AscendC::GmAlloc(outBytes);
  uint8_t* t = (uint8_t*)AscendC::GmAlloc(32);
  ReadFile("./input/input_x.bin", bytes, x, bytes);
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(rows_reduce, 1, x, out, t);
  WriteFile("./output/output.bin", out, outBytes);
  for (uint8_t* p : {x, out, t}) AscendC::GmFree((void*)p);
  return 0;
}
