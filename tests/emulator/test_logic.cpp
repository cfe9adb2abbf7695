// Bitwise ops (And/Or/Not/ShiftLeft/ShiftRight), compares against a scalar (Compares/CompareScalar) and
// level-0 Compare, Select in all modes (count and level-0), Gather / GatherMask, Duplicate(dst, src),
// TQueSync, TBuf's queue members and the output-parameter AllocTensor/DeQue. Doc pages are cited in the
// headers (bitwise.h, select.h, gather.h) and in test_logic.py, which holds the numpy references.
#include "opkit_emu/pybind.h"

using namespace AscendC;

enum LogicOp : int32_t {
  kAnd, kOr, kNot, kShl, kShr, kShrRound, kAndL0, kNotL0, kShlL0, kShrL0,           // integer
  kCmps, kCmpScalar, kCmpsL0, kCmpL0, kSel, kSelL0, kSelScalarL0, kGather, kGatherL0, // float / half
  kGatherMaskBuiltin, kGatherMaskUser, kDupTensor, kQueues
};

struct LogicTiling {
  int32_t op, mode;  // mode: CMPMODE, SELMODE, or GatherMask pattern
  uint64_t lo, hi;   // level-0 mask (continuous when hi == ~0)
  int32_t repeat, dblk, s0blk, s1blk, drep, s0rep, s1rep;
  int32_t shift, reduceMode;
  float scalar;
  uint32_t n, count;  // elements per GM buffer, count of count forms
};

