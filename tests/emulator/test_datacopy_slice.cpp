// DataCopy with SliceInfo (test_datacopy_slice.py): the page's example, GM (3 x 87 float) -> UB (2 x 48) and
// back into a zeroed 3 x 87 GM; CASE picks a broken call instead (each must stop with its rule).
#include "kernel_operator.h"
#include "tikicpulib.h"
#include <cstdio>
using namespace AscendC;
#ifndef CASE
#define CASE 0
#endif
extern "C" __global__ __aicore__ void slice(GM_ADDR x, GM_ADDR y) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 2 * 48 * sizeof(float) + 64);
  LocalTensor<float> u = b.Get<float>();
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x, 3 * 87);
  gy.SetGlobalBuffer((__gm__ float*)y, 3 * 87);
  // the page's 调用示例: rows 0 and 2, in each two bursts of 3 blocks (24 floats) 7 elements apart from column 16
  SliceInfo gm[] = {{16, 70, 7, 3, 87}, {0, 2, 1, 1, 3}};
  SliceInfo ub[] = {{0, 47, 0, 3, 48}, {0, 1, 0, 1, 2}};
#if CASE == 1  // N would not be whole: 16..69 is 54 elements
  gm[0].endIndex = 69;
#elif CASE == 2  // UB stride of 4 floats = 16 bytes: the device counts it in 32-byte blocks
  ub[0] = SliceInfo(0, 51, 4, 3, 52);
#elif CASE == 3  // burstLen differs between the two sides
  ub[0] = SliceInfo(0, 47, 0, 2, 48);
#elif CASE == 4  // beyond dimension 0, burstLen must be 1
  gm[1].burstLen = 2;
  ub[1].burstLen = 2;
#elif CASE == 5  // dst shape smaller than the UB tensor: the UB tensor is 4 rows' worth short
  u = u[32];
  ub[0] = SliceInfo(0, 47, 0, 3, 48);
  ub[1] = SliceInfo(1, 2, 0, 1, 3);
#elif CASE == 6  // src rows past the GM buffer: shape claims 4 rows of 87
  gm[1] = SliceInfo(1, 3, 1, 1, 4);
#endif
#if CASE == 7  // 3-D, x as (4, 3, 16) row-major: x[{0, 2}, 1, :] (one-row dimensions, start == end, as
               // ascendc-homework's LogSumExp writes them); shapes from SetShapeInfo (shapeValue 0, impl :631)
  const uint32_t gshape[] = {16, 3, 4}, ushape[] = {16, 1, 2};
  gx.SetShapeInfo(ShapeInfo(3, gshape));
  gy.SetShapeInfo(ShapeInfo(3, gshape));
  u.SetShapeInfo(ShapeInfo(3, ushape));
  SliceInfo g3[] = {{0, 15, 0, 2}, {1, 1, 0, 1}, {0, 2, 1, 1}};
  SliceInfo u3[] = {{0, 15, 0, 2}, {0, 0, 0, 1}, {0, 1, 0, 1}};
  DataCopy(u, gx, u3, g3, 3);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, u, g3, u3, 3);
#else
  DataCopy(u, gx, ub, gm, 2);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, u, gm, ub, 2);
#endif
}
int main() {
  auto* x = (float*)GmAlloc(3 * 87 * 4);
  auto* y = (float*)GmAlloc(3 * 87 * 4);
  for (int i = 0; i < 3 * 87; ++i) { x[i] = float(i); y[i] = -1.0f; }
  SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(slice, 1, (uint8_t*)x, (uint8_t*)y);
  for (int i = 0; i < 3 * 87; ++i) std::printf("%g ", y[i]);
  std::printf("\n");
}
