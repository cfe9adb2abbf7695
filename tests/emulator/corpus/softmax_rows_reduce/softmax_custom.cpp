// Row softmax of a [rows, 64] float matrix, one 256-byte repeat per row, with the level-0 reductions:
// WholeReduceMax / WholeReduceSum give one value per row, Brcb spreads each over a DataBlock, and Sub /
// Div read that block for all 8 blocks of a row (src1 block stride 0). Tiling struct registered with
// REGISTER_TILING_DEFAULT, tiling key 1 selects this path. Written here in the style of the reduction
// kernels of CANN's softmax implementation (see ../README.md).
#include "kernel_operator.h"
using namespace AscendC;

struct SoftmaxRowsTiling {
  uint32_t rowsPerBlock;  // multiple of rowsPerTile
  uint32_t rowsPerTile;   // multiple of 8 (Brcb takes 8 values per repeat), at most 255
};

constexpr uint32_t COLS = 64;  // one float repeat

class KernelSoftmaxRows {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SoftmaxRowsTiling& t) {
    t_ = t;
    const uint64_t off = static_cast<uint64_t>(t.rowsPerBlock) * COLS * GetBlockIdx();
    xGm_.SetGlobalBuffer((__gm__ float*)x + off, t.rowsPerBlock * COLS);
    yGm_.SetGlobalBuffer((__gm__ float*)y + off, t.rowsPerBlock * COLS);
    pipe_.InitBuffer(inQ_, 2, t.rowsPerTile * COLS * sizeof(float));
    pipe_.InitBuffer(outQ_, 2, t.rowsPerTile * COLS * sizeof(float));
    pipe_.InitBuffer(red_, AlignUp(t.rowsPerTile * sizeof(float), 32));
    pipe_.InitBuffer(bcast_, t.rowsPerTile * 32);
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < t_.rowsPerBlock / t_.rowsPerTile; ++i) {
      const uint32_t n = t_.rowsPerTile * COLS;
      LocalTensor<float> x = inQ_.AllocTensor<float>();
      DataCopy(x, xGm_[i * n], n);
      inQ_.EnQue(x);
      x = inQ_.DeQue<float>();
      LocalTensor<float> y = outQ_.AllocTensor<float>();
      LocalTensor<float> red = red_.Get<float>(), b = bcast_.Get<float>();
      const int32_t rows = static_cast<int32_t>(t_.rowsPerTile);
      const uint8_t brcbRepeats = static_cast<uint8_t>(t_.rowsPerTile / 8);
      // one row per repeat: dst stride 1 result, src blocks contiguous, rows 8 blocks apart
      WholeReduceMax(red, x, COLS, rows, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
      Brcb(b, red, brcbRepeats, BrcbRepeatParams(1, 8));
      Sub(y, x, b, COLS, t_.rowsPerTile, BinaryRepeatParams(1, 1, 0, 8, 8, 1));
      Exp(y, y, static_cast<int32_t>(n));
      WholeReduceSum(red, y, COLS, rows, 1, 1, 8);
      Brcb(b, red, brcbRepeats, BrcbRepeatParams(1, 8));
      Div(y, y, b, COLS, t_.rowsPerTile, BinaryRepeatParams(1, 1, 0, 8, 8, 1));
      inQ_.FreeTensor(x);
      outQ_.EnQue(y);
      y = outQ_.DeQue<float>();
      DataCopy(yGm_[i * n], y, n);
      outQ_.FreeTensor(y);
    }
  }

 private:
  SoftmaxRowsTiling t_{};
  TPipe pipe_;
  TQue<TPosition::VECIN, 2> inQ_;
  TQue<TPosition::VECOUT, 2> outQ_;
  TBuf<TPosition::VECCALC> red_, bcast_;
  GlobalTensor<float> xGm_, yGm_;
};

REGISTER_TILING_DEFAULT(SoftmaxRowsTiling);

extern "C" __global__ __aicore__ void softmax_rows(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
  GET_TILING_DATA(t, tiling);
  if (TILING_KEY_IS(1)) {
    KernelSoftmaxRows op;
    op.Init(x, y, t);
    op.Process();
  }
}
