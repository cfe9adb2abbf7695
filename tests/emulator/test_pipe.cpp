// Programming model (facts sheet §1): TPipe/TQue (depth 2, double buffering)/TBuf, GetBlockIdx/GetBlockNum,
// SetFlag/WaitFlag pairs, PipeBarrier, GET_TILING_DATA + REGISTER_TILING_DEFAULT, TILING_KEY_IS.
#include "opkit_emu/pybind.h"

using namespace AscendC;

struct PipeTiling {
  uint32_t total;  // elements
  uint32_t tile;   // elements per tile (multiple of 8)
};

class Scaler {
 public:
  __aicore__ void Init(GM_ADDR x, GM_ADDR y, GM_ADDR info, const PipeTiling& t, TPipe* pipe) {
    const uint32_t per = (t.total + GetBlockNum() - 1) / GetBlockNum();
    const uint32_t start = per * GetBlockIdx();
    len_ = start >= t.total ? 0 : (t.total - start < per ? t.total - start : per);
    tile_ = t.tile;
    xg_.SetGlobalBuffer((__gm__ float*)x + start, len_);
    yg_.SetGlobalBuffer((__gm__ float*)y + start, len_);
    info_.SetGlobalBuffer((__gm__ int32_t*)info + 2 * GetBlockIdx(), 2);
    pipe->InitBuffer(in_, 2, tile_ * sizeof(float));
    pipe->InitBuffer(out_, 2, tile_ * sizeof(float));
    pipe->InitBuffer(scratch_, 2 * tile_ * sizeof(float));
  }
  __aicore__ void Process() {
    info_.SetValue(0, static_cast<int32_t>(GetBlockIdx()));
    info_.SetValue(1, static_cast<int32_t>(GetBlockNum()));
    const float offset = TILING_KEY_IS(1) ? 1.0f : 0.0f;
    // two tiles in flight: copy-in of tile i+1 is queued before compute of tile i
    uint32_t tiles = (len_ + tile_ - 1) / tile_;
    for (uint32_t i = 0; i < tiles; ++i) {
      CopyIn(i);
      if (i + 1 < tiles) CopyIn(i + 1), ++i, Compute(i - 1), CopyOut(i - 1);
      Compute(i);
      CopyOut(i);
    }
  }

 private:
  uint32_t n(uint32_t i) const { return len_ - i * tile_ < tile_ ? len_ - i * tile_ : tile_; }
  __aicore__ void CopyIn(uint32_t i) {
    LocalTensor<float> a = in_.AllocTensor<float>();
    DataCopyPad(a, xg_[i * tile_], DataCopyExtParams{1, n(i) * 4, 0, 0, 0}, DataCopyPadExtParams<float>{});
    in_.EnQue(a);
  }
  __aicore__ void Compute(uint32_t i) {
    LocalTensor<float> a = in_.DeQue<float>();
    LocalTensor<float> w = scratch_.GetWithOffset<float>(tile_, tile_ * sizeof(float));  // second half
    LocalTensor<float> c = out_.AllocTensor<float>();
    Muls(w, a, 2.0f, n(i));
    PipeBarrier<PIPE_V>();
    Adds(c, w, TILING_KEY_IS(1) ? 1.0f : 0.0f, n(i));
    out_.EnQue(c);
    in_.FreeTensor(a);
  }
  __aicore__ void CopyOut(uint32_t i) {
    LocalTensor<float> c = out_.DeQue<float>();
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopyPad(yg_[i * tile_], c, DataCopyExtParams{1, n(i) * 4, 0, 0, 0});
    out_.FreeTensor(c);
  }
  TQue<TPosition::VECIN, 2> in_;
  TQue<TPosition::VECOUT, 2> out_;
  TBuf<TPosition::VECCALC> scratch_;
  GlobalTensor<float> xg_, yg_;
  GlobalTensor<int32_t> info_;
  uint32_t len_ = 0, tile_ = 0;
};

extern "C" __global__ __aicore__ void scaler(GM_ADDR x, GM_ADDR y, GM_ADDR info, GM_ADDR workspace, GM_ADDR tiling) {
  (void)workspace;
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  REGISTER_TILING_DEFAULT(PipeTiling);
  GET_TILING_DATA(t, tiling);
  TPipe pipe;
  Scaler op;
  op.Init(x, y, info, t, &pipe);
  op.Process();
}

// Queue helpers: VacantInQue / HasTensorInQue / GetTensorCountInQue and tensor sizes.
extern "C" __global__ __aicore__ void queue_state(GM_ADDR out) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, 100);  // rounded up to 128 bytes
  GlobalTensor<int32_t> g;
  g.SetGlobalBuffer((__gm__ int32_t*)out, 8);
  LocalTensor<half> a = q.AllocTensor<half>();
  g.SetValue(0, a.GetSize());
  g.SetValue(1, q.VacantInQue());
  q.EnQue(a);
  LocalTensor<half> b = q.AllocTensor<half>();
  q.EnQue(b);
  g.SetValue(2, q.GetTensorCountInQue());
  g.SetValue(3, q.VacantInQue());
  a = q.DeQue<half>();
  b = q.DeQue<half>();
  g.SetValue(4, q.HasTensorInQue());
  g.SetValue(5, a[10].GetSize());
  g.SetValue(6, a.ReinterpretCast<float>().GetSize());
  q.FreeTensor(a);
  q.FreeTensor(b);
  g.SetValue(7, static_cast<int32_t>(TOTAL_UB_SIZE / 1024));
}

