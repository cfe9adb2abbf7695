// TransDataTo5HD and Transpose (opkit_emu/transpose.h). Doc pages (asc-devkit docs/zh/api/SIMD-API/基础API/
// Memory矢量计算/数据排布转换/{TransDataTo5HD,Transpose}.md at mirror-cann/asc-devkit 82b89a15); the address lists
// are built the way the pages' examples and CANN's own A2 Transpose build them.
#include "opkit_emu/pybind.h"

using namespace AscendC;

template <class T>
struct Io {  // x -> UB (src), dst in UB -> y; n elements each
  TPipe pipe;
  TBuf<TPosition::VECCALC> a, b;
  LocalTensor<T> src, dst;
  GlobalTensor<T> gx, gy;
  uint32_t n;
  Io(GM_ADDR x, GM_ADDR y, uint32_t count, uint32_t dst_extra = 0) : n(count) {
    gx.SetGlobalBuffer((__gm__ T*)x, n);
    gy.SetGlobalBuffer((__gm__ T*)y, n);
    pipe.InitBuffer(a, n * sizeof(T));
    pipe.InitBuffer(b, n * sizeof(T) + dst_extra);
    src = a.Get<T>();
    dst = b.Get<T>();
    DataCopy(src, gx, n);
    PipeBarrier<PIPE_ALL>();
  }
  void out() {
    PipeBarrier<PIPE_ALL>();
    DataCopy(gy, dst, n);
  }
};

// The page's NCHW -> NC1HWC0 example (N 2, C 32, H 16, W 16, half): address lists as integers, 16 repeats,
// dstRepStride 16, srcRepStride 1.
extern "C" __global__ __aicore__ void nc1hwc0_half(GM_ADDR x, GM_ADDR y) {
  constexpr uint32_t H = 16, W = 16, C0 = 16;
  Io<half> io(x, y, 2 * 32 * H * W);
  TransDataTo5HDParams p;
  p.repeatTimes = 16;
  p.dstRepStride = 16;
  p.srcRepStride = 1;
  for (int j = 0; j < 4; j++) {
    uint64_t dstList[16], srcList[16];
    for (int i = 0; i < 16; i++) {
      dstList[i] = (uint64_t)(io.dst[j * C0 * H * W + W * i].GetPhyAddr());
      srcList[i] = (uint64_t)(io.src[j * C0 * H * W + H * W * i].GetPhyAddr());
    }
    TransDataTo5HD<half>(dstList, srcList, p);
  }
  io.out();
}

// A 16 x 8 float block to 8 x 16 with LocalTensor lists as CANN's TransFracCal pairs them
// (dst[16 * (m / 2)], dst[16 * (m / 2) + 8]); mode 1 makes srcList[3] point 16 bytes into a block.
extern "C" __global__ __aicore__ void frac_f32(GM_ADDR x, GM_ADDR y, GM_ADDR mode) {
  GlobalTensor<int32_t> gm;
  gm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  Io<float> io(x, y, 128, 32);
  LocalTensor<float> dl[16], sl[16];
  for (int m = 0; m < 16; m += 2) {
    dl[m] = io.dst[16 * (m / 2)];
    dl[m + 1] = io.dst[16 * (m / 2) + 8];
  }
  for (int k = 0; k < 16; k++) sl[k] = io.src[8 * k];
  if (gm.GetValue(0) == 1) sl[3] = io.src[8 * 3 + 4];
  TransDataTo5HD<float>(dl, sl, TransDataTo5HDParams(false, false, 1, 0, 0));
  io.out();
}

