// Pipe hazards (issue 10 item 4; msSanitizer racecheck/synccheck, off-device): kernels that miss one
// ordering between the MTE2 / V / MTE3 / S pipes, and kernels that order everything correctly.
// Lines marked `// RACE:<name>` are where the emulator must report; `// EARLIER:<name>` the other call.
// These scenarios model a build with --cce-auto-sync=off: every sync explicit, the scalar pipe's too
// (test_auto_sync covers the default).
#define OPKIT_EMU_NO_AUTO_SYNC 1
#include "opkit_emu/pybind.h"

using namespace AscendC;

enum Scenario : int32_t {
  kNoVS, kNoSV, kNoMte2V, kNoVMte3, kWarVMte2, kVecinUsedForOutput, kNoMte3Mte2, kDoubleBufferedNoFree,
  kCleanQueues, kCleanFlags, kCleanBarrier, kCleanTransitive, kCleanScalarLoops, kCleanTbufRegions
};

struct HzTiling {
  int32_t scenario;
  int32_t n;
};

__aicore__ inline void VS() { SetFlag<HardEvent::V_S>(EVENT_ID0); WaitFlag<HardEvent::V_S>(EVENT_ID0); }
__aicore__ inline void SV() { SetFlag<HardEvent::S_V>(EVENT_ID0); WaitFlag<HardEvent::S_V>(EVENT_ID0); }

