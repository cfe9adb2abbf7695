// Rendered by opkit from templates/families/softmax/backward/kernel.cpp.j2 for SoftmaxFP32Backward (log=false, backward=true).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// SoftmaxFP32Backward: dx = y * (dy - sum(dy * y)) over the last dim (y = softmax output),
// fp16/bf16/fp32 I/O, FP32 compute; the sum is ReduceSum's FP32 sum, tiles of long rows added in order.
#include "kernel_operator.h"
#include "tiling.h"
#include "opkit/kernel_util.h"

using namespace AscendC;

#ifdef OPKIT_NAIVE_COMPUTE
using ComputeT = DTYPE_Y;  // the "naive AMP" variant: compute (reductions included) in the I/O dtype
#else
using ComputeT = float;
#endif

namespace softmax_fp32_backward_impl {

template <typename T, typename CT>
class Kernel {
  static constexpr bool kCast = !opkit::SameType<T, CT>::value;  // I/O dtype differs from compute dtype
  static constexpr uint32_t kBlockElems = 32 / sizeof(T);

 public:
  __aicore__ inline void Init(GM_ADDR y, GM_ADDR dy, GM_ADDR dx, const SoftmaxFP32BackwardTilingData& td) {
    td_ = td;
    const opkit::BlockRows mine = opkit::RowsOfBlock(td.rowsPerBlock, td.remainderRows);
    myRows_ = mine.count;
    firstRow_ = mine.first;
    const uint64_t total = static_cast<uint64_t>(td.rows) * td.cols;
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), total);
    dyGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(dy), total);
    dxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(dx), total);
    if (myRows_ == 0 || td.cols == 0) return;
    const uint32_t len = td.tileCols == 0 ? td.tileRows * td.stride : td.tileCols;
    pipe_.InitBuffer(yQ_, 2, len * sizeof(T));
    pipe_.InitBuffer(dyQ_, 2, len * sizeof(T));
    pipe_.InitBuffer(outQ_, 2, len * sizeof(T));
    if constexpr (kCast) {
      pipe_.InitBuffer(ycBuf_, len * sizeof(CT));
      pipe_.InitBuffer(dycBuf_, len * sizeof(CT));
    }
    pipe_.InitBuffer(pBuf_, len * sizeof(CT));
    pipe_.InitBuffer(redBuf_, 32);
    pipe_.InitBuffer(tmpBuf_, td.tmpElems * sizeof(float));
  }

  __aicore__ inline void Process() {
    if (myRows_ == 0 || td_.cols == 0) return;
    if (td_.tileCols == 0) {
      for (uint32_t done = 0; done < myRows_; done += td_.tileRows) {
        const uint32_t n = myRows_ - done < td_.tileRows ? myRows_ - done : td_.tileRows;
        SinglePassTile(firstRow_ + done, n);
      }
    } else {
      for (uint32_t r = 0; r < myRows_; ++r) MultiPassRow(firstRow_ + r);
    }
  }

 private:
  // GM -> UB of `rows` rows of `cols` elements, each row padded with zeros to a 32 B pitch.
  __aicore__ inline LocalTensor<T> LoadRows(TQue<TPosition::VECIN, 1>& q, const GlobalTensor<T>& src, uint32_t rows,
                                            uint32_t cols) {
    LocalTensor<T> dst = q.AllocTensor<T>();
    opkit::CopyRowsPadded(dst, src, rows, cols);
    q.EnQue(dst);
    return q.DeQue<T>();
  }

  // UB -> GM: `rows` rows of `cols` elements (32 B row pitch in UB).
  __aicore__ inline void StoreRows(LocalTensor<T>& out, uint64_t gmOff, uint32_t rows, uint32_t cols) {
    outQ_.EnQue(out);
    out = outQ_.DeQue<T>();
    DataCopyExtParams p{static_cast<uint16_t>(rows), static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
    DataCopyPad(dxGm_[gmOff], out, p);
    outQ_.FreeTensor(out);
  }

  __aicore__ inline LocalTensor<CT> ToCompute(TBuf<TPosition::VECCALC>& buf, const LocalTensor<T>& in,
                                              uint32_t count) {
    if constexpr (kCast) {
      LocalTensor<CT> c = buf.Get<CT>();
      Cast(c, in, RoundMode::CAST_NONE, count);  // half/bf16 -> float: CAST_NONE only (A2)
      return c;
    } else {
      return in;
    }
  }

  // sum(dy * y) over n elements.
  __aicore__ inline float DotOf(const LocalTensor<CT>& dyr, const LocalTensor<CT>& yr, uint32_t n) {
    LocalTensor<CT> p = pBuf_.Get<CT>();
    LocalTensor<CT> red = redBuf_.Get<CT>();
    Mul(p, dyr, yr, static_cast<int32_t>(n));
    ReduceSum(red, p, tmpBuf_.Get<CT>(), static_cast<int32_t>(n));
    opkit::VectorToScalarSync();
    return static_cast<float>(red.GetValue(0));
  }

  // dst = (dy - g) * y (cast to the I/O dtype when they differ); dy is overwritten.
  __aicore__ inline void Grad(const LocalTensor<T>& dst, const LocalTensor<CT>& dyr, const LocalTensor<CT>& yr,
                              float g, uint32_t n) {
    Adds(dyr, dyr, static_cast<CT>(-g), static_cast<int32_t>(n));
    if constexpr (kCast) {
      Mul(dyr, dyr, yr, static_cast<int32_t>(n));
      Cast(dst, dyr, RoundMode::CAST_RINT, n);  // float -> half/bf16: RINT is valid for both on A2
    } else {
      Mul(dst, dyr, yr, static_cast<int32_t>(n));
    }
  }

  __aicore__ inline void SinglePassTile(uint64_t row0, uint32_t n) {
    const uint32_t cols = td_.cols, pitch = td_.stride;
    LocalTensor<T> yin = LoadRows(yQ_, yGm_[row0 * cols], n, cols);
    LocalTensor<T> dyin = LoadRows(dyQ_, dyGm_[row0 * cols], n, cols);
    LocalTensor<CT> yc = ToCompute(ycBuf_, yin, n * pitch);
    LocalTensor<CT> dyc = ToCompute(dycBuf_, dyin, n * pitch);
    LocalTensor<T> out = outQ_.AllocTensor<T>();
    for (uint32_t r = 0; r < n; ++r) {
      const float g = DotOf(dyc[r * pitch], yc[r * pitch], cols);
      Grad(out[r * pitch], dyc[r * pitch], yc[r * pitch], g, cols);
    }
    yQ_.FreeTensor(yin);
    dyQ_.FreeTensor(dyin);
    StoreRows(out, row0 * cols, n, cols);
  }

  // A row longer than UB: two sweeps over column tiles (sum of dy*y, write).
  __aicore__ inline void MultiPassRow(uint64_t row) {
    const uint32_t cols = td_.cols, tile = td_.tileCols;
    const uint64_t base = row * cols;
    float g = 0.0f;
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> yin = LoadRows(yQ_, yGm_[base + c0], 1, n);
      LocalTensor<T> dyin = LoadRows(dyQ_, dyGm_[base + c0], 1, n);
      g += DotOf(ToCompute(dycBuf_, dyin, n), ToCompute(ycBuf_, yin, n), n);
      yQ_.FreeTensor(yin);
      dyQ_.FreeTensor(dyin);
    }
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> yin = LoadRows(yQ_, yGm_[base + c0], 1, n);
      LocalTensor<T> dyin = LoadRows(dyQ_, dyGm_[base + c0], 1, n);
      LocalTensor<T> out = outQ_.AllocTensor<T>();
      Grad(out, ToCompute(dycBuf_, dyin, n), ToCompute(ycBuf_, yin, n), g, n);
      yQ_.FreeTensor(yin);
      dyQ_.FreeTensor(dyin);
      StoreRows(out, base + c0, 1, n);
    }
  }

  SoftmaxFP32BackwardTilingData td_;
  uint32_t myRows_ = 0;
  uint64_t firstRow_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> yQ_, dyQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> ycBuf_, dycBuf_, pBuf_, redBuf_, tmpBuf_;
  GlobalTensor<T> yGm_, dyGm_, dxGm_;
};

}  // namespace softmax_fp32_backward_impl

extern "C" __global__ __aicore__ void softmax_fp32_backward(GM_ADDR y, GM_ADDR dy, GM_ADDR dx, GM_ADDR workspace,
                                                            GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(SoftmaxFP32BackwardTilingData, td, tiling);
  softmax_fp32_backward_impl::Kernel<DTYPE_Y, ComputeT> op;
  op.Init(y, dy, dx, td);
  op.Process();
}