// A 32 x 32 uint8_t block transposed by four half-block calls, as CANN's TransFracForB8Cal does; the address
// lists of the last call are LocalTensor<uint64_t> filled by the scalar unit.
extern "C" __global__ __aicore__ void frac_b8(GM_ADDR x, GM_ADDR y) {
  Io<uint8_t> io(x, y, 1024);
  TBuf<TPosition::VECCALC> lists;
  io.pipe.InitBuffer(lists, 256);
  LocalTensor<uint64_t> ld = lists.Get<uint64_t>(), ls = lists.GetWithOffset<uint64_t>(16, 128);
  for (int q = 0; q < 4; ++q) {
    const bool dh = q >= 2, sh = q % 2 == 1;
    uint64_t d[16], s[16];
    for (int m = 0; m < 16; m++) {
      d[m] = (uint64_t)io.dst[(sh ? 512 : 0) + m * 32].GetPhyAddr();
      s[m] = (uint64_t)io.src[(dh ? 512 : 0) + m * 32].GetPhyAddr();
    }
    TransDataTo5HDParams p(dh, sh, 1, 0, 0);
    if (q < 3) {
      TransDataTo5HD<uint8_t>(d, s, p);
    } else {
      for (int m = 0; m < 16; m++) {
        ld.SetValue(m, d[m]);
        ls.SetValue(m, s[m]);
      }
      TransDataTo5HD<uint8_t>(ld, ls, p);
    }
  }
  io.out();
}

// repeatTimes 1 starts at the stride (TransDataTo5HD.md): src list = the first 16 blocks, srcRepStride 16, so
// the 16 x 16 half block read is the second one. mode 1 leaves block 20 of src unwritten (poison).
extern "C" __global__ __aicore__ void repeat_one(GM_ADDR x, GM_ADDR y, GM_ADDR mode) {
  GlobalTensor<int32_t> gm;
  gm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  Io<half> io(x, y, 512);
  Duplicate(io.dst, static_cast<half>(0), 512);  // the first 256 stay 0
  if (gm.GetValue(0) == 1) {
    TBuf<TPosition::VECCALC> fresh;
    io.pipe.InitBuffer(fresh, 1024);
    LocalTensor<half> f = fresh.Get<half>();
    DataCopy(f, io.src, 20 * 16);  // blocks 0..19 written, 20..31 never
    PipeBarrier<PIPE_ALL>();
    io.src = f;
  }
  LocalTensor<half> dl[16], sl[16];
  for (int i = 0; i < 16; i++) {
    dl[i] = io.dst[16 * i];
    sl[i] = io.src[16 * i];
  }
  TransDataTo5HD<half>(dl, sl, TransDataTo5HDParams(false, false, 1, 16, 16));
  io.out();
}

// Transpose 16 x 16 (mode 0: int16_t copy; 1: in place on half); enhanced NCHW -> NHWC / NHWC -> NCHW of the
// page's example (N 3, C 3, H 2, W 8, half) with the tmp the page sizes; mode 4: tmp of 2528 bytes; mode 5: dst = src.
extern "C" __global__ __aicore__ void transpose(GM_ADDR x, GM_ADDR y, GM_ADDR mode) {
  GlobalTensor<int32_t> gm;
  gm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  const int32_t md = gm.GetValue(0);
  if (md <= 1) {
    Io<half> io(x, y, 256);
    if (md == 0) Transpose(io.dst.ReinterpretCast<int16_t>(), io.src.ReinterpretCast<int16_t>());
    else {
      Transpose(io.src, io.src);
      PipeBarrier<PIPE_V>();
      DataCopy(io.dst, io.src, 256);
    }
    io.out();
    return;
  }
  Io<half> io(x, y, 144, 112);
  TBuf<TPosition::VECCALC> tmpb;
  io.pipe.InitBuffer(tmpb, 3584);
  // the page's A2 table: (cSize + 2) * h0 * w0 * 2 = 2560 bytes NCHW -> NHWC, (cSize * 2 + 1) * ... = 3584 back
  LocalTensor<uint8_t> tmp = tmpb.Get<uint8_t>(md == 3 ? 3584 : md == 4 ? 2528 : 2560);
  TransposeParamsExt p(3, 3, 2, 8, md == 3 ? TransposeType::TRANSPOSE_NHWC2NCHW : TransposeType::TRANSPOSE_NCHW2NHWC);
  Transpose(md == 5 ? io.src : io.dst, io.src, tmp, p);
  io.out();
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, nc1hwc0_half, 2);
  OPKIT_EMU_PY_KERNEL(m, frac_f32, 3);
  OPKIT_EMU_PY_KERNEL(m, frac_b8, 2);
  OPKIT_EMU_PY_KERNEL(m, repeat_one, 3);
  OPKIT_EMU_PY_KERNEL(m, transpose, 3);
}
