// int4b_t tensors (test_int4b.py). Built standalone, once per MODE; MODE 0 reads x.bin from argv[1] and writes
// p4.bin (count-form Cast half -> int4b_t, CAST_RINT, 255 elements: odd), back.bin (int4b_t -> half of 256),
// l0.bin (level-0 Cast half -> int4b_t, CAST_FLOOR, mask 128, 2 repeats, {1, 1, 2, 8}), aq.bin (AscendAntiQuant
// from int4b_t, scalar offset 1.5 and scale 0.25) and sc.bin (scalar reads).
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
#include <vector>
using namespace AscendC;
constexpr uint32_t N = 256;
extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR p4, GM_ADDR back, GM_ADDR l0, GM_ADDR sc, GM_ADDR aq) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> bx, b4, bh, bl, bq;
  pipe.InitBuffer(bq, N * 2);
  pipe.InitBuffer(bx, N * 2);
  pipe.InitBuffer(b4, N / 2);
  pipe.InitBuffer(bh, N * 2);
  pipe.InitBuffer(bl, N / 2);
  GlobalTensor<half> gx, gback, gaq;
  gaq.SetGlobalBuffer((__gm__ half*)aq, N);
  GlobalTensor<int4b_t> gp4, gl0;
  GlobalTensor<int32_t> gsc;
  gx.SetGlobalBuffer((__gm__ half*)x, N);
  gp4.SetGlobalBuffer((__gm__ int4b_t*)p4, N);
  gback.SetGlobalBuffer((__gm__ half*)back, N);
  gl0.SetGlobalBuffer((__gm__ int4b_t*)l0, N);
  gsc.SetGlobalBuffer((__gm__ int32_t*)sc, 16);
  LocalTensor<half> ux = bx.Get<half>();
  LocalTensor<int4b_t> u4 = b4.Get<int4b_t>(N);
  LocalTensor<half> uh = bh.Get<half>();
  LocalTensor<int4b_t> ul = bl.Get<int4b_t>();
  DataCopy(ux, gx, N);
  PipeBarrier<PIPE_ALL>();
  if (MODE == 18) {  // a copy past a 100-element int4b_t view (inside the GM buffer): a gm-bounds warning
    GlobalTensor<int4b_t> g;
    g.SetGlobalBuffer((__gm__ int4b_t*)p4, 100);
    Duplicate(u4.ReinterpretCast<int16_t>(), int16_t(0), N / 4);
    PipeBarrier<PIPE_ALL>();
    DataCopy(g, u4, 64);
    return;
  }
  if (MODE == 19) {  // level 0 with dstBlkStride 2: a repeat's two 64-element DataBlocks 128 elements apart
    Duplicate(ul.ReinterpretCast<int16_t>(), int16_t(0x7777), N / 4);
    PipeBarrier<PIPE_ALL>();
    Cast<int4b_t, half>(ul, ux, RoundMode::CAST_FLOOR, 128, 1, {2, 1, 4, 8});
    PipeBarrier<PIPE_ALL>();
    DataCopy(gl0, ul, N / 2);
    return;
  }
  if (MODE == 13) {  // odd-count Cast into a fresh int4b_t buffer: the last byte's high nibble nothing wrote
    Cast(u4, ux, RoundMode::CAST_RINT, N - 1);
    PipeBarrier<PIPE_ALL>();
    DataCopy(gp4, u4, N / 2);
    return;
  }
  if (MODE == 14 || MODE == 15) {  // level 0, one byte read back whole: 14 writes lane 0 of a fresh byte only;
    LocalTensor<half> uy = bq.Get<half>();  // 15 writes lanes 0 (source nothing wrote) and 1 (written) of a set byte
    if (MODE == 15) {
      Duplicate(ul.ReinterpretCast<int16_t>(), int16_t(0), N / 4);
      uy.SetValue(1, half(3.0f));
    }
    PipeBarrier<PIPE_ALL>();
    Cast<int4b_t, half>(ul, MODE == 14 ? ux : uy, RoundMode::CAST_FLOOR, MODE == 14 ? 1 : 2, 1, {1, 1, 2, 8});
    PipeBarrier<PIPE_ALL>();
    gsc.SetValue(0, int32_t(ul.ReinterpretCast<uint8_t>().GetValue(0)));
    return;
  }
  if (MODE == 11 || MODE == 12) {  // Cast of a half tile whose first 128 lanes only were written, both ways
    LocalTensor<half> uy = bq.Get<half>();
    DataCopy(uy, gx, N / 2);
    PipeBarrier<PIPE_ALL>();
    Cast(u4, uy, RoundMode::CAST_RINT, N);
    PipeBarrier<PIPE_ALL>();
    Cast(uh, u4, RoundMode::CAST_NONE, N);
    PipeBarrier<PIPE_ALL>();
    // MODE 11 copies out the written part only (fine); MODE 12 all of it (ub-uninitialized)
    DataCopy(gp4, u4, MODE == 11 ? N / 4 : N / 2);
    DataCopy(gback, uh, MODE == 11 ? N / 2 : N);
    return;
  }
  if (MODE == 7) {  // an int4b_t buffer nothing wrote, cast and copied out
    Cast(uh, ul, RoundMode::CAST_NONE, N);
    PipeBarrier<PIPE_ALL>();
    DataCopy(gback, uh, N);
    return;
  }
  Duplicate(u4.ReinterpretCast<int16_t>(), int16_t(0x7777), N / 4);  // element 255's byte: high nibble 7
  PipeBarrier<PIPE_ALL>();
  Cast(u4, ux, RoundMode::CAST_RINT, MODE == 4 ? 0 : N - 1);
  if (MODE == 4) Cast(u4, ux, RoundMode::CAST_ODD, N);
  PipeBarrier<PIPE_ALL>();
  if (MODE == 3) Cast(uh, u4, RoundMode::CAST_RINT, N);
  Cast(uh, u4, RoundMode::CAST_NONE, N);
  Cast<int4b_t, half>(ul, ux, RoundMode::CAST_FLOOR, 128, 2, {1, 1, 2, 8});
  PipeBarrier<PIPE_ALL>();
  LocalTensor<half> uq = bq.Get<half>();
  AscendAntiQuant<int4b_t, half, false>(uq, u4, half(1.5f), half(0.25f), 2);  // k 2 rows of N 128
  PipeBarrier<PIPE_ALL>();
  DataCopy(gaq, uq, N);
  // DataCopy's count for int4b_t is in bytes on A2 (sizeof(int4b_t) units): N / 2
  DataCopy(gp4, u4, MODE == 6 ? 40 : N / 2);
  DataCopy(gback, uh, N);
  DataCopy(gl0, ul, N / 2);
  PipeBarrier<PIPE_ALL>();
  // scalar side: sizes, views, GetValue / SetValue of both nibbles, GlobalTensor views
  LocalTensor<int4b_t> v = u4[64];
  gsc.SetValue(0, int32_t(u4.GetSize()));
  gsc.SetValue(1, int32_t(v.GetSize()));
  gsc.SetValue(2, int32_t(int8_t(v.GetValue(1))));           // element 65
  u4.SetValue(6, int4b_t(-5));
  u4.SetValue(7, int4b_t(3));
  gsc.SetValue(3, int32_t(int8_t(u4.GetValue(6))));
  gsc.SetValue(4, int32_t(int8_t(u4.GetValue(7))));
  gsc.SetValue(5, int32_t(u4.ReinterpretCast<uint8_t>().GetValue(3)));  // byte 3: 0x3b
  gsc.SetValue(6, int32_t(int8_t(gp4[10].GetValue(1))));     // element 11 from GM
  gp4.SetValue(1, int4b_t(-8));
  gsc.SetValue(7, int32_t(int8_t(gp4.GetValue(1))));
  gsc.SetValue(8, int32_t(gp4.GetSize()));
  u4.SetSize(100);
  gsc.SetValue(9, int32_t(u4.GetSize()));
  gsc.SetValue(10, int32_t(sizeof(int4b_t)));
  if (MODE == 1) { LocalTensor<int4b_t> odd = u4[3]; (void)odd; }
  if (MODE == 2) u4.SetSize(5);
  if (MODE == 9) { GlobalTensor<int4b_t> g = gp4[3]; (void)g; }
  if (MODE == 10) { LocalTensor<int4b_t> t(TPosition::VECCALC, 0, 7); (void)t; }
  if (MODE == 5) (void)u4.GetValue(100);
  if (MODE == 16) (void)b4.Get<int4b_t>(5);
  if (MODE == 17) (void)b4.GetWithOffset<int4b_t>(7, 0);
