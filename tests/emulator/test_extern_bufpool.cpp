// EXTERN_IMPL_BUFPOOL (test_extern_bufpool.py): a user pool that plans TQue / TBuf buffers itself through the
// handle calls, as CANN's tbufpool_management sample's third scenario does; z = x + y through it. mode picks a
// broken use instead: 1 a two-buffer queue whose second handle is never written, 2 a buffer past the pool's UB,
// 3 Reset with a tensor still allocated, 4 a handle past BUFID_SIZE.
#include "opkit_emu/pybind.h"

using namespace AscendC;

class PoolOfFour {
 public:
  PoolOfFour() { Init(); }
  // buffers one after another from the pool's cursor; `sameHandle` writes every buffer into the first handle
  template <class Q>
  bool InitBuffer(Q& que, uint8_t num, uint32_t len, bool sameHandle = false) {
    len = (len + 31) / 32 * 32;
    TBufHandle first = GetBufHandle(GetCurBufSize());
    const uint32_t addr = GetCurAddr();
    que.InitStartBufHandle(first, num, len);
    for (uint32_t i = 0; i < num; ++i)
      que.InitBufHandle(this, i, sameHandle ? first : GetBufHandle(GetCurBufSize() + i), addr + i * len, len);
    SetCurAddr(addr + num * len);
    SetCurBufSize(GetCurBufSize() + num);
    return true;
  }
  template <TPosition p>
  bool InitBuffer(TBuf<p>& buf, uint32_t len) {
    len = (len + 31) / 32 * 32;
    TBufHandle h = GetBufHandle(GetCurBufSize());
    buf.InitStartBufHandle(h, 1, len);
    buf.InitBufHandle(this, 0, h, GetCurAddr(), len);
    SetCurAddr(GetCurAddr() + len);
    SetCurBufSize(GetCurBufSize() + 1);
    return true;
  }
  EXTERN_IMPL_BUFPOOL(PoolOfFour, TPosition::VECCALC, 4);
};

// x, y, z: 256 floats; mode: [mode]
extern "C" __global__ __aicore__ void ext_pool_add(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR mode) {
  const uint32_t m = ((__gm__ uint32_t*)mode)[0];
  constexpr uint32_t n = 256, bytes = n * sizeof(float);
  TPipe pipe;
  PoolOfFour pool;
  TQue<TPosition::VECIN, 1> qx;
  TBuf<TPosition::VECCALC> by;
  TQue<TPosition::VECOUT, 1> qz;
  pipe.InitBufPool(pool, 4 * bytes);  // room for mode 1's second queue buffer
  if (m == 1) pool.InitBuffer(qx, 2, bytes, true);
  else pool.InitBuffer(qx, 1, bytes);
  pool.InitBuffer(by, m == 2 ? 4 * bytes : bytes);
  pool.InitBuffer(qz, 1, bytes);
  if (m == 4) pool.GetBufHandle(4);
  GlobalTensor<float> gx, gy, gz;
  gx.SetGlobalBuffer((__gm__ float*)x, n);
  gy.SetGlobalBuffer((__gm__ float*)y, n);
  gz.SetGlobalBuffer((__gm__ float*)z, n);
  LocalTensor<float> a = qx.AllocTensor<float>(), b = by.Get<float>();
  DataCopy(a, gx, n);
  DataCopy(b, gy, n);
  qx.EnQue(a);
  a = qx.DeQue<float>();
  PipeBarrier<PIPE_ALL>();  // the TBuf's copy has no queue event
  LocalTensor<float> c = qz.AllocTensor<float>();
  Add(c, a, b, n);
  qz.EnQue(c);
  if (m == 3) pool.Reset();
  qx.FreeTensor(a);
  c = qz.DeQue<float>();
  DataCopy(gz, c, n);
  qz.FreeTensor(c);
  pool.Reset();
  pipe.Reset();
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, ext_pool_add, 4);
}