// a, b: n elements of T; c: n uint32 words (masks, patterns, offsets); out: n elements of T;
// info: 4 int64 (GatherMask's rsvdCnt, queue checks).
template <class T>
__aicore__ void logic_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR out, GM_ADDR info, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(LogicTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> ba, bb, bc, bo;
  TQue<TPosition::VECIN, 1> q;
  pipe.InitBuffer(ba, t.n * sizeof(T));
  pipe.InitBuffer(bb, t.n * sizeof(T));
  pipe.InitBuffer(bc, t.n * 4);
  pipe.InitBuffer(bo, t.n * sizeof(T));
  pipe.InitBuffer(q, 1, 256);
  GlobalTensor<T> ga, gb, go;
  GlobalTensor<uint32_t> gc;
  GlobalTensor<int64_t> gi;
  ga.SetGlobalBuffer((__gm__ T*)a, t.n);
  gb.SetGlobalBuffer((__gm__ T*)b, t.n);
  gc.SetGlobalBuffer((__gm__ uint32_t*)c, t.n);
  go.SetGlobalBuffer((__gm__ T*)out, t.n);
  gi.SetGlobalBuffer((__gm__ int64_t*)info, 4);
  LocalTensor<T> x = ba.Get<T>(), y = bb.Get<T>(), z = bo.Get<T>();
  LocalTensor<uint32_t> w = bc.Get<uint32_t>();
  DataCopy(x, ga, t.n);
  DataCopy(y, gb, t.n);
  DataCopy(w, gc, t.n);
  DataCopy(z, go, t.n);
  PipeBarrier<PIPE_ALL>();  // MTE2 -> V
  LocalTensor<uint8_t> wm = w.template ReinterpretCast<uint8_t>();
  LocalTensor<uint8_t> zm = z.template ReinterpretCast<uint8_t>();
  const BinaryRepeatParams bp(t.dblk, t.s0blk, t.s1blk, t.drep, t.s0rep, t.s1rep);
  const UnaryRepeatParams up(t.dblk, t.s0blk, t.drep, t.s0rep);
  const uint64_t bits[2] = {t.lo, t.hi};
  const uint8_t rep = static_cast<uint8_t>(t.repeat);
  const T s = static_cast<T>(t.scalar);
  const int32_t cnt = static_cast<int32_t>(t.count);
  constexpr bool integer = std::is_integral<T>::value;
  constexpr bool logic = opkit_emu::is_logic_t<T>;
  constexpr bool shift = opkit_emu::is_shift_t<T>;
  constexpr bool fp = opkit_emu::is_sel_t<T>;
  switch (t.op) {
    case kAnd: if constexpr (logic) And(z, x, y, cnt); break;
    case kOr: if constexpr (logic) Or(z, x, y, cnt); break;
    case kNot: if constexpr (logic) Not(z, x, cnt); break;
    case kShl: if constexpr (shift) ShiftLeft(z, x, static_cast<T>(t.shift), cnt); break;
    case kShr: if constexpr (shift) ShiftRight(z, x, static_cast<T>(t.shift), cnt); break;
    case kShrRound: if constexpr (shift) ShiftRight(z, x, static_cast<T>(t.shift), bits, rep, up, true); break;
    case kAndL0: if constexpr (logic) And(z, x, y, bits, rep, bp); break;
    case kNotL0: if constexpr (logic) Not(z, x, bits, rep, up); break;
    case kShlL0: if constexpr (shift) ShiftLeft(z, x, static_cast<T>(t.shift), bits, rep, up); break;
    case kShrL0: if constexpr (shift) ShiftRight(z, x, static_cast<T>(t.shift), bits, rep, up); break;
    case kCmps: if constexpr (!integer || std::is_same<T, int32_t>::value) Compares(zm, x, s, static_cast<CMPMODE>(t.mode), t.count); break;
    case kCmpScalar: if constexpr (fp) CompareScalar(zm, x, s, static_cast<CMPMODE>(t.mode), t.count); break;
    case kCmpsL0: if constexpr (fp) Compares(zm, x, s, static_cast<CMPMODE>(t.mode), bits, rep, up); break;
    case kCmpL0: if constexpr (fp) Compare(zm, x, y, static_cast<CMPMODE>(t.mode), bits, rep, bp); break;
    case kSel:
      if constexpr (fp) {
        if (t.mode == static_cast<int32_t>(SELMODE::VSEL_TENSOR_SCALAR_MODE))
          Select(z, wm, x, s, SELMODE::VSEL_TENSOR_SCALAR_MODE, t.count);
        else
          Select(z, wm, x, y, static_cast<SELMODE>(t.mode), t.count);
      }
      break;
    case kSelL0: if constexpr (fp) Select(z, wm, x, y, static_cast<SELMODE>(t.mode), bits, rep, bp); break;
    case kSelScalarL0: if constexpr (fp) Select(z, wm, x, s, SELMODE::VSEL_TENSOR_SCALAR_MODE, bits, rep, bp); break;
    case kGather: Gather(z, x, w, 0, t.count); break;
    case kGatherL0: Gather(z, x, w, 0, bits, rep, static_cast<uint16_t>(t.drep)); break;
    case kGatherMaskBuiltin:
    case kGatherMaskUser: {
      uint64_t kept = 0;
      GatherMaskParams gp(t.s0blk, t.repeat, t.s0rep, t.s1rep);
      if (t.op == kGatherMaskBuiltin) {
        GatherMask(z, x, static_cast<uint8_t>(t.mode), t.reduceMode != 0, static_cast<uint32_t>(t.lo), gp, kept);
      } else {
        using P = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
        GatherMask(z, x, w.template ReinterpretCast<P>(), t.reduceMode != 0, static_cast<uint32_t>(t.lo), gp, kept);
      }
      gi.SetValue(0, static_cast<int64_t>(kept));
      break;
    }
    case kDupTensor: Duplicate(z, x[32 / sizeof(T)], cnt); break;  // src must start 32-byte aligned
    case kQueues: {
      // TQueSync pairing, TBuf's inherited queue members, output-parameter AllocTensor / DeQue.
      TQueSync<PIPE_MTE2, PIPE_V> sync;
      sync.SetFlag(0);
      sync.WaitFlag(0);
      LocalTensor<T> tb = bo.AllocTensor<T>();
      bo.EnQue(tb);
      tb = bo.DeQue<T>();
      bo.FreeTensor(tb);
      LocalTensor<T> qt;
      q.AllocTensor(qt);
      Duplicate(qt, s, static_cast<int32_t>(256 / sizeof(T)));
      q.EnQue(qt);
      LocalTensor<T> got;
      q.DeQue(got);
      gi.SetValue(1, static_cast<int64_t>(got.GetSize()));
      gi.SetValue(2, static_cast<int64_t>(tb.GetSize()));
      q.FreeTensor(got);
      break;
    }
    default: break;
  }
  PipeBarrier<PIPE_ALL>();  // V, S -> MTE3
  DataCopy(go, z, t.n);
}

#define KERNEL(NAME, T) \
  extern "C" __global__ __aicore__ void NAME(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR o, GM_ADDR i, GM_ADDR t) { logic_kernel<T>(a, b, c, o, i, t); }
KERNEL(logic_f32, float)
KERNEL(logic_f16, half)
KERNEL(logic_i32, int32_t)
KERNEL(logic_i16, int16_t)
KERNEL(logic_u16, uint16_t)
KERNEL(logic_u32, uint32_t)

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, logic_f32, 6);
  OPKIT_EMU_PY_KERNEL(m, logic_f16, 6);
  OPKIT_EMU_PY_KERNEL(m, logic_i32, 6);
  OPKIT_EMU_PY_KERNEL(m, logic_i16, 6);
  OPKIT_EMU_PY_KERNEL(m, logic_u16, 6);
  OPKIT_EMU_PY_KERNEL(m, logic_u32, 6);
}
