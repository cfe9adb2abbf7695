// One kernel per hardware rule violation (facts sheet §1-3, issue item 7). Each violating statement
// carries a `// RULE:<scenario>` marker; test_rules.py checks the reported file:line against it.
#include "opkit_emu/pybind.h"

using namespace AscendC;

struct RuleTiling {
  int32_t scenario;
};

enum Scenario : int32_t {
  kUbCapacity, kUbCapacityMulti, kUbReserved, kUbAlignVector, kUbAlignCopy, kDataCopyLength, kDataCopyLengthOut, kGmBoundsSize,
  kGmBoundsBuffer, kGmBoundsArg, kGmBoundsGetValue, kGmBoundsPad, kDequeEmpty, kAllocTooMany, kDoubleFree, kUseAfterFree,
  kLeakAtEnd, kEnqueTooDeep, kFreeQueued, kUninitVector, kUninitCopyOut, kUninitGetValue, kUninitStaleAlloc,
  kUninitTail, kCompareLength, kWaitWithoutSet, kSetNeverWaited, kTbufGet, kTbufOffset, kTensorBoundsCount,
  kTensorBoundsIndex, kTensorBoundsView, kBufferLimit, kQueueNoInit, kTilingTooSmall, kCastMode, kGmSizeInside, kGmSizeInsideOne, kOk
};

