// CPU-debug host program in the samples' convention: inputs from ./input, result to ./output.
#include "data_utils.h"
#ifdef ASCENDC_CPU_DEBUG
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void add_tile_level0(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace,
                                                       GM_ADDR tiling);
#else
#error "this program is the CPU-debug build only"
#endif

int32_t main(int32_t argc, char* argv[]) {
  const uint32_t blockDim = 8;
  const uint32_t tiling[2] = {8 * 2 * 2 * 1040, 2};  // 8 blocks x 2 tiles x 2 buffers x 1040 halves (8 repeats + 16)
  const size_t bytes = tiling[0] * sizeof(uint16_t);
  uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* z = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* workspace = (uint8_t*)AscendC::GmAlloc(1024);
  uint8_t* t = (uint8_t*)AscendC::GmAlloc(sizeof tiling);
  std::memcpy(t, tiling, sizeof tiling);
  ReadFile("./input/input_x.bin", bytes, x, bytes);
  ReadFile("./input/input_y.bin", bytes, y, bytes);
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(add_tile_level0, blockDim, x, y, z, workspace, t);
  WriteFile("./output/output_z.bin", z, bytes);
  for (uint8_t* p : {x, y, z, workspace, t}) AscendC::GmFree((void*)p);
  INFO_LOG("add_tile_level0 done");
  return 0;
}
