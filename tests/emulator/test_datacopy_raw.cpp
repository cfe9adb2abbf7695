// CANN's pointer-level copies (opkit_emu/datacopy_raw.h) and PopStackBuffer (tpipe.h): x goes GM -> UB -> GM through
// each pointer form; the popped stack buffer's size is reported. mode 1: a UB pointer past every buffer.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// out: 64 floats copied by DataCopyGM2UBImpl / DataCopyUB2GMImpl, then 13 by the Pad forms (ragged), then
// [77] the popped buffer's size in bytes, [78] the pipe's used bytes before the pop
extern "C" __global__ __aicore__ void raw_copy(GM_ADDR x, GM_ADDR out, GM_ADDR mode) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> a, b;
  pipe.InitBuffer(a, 64 * sizeof(float));
  pipe.InitBuffer(b, 32 * sizeof(float));
  GlobalTensor<uint32_t> m;
  m.SetGlobalBuffer((__gm__ uint32_t*)mode, 1);
  LocalTensor<float> ta = a.Get<float>(), tb = b.Get<float>();
  __gm__ float* xg = (__gm__ float*)x;
  __gm__ float* og = (__gm__ float*)out;
  DataCopyGM2UBImpl((__ubuf__ float*)ta.GetPhyAddr(), xg, {1, 8, 0, 0});
  PipeBarrier<PIPE_ALL>();
  DataCopyUB2GMImpl(og, (__ubuf__ float*)ta.GetPhyAddr(), {1, 8, 0, 0});
  PipeBarrier<PIPE_ALL>();
  DataCopyExtParams ext{1, 13 * sizeof(float), 0, 0, 0};
  DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
  __ubuf__ float* ub = m.GetValue(0) == 1 ? (__ubuf__ float*)tb.GetPhyAddr() + 4096  // RAW:bad
                                          : (__ubuf__ float*)tb.GetPhyAddr();
  DataCopyPadGm2UBImpl(ub, xg + 64, ext, pad);
  PipeBarrier<PIPE_ALL>();
  DataCopyPadUB2GMImpl(og + 64, (__ubuf__ float*)tb.GetPhyAddr(), ext);
  PipeBarrier<PIPE_ALL>();
  const uint32_t used = 96 * sizeof(float);
  LocalTensor<uint8_t> pop;
  const bool ok = PopStackBuffer<uint8_t, TPosition::LCM>(pop);
  GlobalTensor<float> o;
  o.SetGlobalBuffer(og, 80);
  o.SetValue(77, ok ? static_cast<float>(pop.GetSize()) : -1.0f);
  o.SetValue(78, static_cast<float>(used));
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, raw_copy, 3);
}
