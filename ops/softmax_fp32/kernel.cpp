// Rendered by opkit from templates/families/softmax/kernel.cpp.j2 for SoftmaxFP32 (log=false, backward=false).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// SoftmaxFP32: y = exp(x - max(x)) / sum(exp(x - max(x))) over the last dim, fp16/bf16/fp32 I/O,
// FP32 compute. Subtracting the row max first keeps exp() in (0, 1], so nothing overflows; the sum
// is ReduceSum's FP32 sum (tree inside a repeat, repeats in order), tiles of long rows added in order.
// Rows holding +inf, or only -inf, or nan give nan rows, as PyTorch does.
#include "kernel_operator.h"
#include "tiling.h"
#include "opkit/kernel_util.h"

using namespace AscendC;

#ifdef OPKIT_NAIVE_COMPUTE
using ComputeT = DTYPE_X;  // the "naive AMP" variant: compute (reductions included) in the I/O dtype
#else
using ComputeT = float;
#endif

namespace softmax_fp32_impl {

template <typename T, typename CT>
class Kernel {
  static constexpr bool kCast = !opkit::SameType<T, CT>::value;  // I/O dtype differs from compute dtype
  static constexpr uint32_t kBlockElems = 32 / sizeof(T);

 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SoftmaxFP32TilingData& td) {
    td_ = td;
    const opkit::BlockRows mine = opkit::RowsOfBlock(td.rowsPerBlock, td.remainderRows);
    myRows_ = mine.count;
    firstRow_ = mine.first;
    const uint64_t total = static_cast<uint64_t>(td.rows) * td.cols;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), total);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), total);
    if (myRows_ == 0 || td.cols == 0) return;
    const uint32_t len = td.tileCols == 0 ? td.tileRows * td.stride : td.tileCols;
    pipe_.InitBuffer(inQ_, 2, len * sizeof(T));
    pipe_.InitBuffer(outQ_, 2, len * sizeof(T));
    if constexpr (kCast) pipe_.InitBuffer(xcBuf_, len * sizeof(CT));
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
  __aicore__ inline LocalTensor<T> LoadRows(uint64_t gmOff, uint32_t rows, uint32_t cols) {
    LocalTensor<T> dst = inQ_.AllocTensor<T>();
    opkit::CopyRowsPadded(dst, xGm_[gmOff], rows, cols);
    inQ_.EnQue(dst);
    return inQ_.DeQue<T>();
  }

  // UB -> GM: `rows` rows of `cols` elements (32 B row pitch in UB).
  __aicore__ inline void StoreRows(LocalTensor<T>& yout, uint64_t gmOff, uint32_t rows, uint32_t cols) {
    outQ_.EnQue(yout);
    yout = outQ_.DeQue<T>();
    DataCopyExtParams p{static_cast<uint16_t>(rows), static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
    DataCopyPad(yGm_[gmOff], yout, p);
    outQ_.FreeTensor(yout);
  }

  __aicore__ inline LocalTensor<CT> ToCompute(const LocalTensor<T>& xin, uint32_t count) {
    if constexpr (kCast) {
      LocalTensor<CT> xc = xcBuf_.Get<CT>();
      Cast(xc, xin, RoundMode::CAST_NONE, count);  // half/bf16 -> float: CAST_NONE only (A2)
      return xc;
    } else {
      return xin;
    }
  }

  __aicore__ inline float MaxOf(const LocalTensor<CT>& src, uint32_t n) {
    LocalTensor<CT> red = redBuf_.Get<CT>();
    ReduceMax(red, src, tmpBuf_.Get<CT>(), static_cast<int32_t>(n), false);
    opkit::VectorToScalarSync();
    return static_cast<float>(red.GetValue(0));
  }

  __aicore__ inline float SumOf(const LocalTensor<CT>& src, uint32_t n) {
    LocalTensor<CT> red = redBuf_.Get<CT>();
    ReduceSum(red, src, tmpBuf_.Get<CT>(), static_cast<int32_t>(n));
    opkit::VectorToScalarSync();
    return static_cast<float>(red.GetValue(0));
  }

  // e = exp(x - m) in place; returns sum(e).
  __aicore__ inline float ExpShifted(const LocalTensor<CT>& xr, float m, uint32_t n) {
    Adds(xr, xr, static_cast<CT>(-m), static_cast<int32_t>(n));
    Exp(xr, xr, static_cast<int32_t>(n));
    return SumOf(xr, n);
  }

  // dst = e * scale (cast to the I/O dtype when they differ); e is overwritten.
  __aicore__ inline void Scale(const LocalTensor<T>& dst, const LocalTensor<CT>& e, float scale, uint32_t n) {
    if constexpr (kCast) {
      Muls(e, e, static_cast<CT>(scale), static_cast<int32_t>(n));
      Cast(dst, e, RoundMode::CAST_RINT, n);  // float -> half/bf16: RINT is valid for both on A2
    } else {
      Muls(dst, e, static_cast<CT>(scale), static_cast<int32_t>(n));
    }
  }

  // n whole rows starting at row0, all in UB at once.
  __aicore__ inline void SinglePassTile(uint64_t row0, uint32_t n) {
    const uint32_t cols = td_.cols, pitch = td_.stride;
    LocalTensor<T> xin = LoadRows(row0 * cols, n, cols);
    LocalTensor<CT> xc = ToCompute(xin, n * pitch);
    LocalTensor<T> yout = outQ_.AllocTensor<T>();
    for (uint32_t r = 0; r < n; ++r) {
      LocalTensor<CT> xr = xc[r * pitch];
      const float s = ExpShifted(xr, MaxOf(xr, cols), cols);
      Scale(yout[r * pitch], xr, 1.0f / s, cols);
    }
    inQ_.FreeTensor(xin);
    StoreRows(yout, row0 * cols, n, cols);
  }

  // A row longer than UB: three sweeps over column tiles (max, sum of exp, normalise).
  __aicore__ inline void MultiPassRow(uint64_t row) {
    const uint32_t cols = td_.cols, tile = td_.tileCols;
    const uint64_t base = row * cols;
    float m = 0.0f;
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> xin = LoadRows(base + c0, 1, n);
      const float tm = MaxOf(ToCompute(xin, n), n);
      if (c0 == 0 || tm > m || tm != tm) m = tm;  // a nan max stays nan
      inQ_.FreeTensor(xin);
    }
    float s = 0.0f;
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> xin = LoadRows(base + c0, 1, n);
      s += ExpShifted(ToCompute(xin, n), m, n);
      inQ_.FreeTensor(xin);
    }
    const float scale = 1.0f / s;
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> xin = LoadRows(base + c0, 1, n);
      LocalTensor<CT> xc = ToCompute(xin, n);
      Adds(xc, xc, static_cast<CT>(-m), static_cast<int32_t>(n));
      Exp(xc, xc, static_cast<int32_t>(n));
      LocalTensor<T> yout = outQ_.AllocTensor<T>();
      Scale(yout, xc, scale, n);
      inQ_.FreeTensor(xin);
      StoreRows(yout, base + c0, 1, n);
    }
  }

  SoftmaxFP32TilingData td_;
  uint32_t myRows_ = 0;
  uint64_t firstRow_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> xcBuf_, redBuf_, tmpBuf_;
  GlobalTensor<T> xGm_, yGm_;
};

}  // namespace softmax_fp32_impl

extern "C" __global__ __aicore__ void softmax_fp32(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(SoftmaxFP32TilingData, td, tiling);
  softmax_fp32_impl::Kernel<DTYPE_X, ComputeT> op;
  op.Init(x, y, td);
  op.Process();
}