__aicore__ void rules_body(GM_ADDR x, GM_ADDR y, int32_t sc) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> qin;
  TQue<TPosition::VECOUT, 1> qout;
  TBuf<TPosition::VECCALC> tb;
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x, 256);
  gy.SetGlobalBuffer((__gm__ float*)y, 256);
  switch (sc) {
    case kUbCapacity:
      pipe.InitBuffer(tb, 200 * 1024);  // RULE:kUbCapacity
      break;
    case kUbCapacityMulti:
      pipe.InitBuffer(qin, 2, 64 * 1024);
      pipe.InitBuffer(qout, 1, 64 * 1024 + 32);  // RULE:kUbCapacityMulti
      break;
    case kUbReserved:  // exactly the whole UB: CANN accepts it, past the compiler's reservation: a warning
      pipe.InitBuffer(qin, 2, 64 * 1024);
      pipe.InitBuffer(qout, 1, 64 * 1024);  // RULE:kUbReserved
      break;
    case kUbAlignVector: {
      pipe.InitBuffer(tb, 1024);
      LocalTensor<float> t = tb.Get<float>();
      Duplicate(t, 1.0f, 256);
      Adds(t[3], t, 1.0f, 16);  // RULE:kUbAlignVector
      break;
    }
    case kUbAlignCopy: {
      pipe.InitBuffer(tb, 1024);
      LocalTensor<float> t = tb.Get<float>();
      DataCopy(t[4], gx, 64);  // RULE:kUbAlignCopy
      break;
    }
    case kDataCopyLength: {
      pipe.InitBuffer(tb, 1024);
      LocalTensor<float> t = tb.Get<float>();
      DataCopy(t, gx, 100);  // RULE:kDataCopyLength
      break;
    }
    case kDataCopyLengthOut: {
      pipe.InitBuffer(tb, 1024);
      LocalTensor<float> t = tb.Get<float>();
      Duplicate(t, 0.0f, 256);
      DataCopy(gy, t, 12);  // RULE:kDataCopyLengthOut
      break;
    }
    case kGmBoundsSize: {
      pipe.InitBuffer(tb, 2048);
      LocalTensor<float> t = tb.Get<float>();
      DataCopy(t, gx[200], 64);  // RULE:kGmBoundsSize
      break;
    }
    case kGmSizeInside:     // past the SetGlobalBuffer size, inside the buffer: legal on the NPU, a warning
    case kGmSizeInsideOne: {
      GlobalTensor<float> small;
      small.SetGlobalBuffer((__gm__ float*)x, sc == kGmSizeInside ? 56 : 1);
      pipe.InitBuffer(tb, 2048);
      LocalTensor<float> t = tb.Get<float>();
      if (sc == kGmSizeInside) DataCopy(t, small, 64);  // RULE:kGmSizeInside
      else DataCopy(t, small, 64);  // RULE:kGmSizeInsideOne
      PipeBarrier<PIPE_ALL>();
      DataCopy(gy, t, 64);
      break;
    }
    case kGmBoundsBuffer: {
      GlobalTensor<float> big;
      big.SetGlobalBuffer((__gm__ float*)x, 100000);  // sized past the real buffer
      pipe.InitBuffer(tb, 2048);
      LocalTensor<float> t = tb.Get<float>();
      DataCopy(t, big[512], 64);  // RULE:kGmBoundsBuffer
      break;
    }
    case kGmBoundsArg: {  // no SetGlobalBuffer size: the kernel argument's own extent is the limit
      GlobalTensor<float> unsized;
      unsized.SetGlobalBuffer((__gm__ float*)x);
      pipe.InitBuffer(tb, 2048);
      LocalTensor<float> t = tb.Get<float>();
      DataCopy(t, unsized[224], 64);  // RULE:kGmBoundsArg
      break;
    }
    case kGmBoundsGetValue: {
      float v = gx.GetValue(256);  // RULE:kGmBoundsGetValue
      (void)v;
      break;
    }
    case kGmBoundsPad: {
      pipe.InitBuffer(tb, 2048);
      LocalTensor<float> t = tb.Get<float>();
      Duplicate(t, 0.0f, 512);
      DataCopyPad(gy[255], t, DataCopyExtParams{1, 2 * sizeof(float), 0, 0, 0});  // RULE:kGmBoundsPad
      break;
    }
    case kDequeEmpty: {
      pipe.InitBuffer(qin, 1, 256);
      LocalTensor<float> t = qin.DeQue<float>();  // RULE:kDequeEmpty
      (void)t;
      break;
    }
    case kAllocTooMany: {
      pipe.InitBuffer(qin, 2, 256);
      LocalTensor<float> a = qin.AllocTensor<float>();
      LocalTensor<float> b = qin.AllocTensor<float>();
      LocalTensor<float> c = qin.AllocTensor<float>();  // RULE:kAllocTooMany
      (void)a; (void)b; (void)c;
      break;
    }
    case kDoubleFree: {
      pipe.InitBuffer(qin, 1, 256);
      LocalTensor<float> a = qin.AllocTensor<float>();
      qin.FreeTensor(a);
      qin.FreeTensor(a);  // RULE:kDoubleFree
      break;
    }
    case kUseAfterFree: {
      pipe.InitBuffer(qin, 1, 256);
      LocalTensor<float> a = qin.AllocTensor<float>();
      Duplicate(a, 1.0f, 64);
      qin.FreeTensor(a);
      Adds(a, a, 1.0f, 64);  // RULE:kUseAfterFree
      break;
    }
    case kLeakAtEnd: {
      pipe.InitBuffer(qin, 1, 256);
      LocalTensor<float> a = qin.AllocTensor<float>();  // RULE:kLeakAtEnd
      Duplicate(a, 1.0f, 64);
      break;
    }
    case kEnqueTooDeep: {
      pipe.InitBuffer(qin, 2, 256);
      LocalTensor<float> a = qin.AllocTensor<float>();
      LocalTensor<float> b = qin.AllocTensor<float>();
      qin.EnQue(a);
      qin.EnQue(b);  // RULE:kEnqueTooDeep
      break;
    }
    case kFreeQueued: {
      pipe.InitBuffer(qin, 1, 256);
      LocalTensor<float> a = qin.AllocTensor<float>();
      qin.EnQue(a);
      qin.FreeTensor(a);  // RULE:kFreeQueued
      break;
    }
    case kUninitVector: {
      pipe.InitBuffer(tb, 1024);
      LocalTensor<float> t = tb.Get<float>();
      Duplicate(t, 1.0f, 100);
      Exp(t, t, 101);  // element 100 is poison, and stays poison
      PipeBarrier<PIPE_ALL>();
      DataCopyPad(gy, t, DataCopyExtParams{1, 101 * sizeof(float), 0, 0, 0});  // RULE:kUninitVector
      break;
    }
    case kUninitCopyOut: {
      pipe.InitBuffer(qout, 1, 1024);
      LocalTensor<float> t = qout.AllocTensor<float>();
      Duplicate(t, 1.0f, 56);
      qout.EnQue(t);
      t = qout.DeQue<float>();
      DataCopy(gy, t, 64);  // RULE:kUninitCopyOut
      qout.FreeTensor(t);
      break;
    }
    case kUninitGetValue: {
      pipe.InitBuffer(tb, 1024);
      LocalTensor<float> t = tb.Get<float>();
      float v = t.GetValue(5);  // RULE:kUninitGetValue
      (void)v;
      break;
    }
    case kUninitStaleAlloc: {
      pipe.InitBuffer(qin, 1, 256);
      LocalTensor<float> a = qin.AllocTensor<float>();
      Duplicate(a, 1.0f, 64);
      qin.FreeTensor(a);
      LocalTensor<float> b = qin.AllocTensor<float>();  // same buffer, stale data
      PipeBarrier<PIPE_ALL>();
      DataCopy(gy, b, 64);  // RULE:kUninitStaleAlloc
      qin.FreeTensor(b);
      break;
    }
    case kUninitTail: {
      pipe.InitBuffer(tb, 1024);
      LocalTensor<float> t = tb.Get<float>();
      DataCopyPad(t, gx, DataCopyExtParams{2, 10 * sizeof(float), 0, 0, 0}, DataCopyPadExtParams<float>{});
      PipeBarrier<PIPE_ALL>();
      Abs(t, t, 40);  // two padded rows hold elements 0..31: 32..39 are poison
      PipeBarrier<PIPE_ALL>();
      DataCopy(gy, t, 40);  // RULE:kUninitTail
      break;
    }
    case kCompareLength: {
      pipe.InitBuffer(tb, 2048);
      LocalTensor<float> t = tb.Get<float>();
      Duplicate(t, 1.0f, 256);
      LocalTensor<uint8_t> mask = t[128].ReinterpretCast<uint8_t>();
      Compare(mask, t, t, CMPMODE::EQ, 96);  // RULE:kCompareLength
      break;
    }
    case kWaitWithoutSet:
      WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);  // RULE:kWaitWithoutSet
      break;
    case kSetNeverWaited:
      SetFlag<HardEvent::V_MTE3>(EVENT_ID1);  // RULE:kSetNeverWaited
      break;
    case kTbufGet: {
      pipe.InitBuffer(tb, 256);
      LocalTensor<float> t = tb.Get<float>(65);  // RULE:kTbufGet
      (void)t;
      break;
    }
    case kTbufOffset: {
      pipe.InitBuffer(tb, 256);
      LocalTensor<float> t = tb.GetWithOffset<float>(32, 160);  // RULE:kTbufOffset
      (void)t;
      break;
    }
    case kTensorBoundsCount: {
      pipe.InitBuffer(tb, 256);
      LocalTensor<float> t = tb.Get<float>();
      Duplicate(t, 0.0f, 65);  // RULE:kTensorBoundsCount
      break;
    }
    case kTensorBoundsIndex: {
      pipe.InitBuffer(tb, 256);
      LocalTensor<float> t = tb.Get<float>();
      t.SetValue(64, 1.0f);  // RULE:kTensorBoundsIndex
      break;
    }
    case kTensorBoundsView: {
      pipe.InitBuffer(tb, 256);
      LocalTensor<float> t = tb.Get<float>();
      LocalTensor<float> v = t[72];  // RULE:kTensorBoundsView
      (void)v;
      break;
    }
    case kBufferLimit: {
      TQue<TPosition::VECIN, 1> q[5];
      for (int i = 0; i < 5; ++i) pipe.InitBuffer(q[i], 2, 64);  // RULE:kBufferLimit
      break;
    }
    case kQueueNoInit: {
      LocalTensor<float> t = qin.AllocTensor<float>();  // RULE:kQueueNoInit
      (void)t;
      break;
    }
    case kCastMode: {
      pipe.InitBuffer(tb, 1024);
      LocalTensor<float> f = tb.Get<float>();
      Duplicate(f, 1.0f, 64);
      LocalTensor<half> h = f[128].ReinterpretCast<half>();
      volatile int mode = static_cast<int>(RoundMode::CAST_FLOOR);  // not a compile-time constant
      Cast(f, h, static_cast<RoundMode>(mode), 16);  // RULE:kCastMode
      break;
    }
    case kOk: {  // a clean kernel keeping every rule: y = x + 1 through the queues
      pipe.InitBuffer(qin, 1, 256 * sizeof(float));
      pipe.InitBuffer(qout, 1, 256 * sizeof(float));
      LocalTensor<float> a = qin.AllocTensor<float>();
      DataCopy(a, gx, 256);
      qin.EnQue(a);
      LocalTensor<float> b = qin.DeQue<float>();
      LocalTensor<float> c = qout.AllocTensor<float>();
      Adds(c, b, 1.0f, 256);
      qout.EnQue(c);
      qin.FreeTensor(b);
      LocalTensor<float> d = qout.DeQue<float>();
      DataCopy(gy, d, 256);
      qout.FreeTensor(d);
      break;
    }
    default:
      break;
  }
}

