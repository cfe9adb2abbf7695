// Rendered by opkit from templates/families/fused/kernel.cpp.j2 for AddLayerNormFP32 (norm=layer).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// AddLayerNormFP32: sum = x + residual; out = (sum - mean) / sqrt(var + eps) * weight + bias over the
// last dim. fp16/bf16/fp32 in and out; the sum, its mean and variance and the normalisation are computed
// in ComputeT (FP32), and the norm reads the FP32 sum (not the sum rounded to the I/O dtype).
//
// Numerics (why not E[x^2] - E[x]^2): rows like N(0,1)+200 lose every significant bit of the
// variance to cancellation. Instead, per row:
//   m0 = sum(x) / n                       a first estimate of the mean (x: the residual sum)
//   d  = x - m0                           exact-ish (Sterbenz) when x is close to m0
//   c  = sum(d) / n                       the estimate's residual error
//   var = sum(d^2) / n - c^2              corrected two-pass variance: c is tiny, nothing cancels
//   y  = (d - c) * rstd * weight + bias
// which stays within a few FP32 ulps of an fp64 golden for offsets and scales far beyond fp16.
#include "kernel_operator.h"
#include "tiling.h"
#include "opkit/kernel_util.h"

using namespace AscendC;

#ifdef OPKIT_NAIVE_COMPUTE
using ComputeT = DTYPE_X;  // the "naive AMP" variant: compute (reductions included) in the I/O dtype
#else
using ComputeT = float;
#endif