// InitBuffer's queue form on a TBuf (public kernels write it: CANN's TBuf is a TQueBind): num 1 is the one
// buffer of len bytes (rounded to 32); y = 3x through it.
extern "C" __global__ __aicore__ void tbuf_queue_form(GM_ADDR x, GM_ADDR y, GM_ADDR num) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  GlobalTensor<uint32_t> n;
  n.SetGlobalBuffer((__gm__ uint32_t*)num, 1);
  pipe.InitBuffer(buf, static_cast<uint8_t>(n.GetValue(0)), 100);
  LocalTensor<float> t = buf.Get<float>();
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 32);
  yg.SetGlobalBuffer((__gm__ float*)y, 33);
  DataCopy(t, xg, 32);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  Muls(t, t, 3.0f, 32);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(yg, t, 32);
  yg.SetValue(32, static_cast<float>(t.GetSize()));
}

// TQueBind's user-position EnQue / DeQue (ops-nn experimental/activation/relu): one VECIN->VECOUT buffer that data
// enters from GM, is computed in place, and leaves to GM; y = x + 1. mode 1: DeQue names another pair than EnQue.
extern "C" __global__ __aicore__ void user_pos_queue(GM_ADDR x, GM_ADDR y, GM_ADDR mode) {
  TPipe pipe;
  TQueBind<TPosition::VECIN, TPosition::VECOUT, 1> q;
  pipe.InitBuffer(q, 1, 32 * sizeof(float));
  GlobalTensor<float> xg, yg;
  GlobalTensor<uint32_t> m;
  xg.SetGlobalBuffer((__gm__ float*)x, 32);
  yg.SetGlobalBuffer((__gm__ float*)y, 32);
  m.SetGlobalBuffer((__gm__ uint32_t*)mode, 1);
  LocalTensor<float> t = q.AllocTensor<float>();
  DataCopy(t, xg, 32);
  q.EnQue<TPosition::GM, TPosition::VECIN, float>(t);
  LocalTensor<float> u = m.GetValue(0) == 1 ? q.DeQue<TPosition::VECOUT, TPosition::GM, float>()
                                            : q.DeQue<TPosition::GM, TPosition::VECIN, float>();  // PIPE:userdeque
  Adds(u, u, 1.0f, 32);
  q.EnQue<TPosition::VECOUT, TPosition::GM, float>(u);
  LocalTensor<float> v = q.DeQue<TPosition::VECOUT, TPosition::GM, float>();
  DataCopy(yg, v, 32);
  q.FreeTensor(v);
  q.FreeAllEvent();  // kernel_tpipe.h:86: legal at the end of a queue's life
}

// TPipe::Init (CANN's ResetPool): the buffers planned after it start at UB offset 0 again. out: [0] 1 when b sits
// where a sat, [1] b's data survives the re-plan (x copied through it).
extern "C" __global__ __aicore__ void pipe_init(GM_ADDR x, GM_ADDR out) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> a, b;
  pipe.InitBuffer(a, 1024);
  const float* aAddr = a.Get<float>().GetPhyAddr();
  pipe.Init();
  pipe.InitBuffer(b, 256);
  LocalTensor<float> t = b.Get<float>();
  GlobalTensor<float> xg, og;
  xg.SetGlobalBuffer((__gm__ float*)x, 64);
  og.SetGlobalBuffer((__gm__ float*)out, 64);
  DataCopy(t, xg, 64);
  PipeBarrier<PIPE_ALL>();
  t.SetValue(0, t.GetPhyAddr() == aAddr ? 1.0f : 0.0f);
  PipeBarrier<PIPE_ALL>();
  DataCopy(og, t, 64);
}

// The untyped TQue::DeQue() (ops-nn rms_norm calls it for the wait alone): the tensor allocated before stays usable
// after it, the handle is that tensor's address. mode[0] 1: a second DeQue() of the now empty queue.
// y: [0, 32) x * 2, [32] 1 when the handle is the tensor's address.
extern "C" __global__ __aicore__ void untyped_deque(GM_ADDR x, GM_ADDR y, GM_ADDR mode) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> que;
  pipe.InitBuffer(que, 1, 32 * sizeof(float));
  GlobalTensor<float> xg, yg;
  xg.SetGlobalBuffer((__gm__ float*)x, 32);
  yg.SetGlobalBuffer((__gm__ float*)y, 40);
  LocalTensor<float> t = que.AllocTensor<float>();
  DataCopy(t, xg, 32);
  que.EnQue(t);
  TBufHandle h = que.DeQue();
  if (((__gm__ uint32_t*)mode)[0] == 1) que.DeQue();
  Muls(t, t, 2.0f, 32);
  PipeBarrier<PIPE_ALL>();
  DataCopy(yg, t, 32);
  PipeBarrier<PIPE_ALL>();
  yg.SetValue(32, reinterpret_cast<uint8_t*>(t.GetPhyAddr()) == h ? 1.0f : 0.0f);
  que.FreeTensor(t);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  OPKIT_EMU_PY_KERNEL(m, untyped_deque, 3);
  OPKIT_EMU_PY_KERNEL(m, user_pos_queue, 3);
  OPKIT_EMU_PY_KERNEL(m, pipe_init, 2);
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, tbuf_queue_form, 3);
  OPKIT_EMU_PY_KERNEL(m, scaler, 5);
  OPKIT_EMU_PY_KERNEL(m, queue_state, 1);
}
