// CPU-debug host program in the samples' convention; the workspace holds one slot per block.
#include "data_utils.h"
#ifdef ASCENDC_CPU_DEBUG
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void normalize_syncall(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling);
#else
#error "this program is the CPU-debug build only"
#endif

int32_t main(int32_t argc, char* argv[]) {
  const uint32_t blockDim = 8, blockLength = 1000;
  size_t bytes = blockDim * blockLength * sizeof(float);
  uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* workspace = (uint8_t*)AscendC::GmAlloc(blockDim * 32);
  uint8_t* tiling = (uint8_t*)AscendC::GmAlloc(sizeof(uint32_t));
  *reinterpret_cast<uint32_t*>(tiling) = blockLength;
  ReadFile("./input/input_x.bin", bytes, x, bytes);
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(normalize_syncall, blockDim, x, y, workspace, tiling);
  WriteFile("./output/output_y.bin", y, bytes);
  for (uint8_t* p : {x, y, workspace, tiling}) AscendC::GmFree((void*)p);
  return 0;
}
