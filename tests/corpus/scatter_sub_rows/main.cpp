// CPU-debug host program (samples' convention): inputs from ./input, result to ./output.
#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void scatter_sub_rows(GM_ADDR var, GM_ADDR idx, GM_ADDR upd, GM_ADDR out,
                                                       GM_ADDR tiling);

int32_t main() {
  const size_t varBytes = 16 * 40 * sizeof(float), idxBytes = 8 * sizeof(int32_t), updBytes = 8 * 40 * sizeof(float);
  uint8_t* var = (uint8_t*)AscendC::GmAlloc(varBytes);
  uint8_t* idx = (uint8_t*)AscendC::GmAlloc(idxBytes);
  uint8_t* upd = (uint8_t*)AscendC::GmAlloc(updBytes);
  uint8_t* out = (uint8_t*)AscendC::GmAlloc(varBytes);
  uint8_t* t = (uint8_t*)AscendC::GmAlloc(32);
  ReadFile("./input/input_var.bin", varBytes, var, varBytes);
  ReadFile("./input/input_idx.bin", idxBytes, idx, idxBytes);
  ReadFile("./input/input_upd.bin", updBytes, upd, updBytes);
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(scatter_sub_rows, 1, var, idx, upd, out, t);
  WriteFile("./output/output_out.bin", out, varBytes);
  for (uint8_t* p : {var, idx, upd, out, t}) AscendC::GmFree((void*)p);
  return 0;
}
