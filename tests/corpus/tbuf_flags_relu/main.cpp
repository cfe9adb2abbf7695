// CPU-debug host program (samples' convention).
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void tbuf_relu(GM_ADDR x, GM_ADDR y, GM_ADDR tiling);

int32_t main() {
  const size_t bytes = 4 * 2048 * sizeof(uint16_t);
  uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* t = (uint8_t*)AscendC::GmAlloc(32);
  ReadFile("./input/input_x.bin", bytes, x, bytes);
  ICPU_RUN_KF(tbuf_relu, 4, x, y, t);
  WriteFile("./output/output_y.bin", y, bytes);
  for (uint8_t* p : {x, y, t}) AscendC::GmFree((void*)p);
  return 0;
}
