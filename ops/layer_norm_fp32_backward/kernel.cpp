// Rendered by opkit from templates/families/norm/backward/kernel.cpp.j2 for LayerNormFP32Backward (norm=layer, backward=true).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// LayerNormFP32Backward: gradients of y = xhat * weight + bias, xhat = (x - mean) * rstd, per row:
//   g       = dy * weight
//   dx      = rstd * (g - mean(g) - xhat * mean(g * xhat))
//   dweight = sum over rows of dy * xhat,   dbias = sum over rows of dy
// (a row whose sums are not finite: dx as PyTorch forms it, NonFiniteDx). All in ComputeT (FP32).
// mean/rstd are recomputed from x with the forward op's corrected two-pass algorithm (the forward schema
// returns y only). dweight/dbias: each block sums its rows in UB and adds
// the result to the FP32 outputs with SetAtomicAdd (the outputs are zero-filled before launch).
#include "kernel_operator.h"
#include "tiling.h"
#include "opkit/kernel_util.h"

using namespace AscendC;

#ifdef OPKIT_NAIVE_COMPUTE
using ComputeT = DTYPE_DY;  // the "naive AMP" variant: compute (reductions included) in the I/O dtype
#else
using ComputeT = float;
#endif

namespace layer_norm_fp32_backward_impl {

template <typename T, typename CT>
class Kernel {
  static constexpr bool kCast = !opkit::SameType<T, CT>::value;          // I/O dtype differs from compute dtype
  static constexpr bool kAccCast = !opkit::SameType<CT, float>::value;   // naive variant: accumulators -> FP32
  static constexpr uint32_t kBlockElems = 32 / sizeof(T);