extern "C" __global__ __aicore__ void hazards(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(HzTiling, t, tiling);
  TPipe pipe;
  TQue<TPosition::VECIN, 2> qin;
  TQue<TPosition::VECOUT, 2> qout;
  TBuf<TPosition::VECCALC> tb, tb2;
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x, 1024);
  gy.SetGlobalBuffer((__gm__ float*)y, 1024);
  pipe.InitBuffer(qin, 2, 1024);
  pipe.InitBuffer(qout, 2, 1024);
  pipe.InitBuffer(tb, 4096);
  pipe.InitBuffer(tb2, 1024);
  LocalTensor<float> u = tb.Get<float>(), red = tb2.Get<float>();
  switch (t.scenario) {
    case kNoVS: {  // a reduction result read by the scalar unit before the vector pipe finished
      Duplicate(u, 2.0f, 256);
      ReduceSum(red, u, red, 256);  // EARLIER:kNoVS
      float s = red.GetValue(0);    // RACE:kNoVS
      gy.SetValue(0, s);
      break;
    }
    case kNoSV: {  // a scalar store consumed by a vector instruction before it landed
      Duplicate(u, 1.0f, 64);
      VS();
      u.SetValue(3, 7.0f);  // EARLIER:kNoSV
      Adds(u, u, 1.0f, 64);  // RACE:kNoSV
      break;
    }
    case kNoMte2V: {  // copy-in into a TBuf, computed on without MTE2 -> V
      DataCopy(u, gx, 256);  // EARLIER:kNoMte2V
      Exp(u, u, 256);        // RACE:kNoMte2V
      break;
    }
    case kNoVMte3: {  // computed into a TBuf, copied out without V -> MTE3
      Duplicate(u, 1.0f, 256);  // EARLIER:kNoVMte3
      DataCopy(gy, u, 256);     // RACE:kNoVMte3
      break;
    }
    case kWarVMte2: {  // the next copy-in overwrites a buffer the vector pipe may still be reading
      DataCopy(u, gx, 256);
      SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
      WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
      Exp(red, u, 256);  // EARLIER:kWarVMte2
      DataCopy(u, gx[256], 256);  // RACE:kWarVMte2
      break;
    }
    case kVecinUsedForOutput: {  // EnQue on a VECIN queue sets MTE2_V: it does not order V before MTE3
      LocalTensor<float> a = qin.AllocTensor<float>();
      Duplicate(a, 3.0f, 256);  // EARLIER:kVecinUsedForOutput
      qin.EnQue(a);
      a = qin.DeQue<float>();
      DataCopy(gy, a, 256);  // RACE:kVecinUsedForOutput
      qin.FreeTensor(a);
      break;
    }
    case kNoMte3Mte2: {  // a TBuf copied out, then refilled by the next copy-in with no MTE3 -> MTE2
      Duplicate(u, 1.0f, 256);
      PipeBarrier<PIPE_ALL>();
      DataCopy(gy, u, 256);  // EARLIER:kNoMte3Mte2
      DataCopy(u, gx, 256);  // RACE:kNoMte3Mte2
      break;
    }
    case kDoubleBufferedNoFree: {  // the output tensor is reused (not re-allocated) while MTE3 reads it
      LocalTensor<float> o = qout.AllocTensor<float>();
      Duplicate(o, 1.0f, 256);
      qout.EnQue(o);
      o = qout.DeQue<float>();
      DataCopy(gy, o, 256);  // EARLIER:kDoubleBufferedNoFree
      Duplicate(o, 2.0f, 256);  // RACE:kDoubleBufferedNoFree
      qout.FreeTensor(o);
      break;
    }
    case kCleanQueues: {  // the canonical double-buffered pipeline
      for (int i = 0; i < 4; ++i) {
        LocalTensor<float> a = qin.AllocTensor<float>();
        DataCopy(a, gx[i * 256], 256);
        qin.EnQue(a);
        a = qin.DeQue<float>();
        LocalTensor<float> o = qout.AllocTensor<float>();
        Muls(o, a, 2.0f, 256);
        qin.FreeTensor(a);
        qout.EnQue(o);
        o = qout.DeQue<float>();
        DataCopy(gy[i * 256], o, 256);
        qout.FreeTensor(o);
      }
      break;
    }
    case kCleanFlags: {
      DataCopy(u, gx, 256);
      SetFlag<HardEvent::MTE2_V>(EVENT_ID1);
      WaitFlag<HardEvent::MTE2_V>(EVENT_ID1);
      ReduceSum(red, u, red, 256);
      VS();
      float s = red.GetValue(0);
      u.SetValue(0, s);
      SV();
      Adds(u, u, 1.0f, 256);
      SetFlag<HardEvent::V_MTE3>(EVENT_ID2);
      WaitFlag<HardEvent::V_MTE3>(EVENT_ID2);
      DataCopy(gy, u, 256);
      SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID3);
      WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID3);
      DataCopy(u, gx[256], 256);
      SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID3);
      WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID3);
      DataCopy(gy[256], u, 256);
      break;
    }
    case kCleanBarrier: {
      DataCopy(u, gx, 256);
      PipeBarrier<PIPE_ALL>();
      Exp(u, u, 256);
      pipe_barrier(PIPE_ALL);
      DataCopy(gy, u, 256);
      PipeBarrier<PIPE_ALL>();
      float v = u.GetValue(5);
      gy.SetValue(300, v);
      break;
    }
    case kCleanTransitive: {  // MTE2 -> V (queue) then V -> MTE3 (flag): MTE3 is ordered after MTE2 too
      LocalTensor<float> a = qin.AllocTensor<float>();
      DataCopy(a, gx, 256);
      qin.EnQue(a);
      a = qin.DeQue<float>();
      Duplicate(u, 0.0f, 8);
      SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
      WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
      DataCopy(gy, a, 256);  // reads what MTE2 wrote: ordered through V's knowledge
      SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
      WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
      qin.FreeTensor(a);
      break;
    }
    case kCleanScalarLoops: {  // element-by-element scalar loops stay cheap and race-free with one sync
      for (int32_t i = 0; i < t.n; ++i) u.SetValue(i, static_cast<float>(i));
      SV();
      Muls(u, u, 2.0f, t.n);
      VS();
      float acc = 0.0f;
      for (int32_t i = 0; i < t.n; ++i) acc += u.GetValue(i);
      gy.SetValue(0, acc);
      // how many hazard records the loops left: merged neighbours keep this O(1), not O(n)
      gy.SetValue(1, static_cast<float>(opkit_emu::ctx().hz.segs.size()));
      break;
    }
    case kCleanTbufRegions: {  // one TBuf, disjoint regions on different pipes at the same time
      LocalTensor<float> lo = tb.GetWithOffset<float>(256, 0), hi = tb.GetWithOffset<float>(256, 1024);
      DataCopy(lo, gx, 256);
      Duplicate(hi, 1.0f, 256);
      SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
      WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
      Add(hi, hi, lo, 256);
      SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
      WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
      DataCopy(gy, hi, 256);
      break;
    }
    default:
      break;
  }
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, hazards, 3);
}