namespace add_layer_norm_fp32_impl {

template <typename T, typename CT>
class Kernel {
  static constexpr bool kCast = !opkit::SameType<T, CT>::value;   // I/O dtype differs from compute dtype
  static constexpr uint32_t kBlockElems = 32 / sizeof(T);

 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR residual, GM_ADDR weight, GM_ADDR bias, GM_ADDR sum, GM_ADDR y,
                              const AddLayerNormFP32TilingData& td) {
    td_ = td;
    invN_ = 1.0f / static_cast<float>(td.cols);
    // This block's rows: the first `remainderRows` blocks take one extra.
    const opkit::BlockRows mine = opkit::RowsOfBlock(td.rowsPerBlock, td.remainderRows);
    myRows_ = mine.count;
    firstRow_ = mine.first;
    const uint64_t total = static_cast<uint64_t>(td.rows) * td.cols;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), total);
    rGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(residual), total);
    sumGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(sum), total);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), total);
    wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(weight), td.cols);
    bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(bias), td.cols);

    // len: elements of one UB tile (single pass: tileRows whole rows; multi pass: one column tile)
    const uint32_t rowLen = td.tileCols == 0 ? td.stride : td.tileCols;
    const uint32_t len = td.tileCols == 0 ? td.tileRows * td.stride : td.tileCols;
    pipe_.InitBuffer(inQ_, 2, len * sizeof(T));
    pipe_.InitBuffer(resQ_, 2, len * sizeof(T));
    pipe_.InitBuffer(sumQ_, 2, len * sizeof(T));
    pipe_.InitBuffer(outQ_, 2, len * sizeof(T));
    pipe_.InitBuffer(wbQ_, 2, rowLen * sizeof(T));
    if constexpr (kCast) {
      pipe_.InitBuffer(xcBuf_, len * sizeof(CT));
      pipe_.InitBuffer(wBuf_, rowLen * sizeof(CT));
      pipe_.InitBuffer(bBuf_, rowLen * sizeof(CT));
    }
    pipe_.InitBuffer(sqBuf_, rowLen * sizeof(CT));
    pipe_.InitBuffer(redBuf_, 32);
    const uint32_t perRepeat = 256 / sizeof(CT);
    pipe_.InitBuffer(redTmpBuf_, ((rowLen + perRepeat - 1) / perRepeat * sizeof(CT) + 31) / 32 * 32);
    const uint32_t statBytes = (td.tileRows * sizeof(CT) + 31) / 32 * 32;
    pipe_.InitBuffer(corrBuf_, statBytes);
    pipe_.InitBuffer(rstdBuf_, statBytes);
    pipe_.InitBuffer(onesBuf_, statBytes);
  }

  __aicore__ inline void Process() {
    if (myRows_ == 0 || td_.cols == 0) return;
    if (td_.tileCols == 0) {
      LoadWeights(0, td_.cols);
      for (uint32_t done = 0; done < myRows_; done += td_.tileRows) {
        const uint32_t n = myRows_ - done < td_.tileRows ? myRows_ - done : td_.tileRows;
        SinglePassTile(firstRow_ + done, n);
      }
      FreeWeights();
    } else {
      for (uint32_t r = 0; r < myRows_; ++r) MultiPassRow(firstRow_ + r);
    }
  }

 private:
  // GM -> UB of `rows` rows of `cols` elements, each row padded with zeros to a 32 B pitch.
  __aicore__ inline void CopyRowsIn(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t rows,
                                    uint32_t cols) {
    opkit::CopyRowsPadded(dst, src, rows, cols);
  }

  // Weight and bias columns [c0, c0+n) into wF_/bF_ (ComputeT).
  __aicore__ inline void LoadWeights(uint32_t c0, uint32_t n) {
    LocalTensor<T> w = wbQ_.AllocTensor<T>();
    CopyRowsIn(w, wGm_[c0], 1, n);
    wbQ_.EnQue(w);
    wRaw_ = wbQ_.DeQue<T>();
    LocalTensor<T> b = wbQ_.AllocTensor<T>();
    CopyRowsIn(b, bGm_[c0], 1, n);
    wbQ_.EnQue(b);
    bRaw_ = wbQ_.DeQue<T>();
    if constexpr (kCast) {
      wF_ = wBuf_.Get<CT>();
      bF_ = bBuf_.Get<CT>();
      Cast(wF_, wRaw_, RoundMode::CAST_NONE, n);
      Cast(bF_, bRaw_, RoundMode::CAST_NONE, n);
    } else {
      wF_ = wRaw_;
      bF_ = bRaw_;
    }
  }
  __aicore__ inline void FreeWeights() {
    wbQ_.FreeTensor(wRaw_);
    wbQ_.FreeTensor(bRaw_);
  }

  // sum = x + residual for `rows` rows (32 B pitch) as ComputeT, in place of x (FP32 copy when the
  // dtypes differ: half/bf16 -> float is CAST_NONE). With `sumOut`, also the sum in the I/O dtype.
  __aicore__ inline LocalTensor<CT> ResidualSum(const LocalTensor<T>& xin, const LocalTensor<T>& rin, uint32_t rows,
                                                uint32_t cols, LocalTensor<T>* sumOut) {
    const uint32_t pitch = (cols + kBlockElems - 1) / kBlockElems * kBlockElems;
    if constexpr (kCast) {
      LocalTensor<CT> xc = xcBuf_.Get<CT>();
      LocalTensor<CT> rc = sqBuf_.Get<CT>();   // one row of scratch
      Cast(xc, xin, RoundMode::CAST_NONE, rows * pitch);
      for (uint32_t r = 0; r < rows; ++r) {
        Cast(rc, rin[r * pitch], RoundMode::CAST_NONE, cols);
        Add(xc[r * pitch], xc[r * pitch], rc, cols);
        if (sumOut == nullptr) continue;
        if constexpr (opkit::SameType<T, half>::value) {
          // fp16 + fp16 rounded once to fp16 is the FP32 sum rounded to fp16, but overflows to inf as in
          // PyTorch (a float -> half Cast saturates at 65504 instead).
          Add((*sumOut)[r * pitch], xin[r * pitch], rin[r * pitch], cols);
        } else {
          Cast((*sumOut)[r * pitch], xc[r * pitch], RoundMode::CAST_RINT, cols);
        }
      }
      return xc;
    } else {
      // Pitch padding is zero in both inputs (DataCopyPad isPad), so whole-tile adds stay defined.
      if (sumOut != nullptr) Add(*sumOut, xin, rin, rows * pitch);
      Add(xin, xin, rin, rows * pitch);
      return xin;
    }
  }

  __aicore__ inline float SumOf(const LocalTensor<CT>& src, uint32_t count) {
    LocalTensor<CT> red = redBuf_.Get<CT>();
    LocalTensor<CT> tmp = redTmpBuf_.Get<CT>();
    ReduceSum(red, src, tmp, count);
    opkit::VectorToScalarSync();
    return static_cast<float>(red.GetValue(0));
  }

  // rstd[i] = 1 / sqrt(var[i] + eps) for i < n, on the vector unit (IEEE sqrt and divide).
  __aicore__ inline void Rstd(const LocalTensor<CT>& var, uint32_t n) {
    LocalTensor<CT> ones = onesBuf_.Get<CT>();
    opkit::ScalarToVectorSync();
    Adds(var, var, static_cast<CT>(td_.eps), n);
    Sqrt(var, var, n);
    Duplicate(ones, static_cast<CT>(1.0f), n);
    Div(var, ones, var, n);
    opkit::VectorToScalarSync();
  }

  // Centre one row (d = x - m0 in place) and return its corrected variance; *corr = mean(d).
  __aicore__ inline float CentreRow(const LocalTensor<CT>& xr, uint32_t n, float* corr) {
    const float m0 = SumOf(xr, n) * invN_;
    Adds(xr, xr, static_cast<CT>(-m0), n);
    const float c = SumOf(xr, n) * invN_;
    LocalTensor<CT> sq = sqBuf_.Get<CT>();
    Mul(sq, xr, xr, n);
    const float var = SumOf(sq, n) * invN_ - c * c;
    *corr = c;
    return var < 0.0f ? 0.0f : var;   // rounding may make it negative; a NaN (inf or NaN in x) stays NaN
  }

  // dst = (d - c) * rstd * weight + bias; d (= xr) is overwritten.
  template <typename D>
  __aicore__ inline void Normalise(const LocalTensor<D>& dst, const LocalTensor<CT>& xr, const LocalTensor<CT>& w,
                                   const LocalTensor<CT>& b, float c, float rstd, uint32_t n) {
    Adds(xr, xr, static_cast<CT>(-c), n);
    Muls(xr, xr, static_cast<CT>(rstd), n);
    Mul(xr, xr, w, n);
    if constexpr (kCast) {
      Add(xr, xr, b, n);
      Cast(dst, xr, RoundMode::CAST_RINT, n);   // float -> half/bf16: RINT is valid for both on A2
    } else {
      Add(dst, xr, b, n);                       // I/O dtype is the compute dtype: write y directly
    }
  }

  // UB -> GM: `rows` rows of `cols` elements (32 B row pitch in UB) at row0, column c0.
  template <typename Q>
  __aicore__ inline void StoreRows(Q& q, const GlobalTensor<T>& dst, LocalTensor<T>& yout, uint64_t row0,
                                   uint32_t rows, uint32_t cols, uint32_t c0 = 0) {
    q.EnQue(yout);
    yout = q.template DeQue<T>();
    DataCopyExtParams p{static_cast<uint16_t>(rows), static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
    DataCopyPad(dst[row0 * td_.cols + c0], yout, p);
    q.FreeTensor(yout);
  }

  template <typename Q>
  __aicore__ inline LocalTensor<T> Load(Q& q, const GlobalTensor<T>& src, uint32_t rows, uint32_t cols) {
    LocalTensor<T> t = q.template AllocTensor<T>();
    CopyRowsIn(t, src, rows, cols);
    q.EnQue(t);
    return q.template DeQue<T>();
  }

  // n whole rows starting at row0, all in UB at once.
  __aicore__ inline void SinglePassTile(uint64_t row0, uint32_t n) {
    const uint32_t cols = td_.cols, pitch = td_.stride;
    LocalTensor<T> xin = Load(inQ_, xGm_[row0 * cols], n, cols);
    LocalTensor<T> rin = Load(resQ_, rGm_[row0 * cols], n, cols);
    LocalTensor<T> sumOut = sumQ_.AllocTensor<T>();
    LocalTensor<CT> xc = ResidualSum(xin, rin, n, cols, &sumOut);
    resQ_.FreeTensor(rin);
    StoreRows(sumQ_, sumGm_, sumOut, row0, n, cols);

    LocalTensor<CT> corr = corrBuf_.Get<CT>();
    LocalTensor<CT> rstd = rstdBuf_.Get<CT>();
    for (uint32_t r = 0; r < n; ++r) {
      float c;
      const float var = CentreRow(xc[r * pitch], cols, &c);
      corr.SetValue(r, static_cast<CT>(c));
      rstd.SetValue(r, static_cast<CT>(var));
    }
    Rstd(rstd, n);   // one vector pass for the whole tile
    LocalTensor<T> yout = outQ_.AllocTensor<T>();
    for (uint32_t r = 0; r < n; ++r) {
      Normalise(yout[r * pitch], xc[r * pitch], wF_, bF_, static_cast<float>(corr.GetValue(r)),
                static_cast<float>(rstd.GetValue(r)), cols);
    }
    inQ_.FreeTensor(xin);
    StoreRows(outQ_, yGm_, yout, row0, n, cols);
  }

  // Columns [c0, c0+n) of one row: the residual sum as ComputeT (x's queue tensor stays allocated in
  // *xin; the caller frees it). With `store`, the sum also goes to GM.
  __aicore__ inline LocalTensor<CT> SumColumns(uint64_t row, uint32_t c0, uint32_t n, LocalTensor<T>* xin,
                                               bool store) {
    *xin = Load(inQ_, xGm_[row * td_.cols + c0], 1, n);
    LocalTensor<T> rin = Load(resQ_, rGm_[row * td_.cols + c0], 1, n);
    LocalTensor<CT> s;
    if (store) {
      LocalTensor<T> sumOut = sumQ_.AllocTensor<T>();
      s = ResidualSum(*xin, rin, 1, n, &sumOut);
      StoreRows(sumQ_, sumGm_, sumOut, row, 1, n, c0);
    } else {
      s = ResidualSum(*xin, rin, 1, n, nullptr);
    }
    resQ_.FreeTensor(rin);
    return s;
  }

  // A row longer than UB: three sweeps over column tiles, each recomputing the residual sum.
  __aicore__ inline void MultiPassRow(uint64_t row) {
    const uint32_t cols = td_.cols, tile = td_.tileCols;
    // Sweep 1: the residual sum to GM, and a first estimate of its mean.
    float s = 0.0f;
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> xin;
      s += SumOf(SumColumns(row, c0, n, &xin, true), n);
      inQ_.FreeTensor(xin);
    }
    const float m0 = s * invN_;
    // Sweep 2: sums of d = x - m0 and d^2 (corrected two-pass variance).
    float s1 = 0.0f, s2 = 0.0f;
    LocalTensor<CT> sq = sqBuf_.Get<CT>();
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> xin;
      LocalTensor<CT> xc = SumColumns(row, c0, n, &xin, false);
      Adds(xc, xc, static_cast<CT>(-m0), n);
      s1 += SumOf(xc, n);
      Mul(sq, xc, xc, n);
      s2 += SumOf(sq, n);
      inQ_.FreeTensor(xin);
    }
    const float c = s1 * invN_;
    float var = s2 * invN_ - c * c;
    LocalTensor<CT> rstd = rstdBuf_.Get<CT>();
    rstd.SetValue(0, static_cast<CT>(var > 0.0f ? var : 0.0f));
    Rstd(rstd, 1);
    const float rs = static_cast<float>(rstd.GetValue(0));
    // Sweep 3: normalise and write.
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> xin;
      LocalTensor<CT> xc = SumColumns(row, c0, n, &xin, false);
      Adds(xc, xc, static_cast<CT>(-m0), n);
      LoadWeights(c0, n);
      LocalTensor<T> yout = outQ_.AllocTensor<T>();
      Normalise(yout, xc, wF_, bF_, c, rs, n);
      FreeWeights();
      inQ_.FreeTensor(xin);
      StoreRows(outQ_, yGm_, yout, row, 1, n, c0);
    }
  }

  AddLayerNormFP32TilingData td_;
  float invN_ = 0.0f;
  uint32_t myRows_ = 0;
  uint64_t firstRow_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_, resQ_, wbQ_;
  TQue<TPosition::VECOUT, 1> sumQ_, outQ_;
  TBuf<TPosition::VECCALC> xcBuf_, wBuf_, bBuf_, sqBuf_, redBuf_, redTmpBuf_, corrBuf_, rstdBuf_, onesBuf_;
  GlobalTensor<T> xGm_, rGm_, sumGm_, yGm_, wGm_, bGm_;
  LocalTensor<T> wRaw_, bRaw_;
  LocalTensor<CT> wF_, bF_;
};

}  // namespace add_layer_norm_fp32_impl

extern "C" __global__ __aicore__ void add_layer_norm_fp32(GM_ADDR x, GM_ADDR residual, GM_ADDR weight, GM_ADDR bias,
                                                          GM_ADDR sum, GM_ADDR out, GM_ADDR workspace, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(AddLayerNormFP32TilingData, td, tiling);
  add_layer_norm_fp32_impl::Kernel<DTYPE_X, ComputeT> op;
  op.Init(x, residual, weight, bias, sum, out, td);
  op.Process();
}