 public:
  __aicore__ inline void Init(GM_ADDR dy, GM_ADDR x, GM_ADDR weight, GM_ADDR dx, GM_ADDR dweight, GM_ADDR dbias,
                              const LayerNormFP32BackwardTilingData& td) {
    td_ = td;
    invN_ = 1.0f / static_cast<float>(td.cols);
    // This block's rows: the first `remainderRows` blocks take one extra.
    const opkit::BlockRows mine = opkit::RowsOfBlock(td.rowsPerBlock, td.remainderRows);
    myRows_ = mine.count;
    firstRow_ = mine.first;
    const uint64_t total = static_cast<uint64_t>(td.rows) * td.cols;
    dyGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(dy), total);
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), total);
    dxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(dx), total);
    wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(weight), td.cols);
    dwGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(dweight), td.cols);
    dbGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(dbias), td.cols);

    // len: elements of one UB tile (single pass: tileRows whole rows; multi pass: one column tile)
    const uint32_t rowLen = td.tileCols == 0 ? td.stride : td.tileCols;
    const uint32_t len = td.tileCols == 0 ? td.tileRows * td.stride : td.tileCols;
    pipe_.InitBuffer(xQ_, 2, len * sizeof(T));
    pipe_.InitBuffer(dyQ_, 2, len * sizeof(T));
    pipe_.InitBuffer(dxQ_, 2, len * sizeof(T));
    pipe_.InitBuffer(wQ_, 1, rowLen * sizeof(T));
    if constexpr (kCast) {
      pipe_.InitBuffer(xcBuf_, len * sizeof(CT));
      pipe_.InitBuffer(gcBuf_, len * sizeof(CT));
      pipe_.InitBuffer(wBuf_, rowLen * sizeof(CT));
    }
    if constexpr (kAccCast) pipe_.InitBuffer(accFBuf_, rowLen * sizeof(float));
    pipe_.InitBuffer(tmpBuf_, rowLen * sizeof(CT));
    pipe_.InitBuffer(dwAccBuf_, rowLen * sizeof(CT));
    pipe_.InitBuffer(dbAccBuf_, rowLen * sizeof(CT));
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
      LocalTensor<CT> dwAcc = dwAccBuf_.Get<CT>();
      LocalTensor<CT> dbAcc = dbAccBuf_.Get<CT>();
      Duplicate(dwAcc, static_cast<CT>(0.0f), td_.cols);
      Duplicate(dbAcc, static_cast<CT>(0.0f), td_.cols);
      LoadWeight(0, td_.cols);
      for (uint32_t done = 0; done < myRows_; done += td_.tileRows) {
        const uint32_t n = myRows_ - done < td_.tileRows ? myRows_ - done : td_.tileRows;
        SinglePassTile(firstRow_ + done, n);
      }
      wQ_.FreeTensor(wRaw_);
      AtomicAddTo(dwGm_, dwAcc, 0, td_.cols);
      AtomicAddTo(dbGm_, dbAcc, 0, td_.cols);
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

  template <typename Q>
  __aicore__ inline LocalTensor<T> Load(Q& q, const GlobalTensor<T>& src, uint32_t rows, uint32_t cols) {
    LocalTensor<T> t = q.template AllocTensor<T>();
    CopyRowsIn(t, src, rows, cols);
    q.EnQue(t);
    return q.template DeQue<T>();
  }

  // Weight columns [c0, c0+n) into wF_ (ComputeT); wRaw_ stays allocated until the caller frees it.
  __aicore__ inline void LoadWeight(uint32_t c0, uint32_t n) {
    wRaw_ = Load(wQ_, wGm_[c0], 1, n);
    if constexpr (kCast) {
      wF_ = wBuf_.Get<CT>();
      Cast(wF_, wRaw_, RoundMode::CAST_NONE, n);
    } else {
      wF_ = wRaw_;
    }
  }

  // An I/O tile as ComputeT (cast into `buf` when the dtypes differ; half/bf16 -> float is CAST_NONE).
  __aicore__ inline LocalTensor<CT> ToCompute(const LocalTensor<T>& in, TBuf<TPosition::VECCALC>& buf,
                                              uint32_t count) {
    if constexpr (kCast) {
      LocalTensor<CT> c = buf.Get<CT>();
      Cast(c, in, RoundMode::CAST_NONE, count);
      return c;
    } else {
      return in;
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
    LocalTensor<CT> sq = tmpBuf_.Get<CT>();
    Mul(sq, xr, xr, n);
    const float var = SumOf(sq, n) * invN_ - c * c;
    *corr = c;
    return var < 0.0f ? 0.0f : var;   // rounding may make it negative; a NaN (inf or NaN in x) stays NaN
  }

  // dx = rstd * (g - A - xhat * B) from xhat (overwritten) and g, into dst.
  template <typename D>
  __aicore__ inline void InputGrad(const LocalTensor<D>& dst, const LocalTensor<CT>& xhat, const LocalTensor<CT>& g,
                                   float a, float b, float rstd, uint32_t n) {
    Muls(xhat, xhat, static_cast<CT>(-b), n);
    Add(xhat, xhat, g, n);
    Adds(xhat, xhat, static_cast<CT>(-a), n);
    if constexpr (kCast) {
      Muls(xhat, xhat, static_cast<CT>(rstd), n);
      Cast(dst, xhat, RoundMode::CAST_RINT, n);   // float -> half/bf16: RINT is valid for both on A2
    } else {
      Muls(dst, xhat, static_cast<CT>(rstd), n);
    }
  }

  // A row whose sums are not finite (an inf or NaN in dy or weight): every dx of it is NaN or +-inf, and
  // which one follows the formula. PyTorch's CPU kernel forms dx = rstd * g + B * x + C with
  // B = (sum(g) * mean - sum(g * x)) * rstd^3 / N and C = -B * mean - sum(g) * rstd / N; so does this path,
  // so its NaN and infinities fall where PyTorch's do (the formula above would put them elsewhere).
  __aicore__ static inline bool Finite(float v) { return v - v == 0.0f; }

  // x (I/O dtype, as loaded) -> tmp in ComputeT.
  __aicore__ inline void XAsCompute(const LocalTensor<CT>& tmp, const LocalTensor<T>& xraw, uint32_t n) {
    if constexpr (kCast) {
      Cast(tmp, xraw, RoundMode::CAST_NONE, n);
    } else {
      Muls(tmp, xraw, static_cast<CT>(1.0f), n);
    }
  }

  // sum(g * x) over [0, n) (tmp is clobbered).
  __aicore__ inline float GxSum(const LocalTensor<T>& xraw, const LocalTensor<CT>& g, uint32_t n) {
    LocalTensor<CT> tmp = tmpBuf_.Get<CT>();
    XAsCompute(tmp, xraw, n);
    Mul(tmp, tmp, g, n);
    return SumOf(tmp, n);
  }

  // dst = rstd * g + bb * x + cc (g is overwritten, tmp clobbered).
  template <typename D>
  __aicore__ inline void NonFiniteDx(const LocalTensor<D>& dst, const LocalTensor<T>& xraw, const LocalTensor<CT>& g,
                                     float bb, float cc, float rstd, uint32_t n) {
    LocalTensor<CT> tmp = tmpBuf_.Get<CT>();
    XAsCompute(tmp, xraw, n);
    Muls(tmp, tmp, static_cast<CT>(bb), n);
    Adds(tmp, tmp, static_cast<CT>(cc), n);
    Muls(g, g, static_cast<CT>(rstd), n);
    Add(tmp, tmp, g, n);
    if constexpr (kCast) {
      Cast(dst, tmp, RoundMode::CAST_RINT, n);
    } else {
      Muls(dst, tmp, static_cast<CT>(1.0f), n);
    }
  }

  // Single pass: row `row`'s dx into dst when its sums are not finite; g = dy * weight of the row.
  template <typename D>
  __aicore__ inline void NonFiniteRow(const LocalTensor<D>& dst, uint64_t row, const LocalTensor<CT>& g, float sumG,
                                      float rstd) {
    const uint32_t cols = td_.cols;
    LocalTensor<T> xraw = Load(xQ_, xGm_[row * cols], 1, cols);
    LocalTensor<CT> tmp = tmpBuf_.Get<CT>();
    XAsCompute(tmp, xraw, cols);
    const float mean = SumOf(tmp, cols) * invN_;   // only its sign can matter here
    const float bb = (sumG * mean - GxSum(xraw, g, cols)) * rstd * rstd * rstd * invN_;
    NonFiniteDx(dst, xraw, g, bb, -bb * mean - sumG * rstd * invN_, rstd, cols);
    xQ_.FreeTensor(xraw);
  }

  // GM[c0, c0+n) += src (FP32) with an atomic UB -> GM copy; src is a TBuf tensor, so order the
  // copy after the vector writes and later vector writes after the copy explicitly.
  __aicore__ inline void AtomicAddTo(const GlobalTensor<float>& dst, const LocalTensor<CT>& src, uint32_t c0,
                                     uint32_t n) {
    LocalTensor<float> f;
    if constexpr (kAccCast) {
      f = accFBuf_.Get<float>();
      Cast(f, src, RoundMode::CAST_NONE, n);
    } else {
      f = src;
    }
    opkit::PipeSync<HardEvent::V_MTE3>();
    SetAtomicAdd<float>();
    DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
    DataCopyPad(dst[c0], f, p);
    SetAtomicNone();
    opkit::PipeSync<HardEvent::MTE3_V>();
  }

  // UB -> GM: `rows` rows of `cols` elements (32 B row pitch in UB) at row0, column c0.
  __aicore__ inline void StoreRows(LocalTensor<T>& out, uint64_t row0, uint32_t rows, uint32_t cols,
                                   uint32_t c0 = 0) {
    dxQ_.EnQue(out);
    out = dxQ_.DeQue<T>();
    DataCopyExtParams p{static_cast<uint16_t>(rows), static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
    DataCopyPad(dxGm_[row0 * td_.cols + c0], out, p);
    dxQ_.FreeTensor(out);
  }

  // n whole rows starting at row0, all in UB at once.
  __aicore__ inline void SinglePassTile(uint64_t row0, uint32_t n) {
    const uint32_t cols = td_.cols, pitch = td_.stride;
    LocalTensor<T> xin = Load(xQ_, xGm_[row0 * cols], n, cols);
    LocalTensor<T> dyin = Load(dyQ_, dyGm_[row0 * cols], n, cols);
    LocalTensor<CT> xc = ToCompute(xin, xcBuf_, n * pitch);
    LocalTensor<CT> gc = ToCompute(dyin, gcBuf_, n * pitch);

    LocalTensor<CT> corr = corrBuf_.Get<CT>();
    LocalTensor<CT> rstd = rstdBuf_.Get<CT>();
    for (uint32_t r = 0; r < n; ++r) {
      float c;
      const float var = CentreRow(xc[r * pitch], cols, &c);
      corr.SetValue(r, static_cast<CT>(c));
      rstd.SetValue(r, static_cast<CT>(var));
    }
    Rstd(rstd, n);   // one vector pass for the whole tile

    LocalTensor<CT> tmp = tmpBuf_.Get<CT>();
    LocalTensor<CT> dwAcc = dwAccBuf_.Get<CT>();
    LocalTensor<CT> dbAcc = dbAccBuf_.Get<CT>();
    LocalTensor<T> dxout = dxQ_.AllocTensor<T>();
    for (uint32_t r = 0; r < n; ++r) {
      const LocalTensor<CT> xr = xc[r * pitch];
      const LocalTensor<CT> gr = gc[r * pitch];
      const float rs = static_cast<float>(rstd.GetValue(r));
      Adds(xr, xr, static_cast<CT>(-static_cast<float>(corr.GetValue(r))), cols);
      Muls(xr, xr, static_cast<CT>(rs), cols);   // xhat
      Mul(tmp, gr, xr, cols);
      Add(dwAcc, dwAcc, tmp, cols);               // dweight += dy * xhat
      Add(dbAcc, dbAcc, gr, cols);                // dbias += dy
      Mul(gr, gr, wF_, cols);                     // g = dy * weight
      const float sumG = SumOf(gr, cols);
      const float a = sumG * invN_;
      Mul(tmp, gr, xr, cols);
      const float b = SumOf(tmp, cols) * invN_;
      if (Finite(a) && Finite(b)) {
        InputGrad(dxout[r * pitch], xr, gr, a, b, rs, cols);
      } else {
        NonFiniteRow(dxout[r * pitch], row0 + r, gr, sumG, rs);
      }
    }
    xQ_.FreeTensor(xin);
    dyQ_.FreeTensor(dyin);
    StoreRows(dxout, row0, n, cols);
  }

  // A row longer than UB: four sweeps over column tiles (x four times, dy twice).
  __aicore__ inline void MultiPassRow(uint64_t row) {
    const uint32_t cols = td_.cols, tile = td_.tileCols;
    const uint64_t base = row * cols;
    // Sweeps 1-2: mean and corrected two-pass variance, as in the forward op.
    float s = 0.0f;
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> xin = Load(xQ_, xGm_[base + c0], 1, n);
      s += SumOf(ToCompute(xin, xcBuf_, n), n);
      xQ_.FreeTensor(xin);
    }
    const float m0 = s * invN_;
    float s1 = 0.0f, s2 = 0.0f;
    LocalTensor<CT> tmp = tmpBuf_.Get<CT>();
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> xin = Load(xQ_, xGm_[base + c0], 1, n);
      LocalTensor<CT> xc = ToCompute(xin, xcBuf_, n);
      Adds(xc, xc, static_cast<CT>(-m0), n);
      s1 += SumOf(xc, n);
      Mul(tmp, xc, xc, n);
      s2 += SumOf(tmp, n);
      xQ_.FreeTensor(xin);
    }
    const float c = s1 * invN_;
    const float var = s2 * invN_ - c * c;
    LocalTensor<CT> rstd = rstdBuf_.Get<CT>();
    rstd.SetValue(0, static_cast<CT>(var < 0.0f ? 0.0f : var));   // a NaN (inf or NaN in x) stays NaN
    Rstd(rstd, 1);
    const float rs = static_cast<float>(rstd.GetValue(0));
    // Sweep 3: A = mean(g), B = mean(g * xhat).
    float sa = 0.0f, sb = 0.0f;
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> xin, dyin;
      LocalTensor<CT> xhat, g;
      TileXhatAndG(base, c0, n, m0, c, rs, xin, dyin, xhat, g, false);
      sa += SumOf(g, n);
      Mul(tmp, g, xhat, n);
      sb += SumOf(tmp, n);
      xQ_.FreeTensor(xin);
      dyQ_.FreeTensor(dyin);
    }
    const float a = sa * invN_, b = sb * invN_;
    const bool finite = Finite(a) && Finite(b);
    float bb = 0.0f, cc = 0.0f;
    if (!finite) {   // NonFiniteDx's coefficients: one more sweep for sum(g * x)
      float sgx = 0.0f;
      for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
        const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
        LocalTensor<T> xin = Load(xQ_, xGm_[base + c0], 1, n);
        LocalTensor<T> dyin = Load(dyQ_, dyGm_[base + c0], 1, n);
        LocalTensor<CT> g = ToCompute(dyin, gcBuf_, n);
        LoadWeight(c0, n);
        Mul(g, g, wF_, n);
        wQ_.FreeTensor(wRaw_);
        sgx += GxSum(xin, g, n);
        xQ_.FreeTensor(xin);
        dyQ_.FreeTensor(dyin);
      }
      const float mean = m0 + c;
      bb = (sa * mean - sgx) * rs * rs * rs * invN_;
      cc = -bb * mean - sa * rs * invN_;
    }
    // Sweep 4: dx, and this row's dweight/dbias contributions (atomic adds per tile).
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> xin, dyin;
      LocalTensor<CT> xhat, g;
      TileXhatAndG(base, c0, n, m0, c, rs, xin, dyin, xhat, g, true);
      LocalTensor<T> dxout = dxQ_.AllocTensor<T>();
      if (finite) {
        InputGrad(dxout, xhat, g, a, b, rs, n);
      } else {   // x was centred in place: load it again
        LocalTensor<T> xraw = Load(xQ_, xGm_[base + c0], 1, n);
        NonFiniteDx(dxout, xraw, g, bb, cc, rs, n);
        xQ_.FreeTensor(xraw);
      }
      xQ_.FreeTensor(xin);
      dyQ_.FreeTensor(dyin);
      StoreRows(dxout, row, 1, n, c0);
    }
  }

  // For columns [c0, c0+n) of one row: xhat = (x - m0 - c) * rstd and g = dy * weight (ComputeT).
  // With `grads`, also adds dy * xhat and dy to dweight/dbias (before dy is scaled into g).
  __aicore__ inline void TileXhatAndG(uint64_t base, uint32_t c0, uint32_t n, float m0, float c, float rs,
                                      LocalTensor<T>& xin, LocalTensor<T>& dyin, LocalTensor<CT>& xhat,
                                      LocalTensor<CT>& g, bool grads) {
    xin = Load(xQ_, xGm_[base + c0], 1, n);
    dyin = Load(dyQ_, dyGm_[base + c0], 1, n);
    xhat = ToCompute(xin, xcBuf_, n);
    g = ToCompute(dyin, gcBuf_, n);
    Adds(xhat, xhat, static_cast<CT>(-m0), n);
    Adds(xhat, xhat, static_cast<CT>(-c), n);
    Muls(xhat, xhat, static_cast<CT>(rs), n);
    if (grads) {
      LocalTensor<CT> tmp = tmpBuf_.Get<CT>();
      Mul(tmp, g, xhat, n);
      AtomicAddTo(dwGm_, tmp, c0, n);
      AtomicAddTo(dbGm_, g, c0, n);
    }
    LoadWeight(c0, n);
    Mul(g, g, wF_, n);
    wQ_.FreeTensor(wRaw_);
  }

  LayerNormFP32BackwardTilingData td_;
  float invN_ = 0.0f;
  uint32_t myRows_ = 0;
  uint64_t firstRow_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> xQ_, dyQ_, wQ_;
  TQue<TPosition::VECOUT, 1> dxQ_;
  TBuf<TPosition::VECCALC> xcBuf_, gcBuf_, wBuf_, accFBuf_, tmpBuf_, dwAccBuf_, dbAccBuf_, redBuf_, redTmpBuf_,
      corrBuf_, rstdBuf_, onesBuf_;
  GlobalTensor<T> dyGm_, xGm_, dxGm_, wGm_;
  GlobalTensor<float> dwGm_, dbGm_;
  LocalTensor<T> wRaw_;
  LocalTensor<CT> wF_;
};

}  // namespace layer_norm_fp32_backward_impl

extern "C" __global__ __aicore__ void layer_norm_fp32_backward(GM_ADDR dy, GM_ADDR x, GM_ADDR weight, GM_ADDR dx,
                                                               GM_ADDR dweight, GM_ADDR dbias, GM_ADDR workspace,
                                                               GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(LayerNormFP32BackwardTilingData, td, tiling);
  layer_norm_fp32_backward_impl::Kernel<DTYPE_DY, ComputeT> op;
  op.Init(dy, x, weight, dx, dweight, dbias, td);
  op.Process();
}
