// Vector add over 8 blocks, tiled and double-buffered, with the tiling struct and a workspace in GM.
// Written here in the style of Ascend/samples kernel_invocation/Add_tile (see ../README.md): the
// A2 path (__CCE_AICORE__ == 220) computes with the level-0 form -- full 256-byte repeats with
// BinaryRepeatParams, then the tail of a tile in Counter mode with the mask register.
#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"
using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

struct AddTileTiling {
  uint32_t totalLength;  // elements over all blocks
  uint32_t tileNum;      // tiles per block (each split in BUFFER_NUM halves)
};

class KernelAddTile {
 public:
  __aicore__ inline KernelAddTile() {}
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AddTileTiling& t) {
    ASSERT(GetBlockNum() != 0 && "block num can not be zero");
    blockLength_ = t.totalLength / GetBlockNum();
    tileNum_ = t.tileNum;
    tileLength_ = blockLength_ / tileNum_ / BUFFER_NUM;
    xGm_.SetGlobalBuffer((__gm__ half*)ParamOffset<half>(x, blockLength_), blockLength_);
    yGm_.SetGlobalBuffer((__gm__ half*)y + blockLength_ * block_idx, blockLength_);
    zGm_.SetGlobalBuffer((__gm__ half*)z + blockLength_ * GetBlockIdx(), blockLength_);
    pipe_.InitBuffer(inX_, BUFFER_NUM, AlignUp(tileLength_ * sizeof(half), 32));
    pipe_.InitBuffer(inY_, BUFFER_NUM, AlignUp(tileLength_ * sizeof(half), 32));
    pipe_.InitBuffer(outZ_, BUFFER_NUM, AlignUp(tileLength_ * sizeof(half), 32));
  }
  __aicore__ inline void Process() {
    for (uint32_t i = 0; i < tileNum_ * BUFFER_NUM; ++i) {
      CopyIn(i);
      Compute();
      CopyOut(i);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint32_t i) {
    LocalTensor<half> x = inX_.AllocTensor<half>(), y = inY_.AllocTensor<half>();
    DataCopy(x, xGm_[i * tileLength_], tileLength_);
    DataCopy(y, yGm_[i * tileLength_], tileLength_);
    inX_.EnQue(x);
    inY_.EnQue(y);
  }
  __aicore__ inline void Compute() {
    LocalTensor<half> x = inX_.DeQue<half>(), y = inY_.DeQue<half>();
    LocalTensor<half> z = outZ_.AllocTensor<half>();
#if __CCE_AICORE__ == 220
    constexpr uint32_t perRepeat = 256 / sizeof(half);
    const uint32_t repeats = tileLength_ / perRepeat, tail = tileLength_ % perRepeat;
    if (repeats > 0) Add(z, x, y, perRepeat, repeats, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
    if (tail > 0) {
      const uint32_t off = repeats * perRepeat;
      SetMaskCount();
      SetVectorMask<half, MaskMode::COUNTER>(0, tail);
      Add<half, false>(z[off], x[off], y[off], MASK_PLACEHOLDER, 1, BinaryRepeatParams());
      SetMaskNorm();
      ResetMask();
    }
#else
    Add(z, x, y, tileLength_);
#endif
    outZ_.EnQue<half>(z);
    inX_.FreeTensor(x);
    inY_.FreeTensor(y);
  }
  __aicore__ inline void CopyOut(uint32_t i) {
    LocalTensor<half> z = outZ_.DeQue<half>();
    DataCopy(zGm_[i * tileLength_], z, tileLength_);
    outZ_.FreeTensor(z);
  }

  TPipe pipe_;
  TQue<QuePosition::VECIN, BUFFER_NUM> inX_, inY_;
  TQue<QuePosition::VECOUT, BUFFER_NUM> outZ_;
  GlobalTensor<half> xGm_, yGm_, zGm_;
  uint32_t blockLength_ = 0, tileNum_ = 0, tileLength_ = 0;
};

extern "C" __global__ __aicore__ void add_tile_level0(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace,
                                                       GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(AddTileTiling, t, tiling);
  SetSysWorkspace(workspace);
  if (GetUserWorkspace(workspace) == nullptr) return;
  KernelAddTile op;
  op.Init(x, y, z, t);
  op.Process();
}
