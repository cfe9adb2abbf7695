// CPU-debug host program (samples' convention).
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void gather_rev(GM_ADDR x, GM_ADDR offsets, GM_ADDR y, GM_ADDR tiling);

int32_t main() {
  const size_t bytes = 4 * 256 * sizeof(float), obytes = 256 * sizeof(uint32_t);
  uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* o = (uint8_t*)AscendC::GmAlloc(obytes);
  uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* t = (uint8_t*)AscendC::GmAlloc(32);
  ReadFile("./input/input_x.bin", bytes, x, bytes);
  ReadFile("./input/input_offsets.bin", obytes, o, obytes);
  ICPU_RUN_KF(gather_rev, 4, x, o, y, t);
  WriteFile("./output/output_y.bin", y, bytes);
  for (uint8_t* p : {x, o, y, t}) AscendC::GmFree((void*)p);
  return 0;
}
