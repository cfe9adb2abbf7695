// LocalTensor(pos, addr, tileSize): a tensor at a fixed UB address (local_mem_allocator.h). test_local_tensor_addr.py.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// y = x * 2 through two tensors at UB bytes 0 and addr[0].
extern "C" __global__ __aicore__ void at_addr(GM_ADDR x, GM_ADDR y, GM_ADDR addr) {
  LocalTensor<float> a(TPosition::VECCALC, 0, 64);
  LocalTensor<float> b(TPosition::VECCALC, ((__gm__ uint32_t*)addr)[0], 64);
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x, 64);
  gy.SetGlobalBuffer((__gm__ float*)y, 64);
  DataCopy(a, gx, 64);
  PipeBarrier<PIPE_ALL>();
  Muls(b, a, 2.0f, 64);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, b, 64);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, at_addr, 3);
}
