// Rendered by opkit from templates/families/reduce/kernel.cpp.j2 for ReduceSumFP32 (reduce=sum).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// ReduceSumFP32: y = sum(x) over the last dim, fp16/bf16/fp32 I/O, FP32 accumulation.
// Each row is summed by ReduceSum (tree inside a 256 B repeat, repeats added in order: the A2 count
// form); rows longer than UB are summed tile by tile and the tile sums added in order, in FP32.
#include "kernel_operator.h"
#include "tiling.h"
#include "opkit/kernel_util.h"

using namespace AscendC;

#ifdef OPKIT_NAIVE_COMPUTE
using ComputeT = DTYPE_X;  // the "naive AMP" variant: accumulate in the I/O dtype
#else
using ComputeT = float;
#endif

namespace reduce_sum_fp32_impl {

constexpr bool kMean = false;  // the reduce template renders reduce_mean_fp32 from this kernel with true

template <typename T, typename CT>
class Kernel {
  static constexpr bool kCast = !opkit::SameType<T, CT>::value;  // I/O dtype differs from compute dtype
  static constexpr uint32_t kBlockElems = 32 / sizeof(T);

 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ReduceSumFP32TilingData& td) {
    td_ = td;
    const opkit::BlockRows mine = opkit::RowsOfBlock(td.rowsPerBlock, td.remainderRows);
    myRows_ = mine.count;
    firstRow_ = mine.first;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), static_cast<uint64_t>(td.rows) * td.cols);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), td.rows);
    if (myRows_ == 0 || td.cols == 0) return;
    const uint32_t len = td.tileCols == 0 ? td.tileRows * td.stride : td.tileCols;
    pipe_.InitBuffer(inQ_, 2, len * sizeof(T));
    if constexpr (kCast) pipe_.InitBuffer(xcBuf_, len * sizeof(CT));
    pipe_.InitBuffer(outQ_, 2, td.tileRows * sizeof(T));
    pipe_.InitBuffer(valBuf_, td.tileRows * sizeof(CT));
    pipe_.InitBuffer(redBuf_, 32);
    pipe_.InitBuffer(tmpBuf_, td.tmpElems * sizeof(float));
    scale_ = kMean ? 1.0f / static_cast<float>(td.cols) : 1.0f;
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

  __aicore__ inline LocalTensor<CT> ToCompute(const LocalTensor<T>& xin, uint32_t count) {
    if constexpr (kCast) {
      LocalTensor<CT> xc = xcBuf_.Get<CT>();
      Cast(xc, xin, RoundMode::CAST_NONE, count);  // half/bf16 -> float: CAST_NONE only (A2)
      return xc;
    } else {
      return xin;
    }
  }

  __aicore__ inline float SumOf(const LocalTensor<CT>& src, uint32_t n) {
    LocalTensor<CT> red = redBuf_.Get<CT>();
    ReduceSum(red, src, tmpBuf_.Get<CT>(), static_cast<int32_t>(n));
    opkit::VectorToScalarSync();
    return static_cast<float>(red.GetValue(0));
  }

  // Results vals[0, n) (written by the scalar unit) -> y[row0, row0 + n) in the I/O dtype.
  __aicore__ inline void StoreResults(uint64_t row0, uint32_t n) {
    LocalTensor<CT> vals = valBuf_.Get<CT>();
    LocalTensor<T> out = outQ_.AllocTensor<T>();
    opkit::ScalarToVectorSync();
    if constexpr (kCast) {
      Cast(out, vals, RoundMode::CAST_RINT, n);  // float -> half/bf16: RINT is valid for both on A2
    } else {
      Muls(out, vals, static_cast<CT>(1.0f), static_cast<int32_t>(n));  // exact copy on the vector pipe
    }
    outQ_.EnQue(out);
    out = outQ_.DeQue<T>();
    DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
    DataCopyPad(yGm_[row0], out, p);
    outQ_.FreeTensor(out);
  }

  __aicore__ inline void SinglePassTile(uint64_t row0, uint32_t n) {
    const uint32_t cols = td_.cols, pitch = td_.stride;
    LocalTensor<T> xin = LoadRows(row0 * cols, n, cols);
    LocalTensor<CT> xc = ToCompute(xin, n * pitch);
    LocalTensor<CT> vals = valBuf_.Get<CT>();
    for (uint32_t r = 0; r < n; ++r) {
      const float s = SumOf(xc[r * pitch], cols);
      vals.SetValue(r, static_cast<CT>(kMean ? s * scale_ : s));
    }
    inQ_.FreeTensor(xin);
    StoreResults(row0, n);
  }

  // A row longer than UB: tile sums added in order.
  __aicore__ inline void MultiPassRow(uint64_t row) {
    const uint32_t cols = td_.cols, tile = td_.tileCols;
    float s = 0.0f;
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> xin = LoadRows(row * cols + c0, 1, n);
      s += SumOf(ToCompute(xin, n), n);
      inQ_.FreeTensor(xin);
    }
    valBuf_.Get<CT>().SetValue(0, static_cast<CT>(kMean ? s * scale_ : s));
    StoreResults(row, 1);
  }

  ReduceSumFP32TilingData td_;
  float scale_ = 1.0f;
  uint32_t myRows_ = 0;
  uint64_t firstRow_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> xcBuf_, valBuf_, redBuf_, tmpBuf_;
  GlobalTensor<T> xGm_, yGm_;
};

}  // namespace reduce_sum_fp32_impl

extern "C" __global__ __aicore__ void reduce_sum_fp32(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(ReduceSumFP32TilingData, td, tiling);
  reduce_sum_fp32_impl::Kernel<DTYPE_X, ComputeT> op;
  op.Init(x, y, td);
  op.Process();
}
