// WelfordFinalize (lib/normalization/welfordfinalize.h): abLength partial means / M2 sums reduced to one mean and
// variance, the equal-groups, head / tail and counts forms, with and without sharedTmpBuffer;
// test_welfordfinalize.py checks them against PyTorch's mean / variance of the data the partials came from.
#include "opkit_emu/pybind.h"
#include "adv_api/normalization/kernel_operator_welfordfinalize_intf.h"  // CANN's include path resolves

using namespace AscendC;

struct WfCase {
  uint32_t useCounts, tmp;  // tmp: sharedTmpBuffer bytes, 0 = the framework form
  WelfordFinalizePara para;
};

// in: abLength means, abLength M2 sums, abLength counts (int32 bits), zeros to 32 bytes; out: 8 means, 8 variances
extern "C" __global__ __aicore__ void wf_call(GM_ADDR in, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(WfCase, t, tiling);
  TPipe pipe;
  const uint32_t n = t.para.abLength, whole = (3 * n + 7) / 8 * 8;  // the input padded to 32 bytes for DataCopy
  TBuf<TPosition::VECCALC> bi, bo, bt;
  pipe.InitBuffer(bi, whole * 4);
  pipe.InitBuffer(bo, 16 * 4);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer((__gm__ float*)in, whole);
  go.SetGlobalBuffer((__gm__ float*)out, 16);
  LocalTensor<float> x = bi.Get<float>(), o = bo.Get<float>();
  LocalTensor<int32_t> counts = x[2 * n].ReinterpretCast<int32_t>();
  LocalTensor<uint8_t> tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(x, gi, whole);
  PipeBarrier<PIPE_ALL>();
  WelfordFinalizePara p = t.para;
  if (t.useCounts && t.tmp) {
    WelfordFinalize<false>(o, o[8], x, x[n], counts, tmp, p);
  } else if (t.useCounts) {
    WelfordFinalize<false>(o, o[8], x, x[n], counts, p);
  } else if (t.tmp) {
    WelfordFinalize<false>(o, o[8], x, x[n], tmp, p);  // WF:call
  } else {
    WelfordFinalize<false>(o, o[8], x, x[n], p);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, o, 16);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, wf_call, 3);
}
