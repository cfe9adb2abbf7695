// Kernel of test_data_extent.py: a UB->GM copy whose last 32-byte block is only partly written in UB, as ops-nn
// ReluV3 float16 copies out its last tile (op_kernel/relu_v3.h:148-149,155 at e5c3fa93). tiling = {mode, n}:
//   mode 0: Duplicate n halves, DataCopy the n rounded up to 16 (one 32-byte block);
//   mode 1: the same under SetAtomicAdd<half> (the deferred atomic copy checks poison at the same sink);
//   mode 2: DataCopyPad of 2 rows of 64 bytes (GM pitch 64) with only the first n halves written.
#include "kernel_operator.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void emu_data_extent(GM_ADDR y, GM_ADDR tiling) {
  const uint32_t mode = reinterpret_cast<__gm__ uint32_t*>(tiling)[0];
  const uint32_t n = reinterpret_cast<__gm__ uint32_t*>(tiling)[1];
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 512);
  LocalTensor<half> t = buf.Get<half>();
  GlobalTensor<half> yg;
  yg.SetGlobalBuffer((__gm__ half*)y, 256);
  Duplicate(t, half(1.0f), n);
  PipeBarrier<PIPE_ALL>();
  if (mode == 2) {
    DataCopyPad(yg, t, DataCopyExtParams(2, 64, 0, 0, 0));
    return;
  }
  if (mode == 1) SetAtomicAdd<half>();
  DataCopy(yg, t, (n + 15) / 16 * 16);
  if (mode == 1) SetAtomicNone();
}
