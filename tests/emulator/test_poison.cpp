// Uninitialised UB as poison (issue 10 item 3, MemorySanitizer-like): lanes computed from UB nothing
// wrote stay poison through vector ops, Cast, Compare / Compares bitmasks (count and level-0 forms) and
// Select; a reduction over a poisoned
// lane is poison. Poison is an error only where it escapes: a copy to GM or a scalar GetValue.
// Lines marked `// LEAK:<name>` are where the emulator must report.
#include "opkit_emu/pybind.h"

using namespace AscendC;

enum Scenario : int32_t {
  kComparePadded, kComparePaddedLeak, kBitmaskPartial, kBitmaskPartialLeak, kReduceUnused, kReduceUsed,
  kCastLeak, kOverwriteCures, kUbToUbCopy, kComparesPadded, kComparesPaddedLeak, kL0ComparePadded,
  kL0ComparePaddedLeak, kL0ComparesPadded, kL0ComparesPaddedLeak
};

struct PsTiling {
  int32_t scenario;
  int32_t n;  // valid elements
};

__aicore__ inline void All() { PipeBarrier<PIPE_ALL>(); }

extern "C" __global__ __aicore__ void poison(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(PsTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> ba, bb, bm, bo;
  pipe.InitBuffer(ba, 1024);
  pipe.InitBuffer(bb, 1024);
  pipe.InitBuffer(bm, 256);
  pipe.InitBuffer(bo, 1024);
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x, 256);
  gy.SetGlobalBuffer((__gm__ float*)y, 256);
  LocalTensor<float> a = ba.Get<float>(), b = bb.Get<float>(), o = bo.Get<float>();
  LocalTensor<uint8_t> m = bm.Get<uint8_t>();
  const uint32_t n = static_cast<uint32_t>(t.n);
  const DataCopyExtParams row{1, n * (uint32_t)sizeof(float), 0, 0, 0};
  switch (t.scenario) {
    case kComparePadded:       // Compare must span 256 bytes: lanes past the data are discarded later
    case kComparePaddedLeak: {
      DataCopyPad(a, gx, row, DataCopyPadExtParams<float>{});  // n floats, padded to 32 bytes
      Duplicate(b, 0.0f, 128);
      All();
      Compare(m, a, b, CMPMODE::GT, 128);  // 512 bytes: lanes n.. are poison in the mask
      Select(o, m, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 128);  // relu, lanes n.. poison
      All();
      if (t.scenario == kComparePadded) DataCopyPad(gy, o, row);
      else DataCopy(gy, o, 128);  // LEAK:kComparePaddedLeak
      break;
    }
    case kBitmaskPartial:      // inputs written by a vector op: poison starts mid-byte of the mask
    case kBitmaskPartialLeak: {
      DataCopyPad(b, gx, row, DataCopyPadExtParams<float>{});
      All();
      Adds(a, b, 0.0f, n);  // exactly n lanes defined, the rest of a is poison
      Duplicate(b, 0.0f, 128);
      Compare(m, a, b, CMPMODE::GT, 128);
      Select(o, m, a, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 128);
      All();
      if (t.scenario == kBitmaskPartial) DataCopyPad(gy, o, row);
      else DataCopyPad(gy, o, DataCopyExtParams{1, (n + 1) * (uint32_t)sizeof(float), 0, 0, 0});  // LEAK:kBitmaskPartialLeak
      break;
    }
    case kReduceUnused:  // a reduction over poison that nobody reads is harmless
    case kReduceUsed: {
      DataCopyPad(a, gx, row, DataCopyPadExtParams<float>{});
      All();
      ReduceSum(b, a, o, 64);  // 64 lanes, only n written
      ReduceSum(o, a, o, n);   // the one that is used covers the data only
      All();
      if (t.scenario == kReduceUnused) {
        gy.SetValue(0, o.GetValue(0));
      } else {
        gy.SetValue(0, b.GetValue(0));  // LEAK:kReduceUsed
      }
      break;
    }
    case kCastLeak: {  // poison survives a Cast (one lane of half -> one lane of float)
      LocalTensor<half> h = bm.Get<half>();
      Duplicate(h, half(1.0f), 16);
      Cast(a, h, RoundMode::CAST_NONE, 32);  // lanes 16..31 from unwritten halves
      All();
      DataCopy(gy, a, 32);  // LEAK:kCastLeak
      break;
    }
    case kOverwriteCures: {  // poison overwritten with defined data is gone
      Exp(o, a, 64);  // all poison
      Duplicate(b, 1.0f, 64);
      Muls(o, b, 3.0f, 64);
      All();
      DataCopy(gy, o, 64);
      break;
    }
    case kUbToUbCopy: {  // a UB->UB copy carries poison lane by lane
      Duplicate(a, 5.0f, 8);
      DataCopy(b, a, 16);  // lanes 8..15 poison
      All();
      DataCopy(gy, b, 8);
      DataCopy(gy[8], b[8], 8);  // LEAK:kUbToUbCopy
      break;
    }
    case kComparesPadded:      // the scalar form (Compares / CompareScalar) flows poison like Compare
    case kComparesPaddedLeak: {
      DataCopyPad(a, gx, row, DataCopyPadExtParams<float>{});
      All();
      CompareScalar(m, a, 0.0f, CMPMODE::GT, 128);
      Select(o, m, a, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 128);
      All();
      if (t.scenario == kComparesPadded) DataCopyPad(gy, o, row);
      else DataCopy(gy, o, 128);  // LEAK:kComparesPaddedLeak
      break;
    }
    case kL0ComparePadded:     // level-0 Compare and Select over two full repeats
    case kL0ComparePaddedLeak: {
      DataCopyPad(a, gx, row, DataCopyPadExtParams<float>{});
      Duplicate(b, 0.0f, 128);
      All();
      Compare(m, a, b, CMPMODE::GT, 64, 2, BinaryRepeatParams{});
      Select(o, m, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 64, 2, BinaryRepeatParams{});
      All();
      if (t.scenario == kL0ComparePadded) DataCopyPad(gy, o, row);
      else DataCopy(gy, o, 128);  // LEAK:kL0ComparePaddedLeak
      break;
    }
    case kL0ComparesPadded:    // level-0 Compares, level-0 Select with a scalar
    case kL0ComparesPaddedLeak: {
      DataCopyPad(a, gx, row, DataCopyPadExtParams<float>{});
      All();
      Compares(m, a, 0.0f, CMPMODE::GT, 64, 2, UnaryRepeatParams{});
      Select(o, m, a, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64, 2, BinaryRepeatParams{});
      All();
      if (t.scenario == kL0ComparesPadded) DataCopyPad(gy, o, row);
      else DataCopy(gy, o, 128);  // LEAK:kL0ComparesPaddedLeak
      break;
    }
    default:
      break;
  }
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, poison, 3);
}
