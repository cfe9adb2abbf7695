// CPU-debug host program (samples' convention).
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void cmp_sel_max(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling);

int32_t main() {
  const size_t bytes = 1000 * sizeof(float);
  uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* z = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* t = (uint8_t*)AscendC::GmAlloc(32);
  ReadFile("./input/input_x.bin", bytes, x, bytes);
  ReadFile("./input/input_y.bin", bytes, y, bytes);
  ICPU_RUN_KF(cmp_sel_max, 1, x, y, z, t);
  WriteFile("./output/output_z.bin", z, bytes);
  for (uint8_t* p : {x, y, z, t}) AscendC::GmFree((void*)p);
  return 0;
}