extern "C" __global__ __aicore__ void rules(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RuleTiling, t, tiling);
  rules_body(x, y, t.scenario);
}

struct BigTiling {
  int32_t scenario;
  int32_t pad[15];
};
extern "C" __global__ __aicore__ void rules_big_tiling(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(BigTiling, t, tiling);  // RULE:kTilingTooSmall
  rules_body(x, y, t.scenario);
}

// Fails only in block 3, to check the reported block index.
extern "C" __global__ __aicore__ void fail_in_block3(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  (void)tiling;
  TPipe pipe;
  TBuf<TPosition::VECCALC> tb;
  pipe.InitBuffer(tb, 256);
  LocalTensor<float> t = tb.Get<float>();
  GlobalTensor<float> gy;
  gy.SetGlobalBuffer((__gm__ float*)y, 256);
  if (GetBlockIdx() != 3) Duplicate(t, 0.0f, 64);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy[GetBlockIdx() * 64 % 256], t, 64);  // RULE:block3
}

// Throws a plain C++ exception: reported as status 2 / RuntimeError, not a rule.
extern "C" __global__ __aicore__ void throws(GM_ADDR, GM_ADDR, GM_ADDR) { throw std::logic_error("boom"); }

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, rules, 3);
  OPKIT_EMU_PY_KERNEL(m, rules_big_tiling, 3);
  OPKIT_EMU_PY_KERNEL(m, fail_in_block3, 3);
  OPKIT_EMU_PY_KERNEL(m, throws, 3);
}
