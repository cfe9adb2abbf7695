// CANN's pointer-level group reductions (opkit_emu/reduce_raw.h) as ops-transformer moe_gating_top_k_softmax's
// ReduceMaxFP32Perf calls them: counter mode, two BlockReduceMaxIntrinsicsImpl passes give one max per row of 64.
// mode 0: max per row, then the BlockReduceSum / Min forms; mode 1: a dst pointer into no buffer; mode 2: a src
// pointer 200 floats into a 256-float buffer read for 4 repeats (past the buffer's end); mode 3: the block max of 3
// repeats from a src pointer 64 floats into the buffer.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// x: 4 rows x 64 floats. out: [0, 4) row max; [4, 36) sum of each 8-float block; [36, 68) min of each block;
// [68, 196) sum of each pair.
extern "C" __global__ __aicore__ void raw_reduce(GM_ADDR x, GM_ADDR out, GM_ADDR mode) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> a, b, c, d;
  pipe.InitBuffer(a, 256 * sizeof(float));
  pipe.InitBuffer(b, 32 * sizeof(float));
  pipe.InitBuffer(c, 32 * sizeof(float));
  pipe.InitBuffer(d, 128 * sizeof(float));
  GlobalTensor<uint32_t> m;
  m.SetGlobalBuffer((__gm__ uint32_t*)mode, 1);
  GlobalTensor<float> xg, og;
  xg.SetGlobalBuffer((__gm__ float*)x, 256);
  og.SetGlobalBuffer((__gm__ float*)out, 196);
  LocalTensor<float> ta = a.Get<float>(), tb = b.Get<float>(), tc = c.Get<float>(), td = d.Get<float>();
  DataCopy(ta, xg, 256);
  PipeBarrier<PIPE_ALL>();
  if (m.GetValue(0) >= 2) {  // normal mode, the mask register full: 64 lanes a repeat, 8 results each
    SetVectorMask<float, MaskMode::NORMAL>(0, ~0ull);
    const uint32_t from = m.GetValue(0) == 2 ? 200 : 64, repeats = m.GetValue(0) == 2 ? 4 : 3;
    BlockReduceMaxIntrinsicsImpl((__ubuf__ float*)tb.GetPhyAddr(), (__ubuf__ float*)ta.GetPhyAddr() + from, repeats,
                                 1, 1, 8);
    PipeBarrier<PIPE_ALL>();
    DataCopy(og, tb, 24);
    return;
  }
  __ubuf__ float* dst = m.GetValue(0) == 1 ? (__ubuf__ float*)tc.GetPhyAddr() + 4096  // RAW:bad
                                           : (__ubuf__ float*)tb.GetPhyAddr();
  AscendCUtils::SetMaskCount<float>();
  SetVectorMask<float, MaskMode::COUNTER>(0, 4 * 64);
  BlockReduceMaxIntrinsicsImpl(dst, (__ubuf__ float*)ta.GetPhyAddr(), 1, 1, 1, 8);
  PipeBarrier<PIPE_V>();
  SetVectorMask<float, MaskMode::COUNTER>(0, 4 * 8);
  BlockReduceMaxIntrinsicsImpl((__ubuf__ float*)tc.GetPhyAddr(), (__ubuf__ float*)tb.GetPhyAddr(), 1, 1, 1, 8);
  PipeBarrier<PIPE_V>();
  AscendCUtils::SetMaskNorm<float>();
  PipeBarrier<PIPE_ALL>();
  DataCopyPad(og, tc, DataCopyExtParams{1, 4 * sizeof(float), 0, 0, 0});
  PipeBarrier<PIPE_ALL>();
  // normal mode, the mask register full: 4 repeats of 64 lanes, 8 results each
  SetVectorMask<float, MaskMode::NORMAL>(0, ~0ull);
  BlockReduceSumIntrinsicsImpl((__ubuf__ float*)tb.GetPhyAddr(), (__ubuf__ float*)ta.GetPhyAddr(), 4, 1, 1, 8);
  PipeBarrier<PIPE_ALL>();
  DataCopy(og[4], tb, 32);
  PipeBarrier<PIPE_ALL>();
  BlockReduceMinIntrinsicsImpl((__ubuf__ float*)tb.GetPhyAddr(), (__ubuf__ float*)ta.GetPhyAddr(), 4, 1, 1, 8);
  PipeBarrier<PIPE_ALL>();
  DataCopy(og[36], tb, 32);
  PairReduceSumIntrinsicsImpl((__ubuf__ float*)td.GetPhyAddr(), (__ubuf__ float*)ta.GetPhyAddr(), 4, 1, 1, 8);
  PipeBarrier<PIPE_ALL>();
  DataCopy(og[68], td, 128);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, raw_reduce, 3);
}
