// DropOut (lib/filter/dropout.h): byte and bit masks, aligned and misaligned, each mode chosen by the shape and
// forced by dropOutMode, half and float, with and without sharedTmpBuffer. test_dropout.py compares with PyTorch.
#include "opkit_emu/pybind.h"
#include "lib/filter/dropout.h"  // CANN's include path resolves (kernel_operator.h already has it)

using namespace AscendC;

struct DropTiling {
  uint32_t rows, cols, mcols;  // DropOutShapeInfo
  int32_t mode;                // dropOutMode template argument (0..4)
  int32_t isHalf;
  int32_t withTmp;
  uint32_t tmp;                // sharedTmpBuffer bytes
  float keepProb;
};

template <class T, uint32_t M>
void run(const DropTiling& t, const LocalTensor<T>& d, const LocalTensor<T>& s, const LocalTensor<uint8_t>& mk,
         const LocalTensor<uint8_t>& tmp) {
  DropOutShapeInfo info;
  info.firstAxis = t.rows;
  info.srcLastAxis = t.cols;
  info.maskLastAxis = t.mcols;
  if (t.withTmp) DropOut<T, false, M>(d, s, mk, tmp, t.keepProb, info);  // DROP:call
  else DropOut<T, false, M>(d, s, mk, t.keepProb, info);
}
template <class T>
void run_mode(const DropTiling& t, const LocalTensor<T>& d, const LocalTensor<T>& s, const LocalTensor<uint8_t>& mk,
              const LocalTensor<uint8_t>& tmp) {
  switch (t.mode) {
    case 0: run<T, 0>(t, d, s, mk, tmp); break;
    case 1: run<T, 1>(t, d, s, mk, tmp); break;
    case 2: run<T, 2>(t, d, s, mk, tmp); break;
    case 3: run<T, 3>(t, d, s, mk, tmp); break;
    default: run<T, 4>(t, d, s, mk, tmp); break;
  }
}

// x: rows * cols floats; mask: rows * mcols bytes (returned as modified); out: rows * cols floats
extern "C" __global__ __aicore__ void drop_call(GM_ADDR x, GM_ADDR mask, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(DropTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> bx, bm, bd, bt, bh0, bhd;
  const uint32_t r = t.rows ? t.rows : 1, n = r * t.cols, mb = r * t.mcols;  // rows 0: the API must say so
  pipe.InitBuffer(bx, n * 4);
  pipe.InitBuffer(bm, mb);
  pipe.InitBuffer(bd, n * 4);
  pipe.InitBuffer(bt, t.tmp ? t.tmp : 32);
  pipe.InitBuffer(bh0, n * 2);
  pipe.InitBuffer(bhd, n * 2);
  GlobalTensor<float> gx, go;
  GlobalTensor<uint8_t> gm;
  gx.SetGlobalBuffer((__gm__ float*)x, n);
  gm.SetGlobalBuffer((__gm__ uint8_t*)mask, mb);
  go.SetGlobalBuffer((__gm__ float*)out, n);
  LocalTensor<float> fx = bx.Get<float>(), fd = bd.Get<float>();
  LocalTensor<uint8_t> mk = bm.Get<uint8_t>(), tmp = bt.Get<uint8_t>(t.tmp ? t.tmp : 32);
  DataCopy(fx, gx, n);
  DataCopy(mk, gm, mb);
  PipeBarrier<PIPE_ALL>();
  if (t.isHalf) {
    LocalTensor<half> hx = bh0.Get<half>(), hd = bhd.Get<half>();
    Cast(hx, fx, RoundMode::CAST_NONE, n);
    run_mode<half>(t, hd, hx, mk, tmp);
    Cast(fd, hd, RoundMode::CAST_NONE, n);
  } else {
    run_mode<float>(t, fd, fx, mk, tmp);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, fd, n);
  DataCopy(gm, mk, mb);
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, drop_call, 4);
}
