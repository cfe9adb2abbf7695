// CPU-debug host program in the samples' convention: tiling key set with ICPU_SET_TILING_KEY.
#include "data_utils.h"
#ifdef ASCENDC_CPU_DEBUG
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void softmax_rows(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling);
#else
#error "this program is the CPU-debug build only"
#endif

int32_t main(int32_t argc, char* argv[]) {
  const uint32_t blockDim = 6, rowsPerBlock = 48, rowsPerTile = 16;
  size_t bytes = blockDim * rowsPerBlock * 64 * sizeof(float);
  uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* tiling = (uint8_t*)AscendC::GmAlloc(2 * sizeof(uint32_t));
  reinterpret_cast<uint32_t*>(tiling)[0] = rowsPerBlock;
  reinterpret_cast<uint32_t*>(tiling)[1] = rowsPerTile;
  ReadFile("./input/input_x.bin", bytes, x, bytes);
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_SET_TILING_KEY(1);
  ICPU_RUN_KF(softmax_rows, blockDim, x, y, nullptr, tiling);
  WriteFile("./output/output_y.bin", y, bytes);
  AscendC::GmFree((void*)x);
  AscendC::GmFree((void*)y);
  AscendC::GmFree((void*)tiling);
  return 0;
}