#if MODE == 8
  LocalTensor<float> f = bh.Get<float>();
  Cast(f, u4, RoundMode::CAST_NONE, 64);
#endif
}
int main(int argc, char** argv) {
  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  std::string dir = argc > 1 ? argv[1] : ".";
  auto* x = (uint8_t*)AscendC::GmAlloc(N * 2);
  auto* p4 = (uint8_t*)AscendC::GmAlloc(N / 2);
  auto* back = (uint8_t*)AscendC::GmAlloc(N * 2);
  auto* l0 = (uint8_t*)AscendC::GmAlloc(N / 2);
  auto* sc = (uint8_t*)AscendC::GmAlloc(64);
  auto* aq = (uint8_t*)AscendC::GmAlloc(N * 2);
  FILE* f = std::fopen((dir + "/x.bin").c_str(), "rb");
  if (!f || std::fread(x, 1, N * 2, f) != N * 2) return 3;
  std::fclose(f);
  memset(p4, 0, N / 2); memset(back, 0, N * 2); memset(l0, 0, N / 2); memset(sc, 0, 64);
  ICPU_RUN_KF(k, 1, x, p4, back, l0, sc, aq);
  auto put = [&](const char* n, const uint8_t* p, size_t b) {
    FILE* o = std::fopen((dir + "/" + n).c_str(), "wb");
    std::fwrite(p, 1, b, o);
    std::fclose(o);
  };
  if (MODE == 19) { put("l0.bin", l0, N / 2); return 0; }
  put("p4.bin", p4, N / 2); put("back.bin", back, N * 2); put("l0.bin", l0, N / 2); put("sc.bin", sc, 64); put("aq.bin", aq, N * 2);
}
