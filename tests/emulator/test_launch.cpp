// A LayerNorm-style kernel (copy-in, cast to float, reduce, normalise, cast back, copy-out) used as
// a kernel *module* (the launch ABI of python/opkit/include/opkit/launch_abi.h) by test_launch.py and
// by benchmarks/bench_emulator.py. Compiled per dtype with -DDTYPE_X=float|half|bfloat16_t.
#include "kernel_operator.h"

using namespace AscendC;

struct EmuLnTiling {
  uint32_t rows;
  uint32_t cols;
  uint32_t rowsPerBlock;
  float eps;
};

template <class T>
class EmuLayerNorm {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR b, GM_ADDR y, const EmuLnTiling& t, TPipe* pipe) {
    t_ = t;
    const uint32_t start = GetBlockIdx() * t.rowsPerBlock;
    rows_ = start >= t.rows ? 0 : (t.rows - start < t.rowsPerBlock ? t.rows - start : t.rowsPerBlock);
    xg_.SetGlobalBuffer((__gm__ T*)x + (uint64_t)start * t.cols, (uint64_t)rows_ * t.cols);
    yg_.SetGlobalBuffer((__gm__ T*)y + (uint64_t)start * t.cols, (uint64_t)rows_ * t.cols);
    wg_.SetGlobalBuffer((__gm__ T*)w, t.cols);
    bg_.SetGlobalBuffer((__gm__ T*)b, t.cols);
    pipe->InitBuffer(inQ_, 2, t.cols * sizeof(T));
    pipe->InitBuffer(outQ_, 2, t.cols * sizeof(T));
    pipe->InitBuffer(xf_, t.cols * sizeof(float));
    pipe->InitBuffer(sq_, t.cols * sizeof(float));
    pipe->InitBuffer(wf_, t.cols * sizeof(float));
    pipe->InitBuffer(bf_, t.cols * sizeof(float));
    pipe->InitBuffer(red_, 64);
  }
  __aicore__ inline void Process() {
    const uint32_t C = t_.cols;
    LoadParam(wg_, wf_.Get<float>());
    LoadParam(bg_, bf_.Get<float>());
    LocalTensor<float> xf = xf_.Get<float>(), sq = sq_.Get<float>(), wf = wf_.Get<float>(), bf = bf_.Get<float>();
    LocalTensor<float> red = red_.Get<float>();
    for (uint32_t r = 0; r < rows_; ++r) {
      LocalTensor<T> a = inQ_.AllocTensor<T>();
      CopyIn(a, xg_[(uint64_t)r * C]);
      inQ_.EnQue(a);
      a = inQ_.DeQue<T>();
      ToFloat(xf, a);
      inQ_.FreeTensor(a);
      ReduceSum(red, xf, red, C);
      SyncVS();
      const float mean = red.GetValue(0) / C;
      Adds(xf, xf, -mean, C);
      Mul(sq, xf, xf, C);
      ReduceSum(red, sq, red, C);
      SyncVS();
      const float rstd = 1.0f / std::sqrt(red.GetValue(0) / C + t_.eps);
      Muls(xf, xf, rstd, C);
      Mul(xf, xf, wf, C);
      Add(xf, xf, bf, C);
      LocalTensor<T> o = outQ_.AllocTensor<T>();
      if constexpr (std::is_same<T, float>::value) Adds(o, xf, 0.0f, C);
      else Cast(o, xf, RoundMode::CAST_RINT, C);
      outQ_.EnQue(o);
      o = outQ_.DeQue<T>();
#if __NPU_ARCH__ == 2002  // 310P has no DataCopyPad: rows must be 32-byte multiples
      DataCopy(yg_[(uint64_t)r * C], o, C);
#else
      DataCopyPad(yg_[(uint64_t)r * C], o, Row());
#endif
      outQ_.FreeTensor(o);
    }
  }

 private:
  // The scalar unit reads a vector result: wait for the vector pipe (V -> S).
  __aicore__ inline void SyncVS() {
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
  }
  DataCopyExtParams Row() const { return DataCopyExtParams{1, (uint32_t)(t_.cols * sizeof(T)), 0, 0, 0}; }
  __aicore__ inline void ToFloat(const LocalTensor<float>& dst, const LocalTensor<T>& src) {
    if constexpr (std::is_same<T, float>::value) Adds(dst, src, 0.0f, t_.cols);
    else Cast(dst, src, RoundMode::CAST_NONE, t_.cols);
  }
  __aicore__ inline void CopyIn(const LocalTensor<T>& a, const GlobalTensor<T>& g) {
#if __NPU_ARCH__ == 2002
    DataCopy(a, g, t_.cols);
#else
    DataCopyPad(a, g, Row(), DataCopyPadExtParams<T>{});
#endif
  }
  __aicore__ inline void LoadParam(GlobalTensor<T>& g, const LocalTensor<float>& dst) {
    LocalTensor<T> a = inQ_.AllocTensor<T>();
    CopyIn(a, g);
    inQ_.EnQue(a);
    a = inQ_.DeQue<T>();
    ToFloat(dst, a);
    inQ_.FreeTensor(a);
  }
  EmuLnTiling t_;
  uint32_t rows_ = 0;
  GlobalTensor<T> xg_, yg_, wg_, bg_;
  TQue<TPosition::VECIN, 1> inQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> xf_, sq_, wf_, bf_, red_;
};

extern "C" __global__ __aicore__ void emu_layer_norm(GM_ADDR x, GM_ADDR w, GM_ADDR b, GM_ADDR y, GM_ADDR workspace,
                                                     GM_ADDR tiling) {
  (void)workspace;
  GET_TILING_DATA_WITH_STRUCT(EmuLnTiling, td, tiling);
  TPipe pipe;
  EmuLayerNorm<DTYPE_X> k;
  k.Init(x, w, b, y, td, &pipe);
  k.Process();
}
