// Rendered by opkit from templates/families/reduce/kernel.cpp.j2 for ReduceMaxFP32 (reduce=max).
// Yours to edit; the answers are in .opkit-scaffold.yaml (`opkit new NAME --answers FILE` replays them).
// ReduceMaxFP32: values, indices = max over the last dim, with torch.max's semantics: the first index
// of the max wins ties, and a nan anywhere in the row makes the result nan at the first nan's index.
// fp16/bf16/fp32 I/O; values are compared in FP32 (exact for every input dtype); indices are written
// as int32 (op.yaml kernel_dtype), the binding widens them to int64.
//
// ReduceMax leaves nan handling unspecified, so each row is also probed: sum(x - x) is 0 unless the row
// holds a nan or an inf; only such rows are scanned on the scalar unit for their first nan.
#include "kernel_operator.h"
#include "tiling.h"
#include "opkit/kernel_util.h"

using namespace AscendC;

#ifdef OPKIT_NAIVE_COMPUTE
using ComputeT = DTYPE_X;  // the "naive AMP" variant: compare in the I/O dtype (max is exact either way)
#else
using ComputeT = float;
#endif

namespace reduce_max_fp32_impl {

// ReduceMax stores the arg-max in the bit pattern of the compute dtype.
template <int Bytes> struct IndexBits { using type = uint32_t; };
template <> struct IndexBits<2> { using type = uint16_t; };

template <typename T, typename CT>
class Kernel {
  static constexpr bool kCast = !opkit::SameType<T, CT>::value;  // I/O dtype differs from compute dtype
  static constexpr uint32_t kBlockElems = 32 / sizeof(T);
  using IdxT = typename IndexBits<sizeof(CT)>::type;

 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR values, GM_ADDR indices, const ReduceMaxFP32TilingData& td) {
    td_ = td;
    const opkit::BlockRows mine = opkit::RowsOfBlock(td.rowsPerBlock, td.remainderRows);
    myRows_ = mine.count;
    firstRow_ = mine.first;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), static_cast<uint64_t>(td.rows) * td.cols);
    valGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(values), td.rows);
    idxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(indices), td.rows);
    if (myRows_ == 0 || td.cols == 0) return;
    const uint32_t len = td.tileCols == 0 ? td.tileRows * td.stride : td.tileCols;
    pipe_.InitBuffer(inQ_, 2, len * sizeof(T));
    if constexpr (kCast) pipe_.InitBuffer(xcBuf_, len * sizeof(CT));
    pipe_.InitBuffer(probeBuf_, len * sizeof(CT));
    pipe_.InitBuffer(valQ_, 2, td.tileRows * sizeof(T));
    pipe_.InitBuffer(idxQ_, 2, td.tileRows * sizeof(int32_t));
    pipe_.InitBuffer(valBuf_, td.tileRows * sizeof(CT));
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

  __aicore__ inline LocalTensor<CT> ToCompute(const LocalTensor<T>& xin, uint32_t count) {
    if constexpr (kCast) {
      LocalTensor<CT> xc = xcBuf_.Get<CT>();
      Cast(xc, xin, RoundMode::CAST_NONE, count);  // half/bf16 -> float: CAST_NONE only (A2), exact
      return xc;
    } else {
      return xin;
    }
  }

  // Max of n elements and its index (first on ties; first nan if the row has one).
  __aicore__ inline CT MaxOf(const LocalTensor<CT>& src, uint32_t n, uint32_t* idx, bool* isNan) {
    LocalTensor<CT> red = redBuf_.Get<CT>();
    ReduceMax(red, src, tmpBuf_.Get<CT>(), static_cast<int32_t>(n), true);
    opkit::VectorToScalarSync();
    CT m = red.GetValue(0);
    *idx = static_cast<uint32_t>(red.template ReinterpretCast<IdxT>().GetValue(1));
    *isNan = false;
    // nan probe: x - x is 0 for finite x, nan for nan and +-inf.
    LocalTensor<CT> probe = probeBuf_.Get<CT>();
    Sub(probe, src, src, static_cast<int32_t>(n));
    ReduceSum(red, probe, tmpBuf_.Get<CT>(), static_cast<int32_t>(n));
    opkit::VectorToScalarSync();
    const float p = static_cast<float>(red.GetValue(0));
    if (p != p) {
      for (uint32_t i = 0; i < n; ++i) {
        const CT v = src.GetValue(i);
        if (static_cast<float>(v) != static_cast<float>(v)) {
          m = v;
          *idx = i;
          *isNan = true;
          break;
        }
      }
    }
    return m;
  }

  // vals[0, n) and idx[0, n) (written by the scalar unit) -> GM at row0 in the I/O dtype / int32.
  __aicore__ inline void StoreResults(uint64_t row0, uint32_t n, LocalTensor<int32_t>& idx) {
    LocalTensor<CT> vals = valBuf_.Get<CT>();
    LocalTensor<T> out = valQ_.AllocTensor<T>();
    opkit::ScalarToVectorSync();
    if constexpr (kCast) {
      Cast(out, vals, RoundMode::CAST_RINT, n);  // exact: the max is one of the inputs
    } else {
      Muls(out, vals, static_cast<CT>(1.0f), static_cast<int32_t>(n));  // exact copy on the vector pipe
    }
    valQ_.EnQue(out);
    out = valQ_.DeQue<T>();
    DataCopyExtParams pv{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
    DataCopyPad(valGm_[row0], out, pv);
    valQ_.FreeTensor(out);
    idxQ_.EnQue(idx);
    idx = idxQ_.DeQue<int32_t>();
    opkit::ScalarToStoreSync();
    DataCopyExtParams pi{1, static_cast<uint32_t>(n * sizeof(int32_t)), 0, 0, 0};
    DataCopyPad(idxGm_[row0], idx, pi);
    idxQ_.FreeTensor(idx);
  }

  __aicore__ inline void SinglePassTile(uint64_t row0, uint32_t n) {
    const uint32_t cols = td_.cols, pitch = td_.stride;
    LocalTensor<T> xin = LoadRows(row0 * cols, n, cols);
    LocalTensor<CT> xc = ToCompute(xin, n * pitch);
    LocalTensor<CT> vals = valBuf_.Get<CT>();
    LocalTensor<int32_t> idx = idxQ_.AllocTensor<int32_t>();
    opkit::PipeSync<HardEvent::MTE3_S>();   // the scalar unit writes idx: after the last index store read it
    for (uint32_t r = 0; r < n; ++r) {
      uint32_t k = 0;
      bool isNan = false;
      vals.SetValue(r, MaxOf(xc[r * pitch], cols, &k, &isNan));
      idx.SetValue(r, static_cast<int32_t>(k));
    }
    inQ_.FreeTensor(xin);
    StoreResults(row0, n, idx);
  }

  // A row longer than UB: tile maxima merged in order (strict >, so ties keep the earlier tile);
  // the first tile holding a nan decides the result.
  __aicore__ inline void MultiPassRow(uint64_t row) {
    const uint32_t cols = td_.cols, tile = td_.tileCols;
    CT m = static_cast<CT>(0.0f);
    uint32_t k = 0;
    for (uint32_t c0 = 0; c0 < cols; c0 += tile) {
      const uint32_t n = cols - c0 < tile ? cols - c0 : tile;
      LocalTensor<T> xin = LoadRows(row * cols + c0, 1, n);
      uint32_t tk = 0;
      bool isNan = false;
      const CT tm = MaxOf(ToCompute(xin, n), n, &tk, &isNan);
      inQ_.FreeTensor(xin);
      if (c0 == 0 || isNan || static_cast<float>(tm) > static_cast<float>(m)) {
        m = tm;
        k = c0 + tk;
      }
      if (isNan) break;
    }
    valBuf_.Get<CT>().SetValue(0, m);
    LocalTensor<int32_t> idx = idxQ_.AllocTensor<int32_t>();
    opkit::PipeSync<HardEvent::MTE3_S>();   // the scalar unit writes idx: after the last index store read it
    idx.SetValue(0, static_cast<int32_t>(k));
    StoreResults(row, 1, idx);
  }

  ReduceMaxFP32TilingData td_;
  uint32_t myRows_ = 0;
  uint64_t firstRow_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_;
  TQue<TPosition::VECOUT, 1> valQ_, idxQ_;
  TBuf<TPosition::VECCALC> xcBuf_, probeBuf_, valBuf_, redBuf_, tmpBuf_;
  GlobalTensor<T> xGm_, valGm_;
  GlobalTensor<int32_t> idxGm_;
};

}  // namespace reduce_max_fp32_impl

extern "C" __global__ __aicore__ void reduce_max_fp32(GM_ADDR x, GM_ADDR values, GM_ADDR indices, GM_ADDR workspace,
                                                      GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(ReduceMaxFP32TilingData, td, tiling);
  reduce_max_fp32_impl::Kernel<DTYPE_X, ComputeT> op;
  op.Init(x, values, indices, td);
  op.Process();
}
