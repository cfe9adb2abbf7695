// InitOutput (opkit_emu/gm_init.h), as CANN implements it (impl/basic_api/kernel_operator_common_intf_impl.h,
// mirror-cann/asc-devkit 82b89a15): Duplicate into UB after the TPipe's buffers, DataCopyPad out to GM.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// args = {size, mode}: mode 0 fills `size` floats of y with 2.5; 1 fills under SetAtomicAdd (y += 2.5);
// 2 has no TPipe; 3 fills half values (1.5) into y viewed as half.
extern "C" __global__ __aicore__ void init_output(GM_ADDR y, GM_ADDR args) {
  GlobalTensor<int32_t> ga;
  ga.SetGlobalBuffer((__gm__ int32_t*)args, 2);
  const uint32_t size = ga.GetValue(0);
  const int32_t mode = ga.GetValue(1);
  GlobalTensor<float> gy;
  gy.SetGlobalBuffer((__gm__ float*)y + GetBlockIdx() * size, size);
  if (mode == 2) {
    InitOutput<float>(gy, size, 2.5f);
    return;
  }
  TPipe pipe;
  if (mode == 1) SetAtomicAdd<float>();
  if (mode == 3) {
    GlobalTensor<half> gh;
    gh.SetGlobalBuffer((__gm__ half*)y, size);
    InitOutput<half>(gh, size, static_cast<half>(1.5f));
  } else {
    InitOutput<float>(gy, size, 2.5f);
  }
  SetAtomicNone();
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, init_output, 2);
}
