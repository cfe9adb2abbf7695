// Kernel of test_data_extent.py: a UB->GM copy whose last 32-byte block is only partly written in UB, as ops-nn
// ReluV3 float16 copies out its last tile (op_kernel/relu_v3.h:148-149,155 at e5c3fa93). tiling = {mode, n}:
//   mode 0: Duplicate n halves, DataCopy the n rounded up to 16 (one 32-byte block);
//   mode 1: the same under SetAtomicAdd<half> (the deferred atomic copy checks poison at the same sink);
//   mode 2: DataCopyPad of 2 rows of 64 bytes (GM pitch 64) with only the first n halves written;
//   mode 3: strided DataCopy, 3 rows of 32 B, dstGap 1 (GM pitch 64), the first n halves written;
//   mode 4: DataCopyPad, 3 rows of 20 B, dstStride 12 (GM pitch 32; UB rows 32 B), the first n halves written;
//   mode 5: mode 0's tail into y's padding, then y's last block [208, 224) loaded back and copied into y[0, 16);
//   mode 6: as 5, but the padding is written again with defined halves before the load;
//   mode 7: the load and copy of mode 5 with nothing written into the padding (garbage from the launch's start);
//   mode 8: mode 0's tail, then all 224 halves loaded, doubled (Muls) and stored back the same way;
//   mode 9: y as a tensor list of two 480-byte members (each 216 halves of data): mode 0's tail into each;
//   mode 10: the same list, one copy from member 0's padding into member 1's data (t[208, 240) to y[224, 256));
//   mode 11: the same list: mode 0's tail into member 0, then one defined copy over y[208, 256) (member 0's last
//            data block, all of its padding, member 1's first block), then y[208, 224) loaded back into y[0, 16);
//   mode 12: as 11 with the crossing copy atomic (SetAtomicAdd<half>): it adds, so the padding stays garbage;
//   mode 13: y as an empty tensor's 32-byte device buffer: one block of UB nothing wrote copied into it (not when n
//            is 2); then that block loaded back and read as a scalar when n is 1 or 2;
//   mode 14: mode 0's tail into y's padding, then y[220] (in it) read by GlobalTensor::GetValue;
//   mode 15: as 14, but the 8 garbage halves y[216, 224) are first written by GlobalTensor::SetValue, then y[220]
//            is read and y[208, 224) is loaded back into y[0, 16).
//   mode 16: the list of 9: mode 0's tail into member 0, then one load across members (y[208, 256): member 0's last
//            data block, all of its padding, member 1's first block) into u, and u[0, 16) stored into y[0, 16);
//   mode 17: the same load across members, stored back to y[208, 256) (a round trip the device is fine with);
//   mode 18: the list of 9: one copy across members from u with u[0, 8) and u[32, 48) written (u[32, 40) only when
//            n is 218; u[0, 8) not when n is 219): member 0's last data halves, its padding (garbage) and member 1's
//            first block; when n is 217, y[208, 224) is then loaded back into y[0, 16).
//   mode 19: the list of 9: DataCopyPad of 2 rows of 32 B from u (u[16, 32) written, u[16, 24) only when n is 218)
//            to y[224, 256): row 0 (garbage) all in member 0's padding, row 1 member 1's first block.
//   mode 20: mode 0's tail into y's padding (garbage in bytes [440, 448) whatever n is up to 220), then y as
//            int4b_t (two elements to a byte: byte 440 holds elements 880 low, 881 high), v = n - 216: v 0 reads 880;
//            v 1 writes 880 and reads it; v 2 writes 880 and reads 881; v 3 writes both and reads 881.
//   mode 21: the list of 9: mode 0's tail into member 0, then a DataCopyPad load of 2 rows of 48 halves into u:
//            row 0 y[112, 160) (member 0's data), row 1 y[208, 256) (its last data block, its padding, member 1's
//            first block); then u[0, 96) (both rows) stored into y[0, 96) when n is 216, u[0, 48) (row 0) otherwise.
//   mode 22: mode 0's tail into y's padding, then y[208, 224) loaded by a 1-row DataCopyPad and copied into y[0, 16)
//            (mode 5 with DataCopyPad for the load).
//   mode 23: padding nobody wrote, loaded with the data as an aligned tail: y[0, 224) loaded into u and doubled
//            (Muls), then n 216: stored back as 224 halves (the garbage lanes into padding); 217: stored back as the
//            216 halves of data (DataCopyPad); 218: ReduceSum of all 224 halves stored into y[0, 16); 219: ReduceSum
//            of the 216 halves of data stored the same way.
//   mode 24: y[220] (padding nobody wrote) read by GlobalTensor::GetValue.
//   mode 25: mode 0's tail into y's padding, then InitOutput of 240 halves of 2 over y (its data and all of its
//            padding), then y[208, 224) loaded back into y[0, 16); under SetAtomicAdd<half> when n is 217.
//   mode 26: padding nobody wrote, loaded with the data as an aligned tail (y[0, 224) into u, doubled), then used
//            under a mask that leaves it out: n 0, WholeReduceSum of u[128, 256) with mask 88 (data y[128, 216),
//            padding after) into t[0]; n 1, Compare of u[96, 224) > 1 and Select of u or t by it (128 lanes; data
//            y[96, 214) with data_bytes 428, so one mask byte holds data lanes 208..213 and padding 214, 215), the
//            selected data lanes stored into y[96, 214) (DataCopyPad); n 0 stores t[0, 16) into y[0, 16); n 2 is
//            n 0 with mask 96, which takes in 8 padding lanes.
#include "kernel_operator.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void emu_data_extent(GM_ADDR y, GM_ADDR tiling) {
  const uint32_t mode = reinterpret_cast<__gm__ uint32_t*>(tiling)[0];
  const uint32_t n = reinterpret_cast<__gm__ uint32_t*>(tiling)[1];
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf, buf2, buf3;
  pipe.InitBuffer(buf, 512);
  pipe.InitBuffer(buf2, 512);
  pipe.InitBuffer(buf3, 512);
  LocalTensor<half> t = buf.Get<half>();
  LocalTensor<half> u = buf2.Get<half>();
  GlobalTensor<half> yg;
  yg.SetGlobalBuffer((__gm__ half*)y, mode >= 9 ? 480 : 256);
  Duplicate(t, half(1.0f), n);
  PipeBarrier<PIPE_ALL>();
  if (mode == 23) {
    DataCopy(u, yg, 224);
    PipeBarrier<PIPE_ALL>();
    Muls(u, u, half(2.0f), 224);
    PipeBarrier<PIPE_ALL>();
    if (n == 216) {
      DataCopy(yg, u, 224);
    } else if (n == 217) {
      DataCopyPad(yg, u, DataCopyExtParams(1, 432, 0, 0, 0));
    } else {
      LocalTensor<half> w = buf3.Get<half>();
      ReduceSum(t, u, w, n == 218 ? 224 : 216);
      PipeBarrier<PIPE_ALL>();
      DataCopy(yg, t, 16);
    }
    return;
  }
  if (mode == 26) {
    DataCopy(u, yg, 224);
    PipeBarrier<PIPE_ALL>();
    Muls(u, u, half(2.0f), 224);
    PipeBarrier<PIPE_ALL>();
    if (n != 1) {
      Duplicate(t, half(0.0f), 16);
      PipeBarrier<PIPE_ALL>();
      WholeReduceSum(t, u[128], n == 2 ? 96 : 88, 1, 1, 1, 8);
      PipeBarrier<PIPE_ALL>();
      DataCopy(yg, t, 16);
    } else {
      Duplicate(t, half(1.0f), 128);
      LocalTensor<uint8_t> m = buf3.Get<uint8_t>();
      LocalTensor<half> o = buf3.Get<half>()[64];  // after the mask's 16 bytes, 32-byte aligned
      PipeBarrier<PIPE_ALL>();
      Compare(m, u[96], t, CMPMODE::GT, 128);
      PipeBarrier<PIPE_ALL>();
      Select(o, m, u[96], t, SELMODE::VSEL_TENSOR_TENSOR_MODE, 128);
      PipeBarrier<PIPE_ALL>();
      DataCopyPad(yg[96], o, DataCopyExtParams(1, 236, 0, 0, 0));
    }
    return;
  }
  if (mode == 24) {
    (void)yg.GetValue(220);
    return;
  }
  if (mode == 25) {
    DataCopy(yg, t, (n + 15) / 16 * 16);
    PipeBarrier<PIPE_ALL>();
    if (n == 217) SetAtomicAdd<half>();
    InitOutput(yg, 240, half(2.0f));
    if (n == 217) SetAtomicNone();
    PipeBarrier<PIPE_ALL>();
    DataCopy(u, yg[208], 16);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, u, 16);
    return;
  }
  if (mode == 9) {
    DataCopy(yg, t, (n + 15) / 16 * 16);
    DataCopy(yg[240], t, (n + 15) / 16 * 16);
    return;
  }
  if (mode == 14 || mode == 15) {
    DataCopy(yg, t, (n + 15) / 16 * 16);
    PipeBarrier<PIPE_ALL>();
    if (mode == 15)
      for (uint32_t i = 216; i < 224; ++i) yg.SetValue(i, half(3.0f));
    (void)yg.GetValue(220);
    if (mode == 14) return;
    DataCopy(u, yg[208], 16);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, u, 16);
    return;
  }
  if (mode == 16 || mode == 17) {
    DataCopy(yg, t, (n + 15) / 16 * 16);
    PipeBarrier<PIPE_ALL>();
    DataCopy(u, yg[208], 48);
    PipeBarrier<PIPE_ALL>();
    if (mode == 16) DataCopy(yg, u, 16);
    else DataCopy(yg[208], u, 48);
    return;
  }
  if (mode == 18) {
    if (n != 219) Duplicate(u, half(4.0f), 8);
    Duplicate(u[32], half(5.0f), n == 218 ? 8 : 16);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg[208], u, 48);
    if (n != 217) return;
    PipeBarrier<PIPE_ALL>();
    DataCopy(t, yg[208], 16);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, t, 16);
    return;
  }
  if (mode == 19) {
    Duplicate(u[16], half(6.0f), n == 218 ? 8 : 16);
    PipeBarrier<PIPE_ALL>();
    DataCopyPad(yg[224], u, DataCopyExtParams(2, 32, 0, 0, 0));
    return;
  }
  if (mode == 21) {
    DataCopy(yg, t, (n + 15) / 16 * 16);
    PipeBarrier<PIPE_ALL>();
    DataCopyPad(u, yg[112], DataCopyExtParams(2, 96, 96, 0, 0), DataCopyPadExtParams<half>());
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, u, n == 216 ? 96 : 48);
    return;
  }
  if (mode == 22) {
    DataCopy(yg, t, (n + 15) / 16 * 16);
    PipeBarrier<PIPE_ALL>();
    DataCopyPad(u, yg[208], DataCopyExtParams(1, 32, 0, 0, 0), DataCopyPadExtParams<half>());
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, u, 16);
    return;
  }
  if (mode == 20) {
    const uint32_t v = n - 216;
    DataCopy(yg, t, 224);
    PipeBarrier<PIPE_ALL>();
    GlobalTensor<int4b_t> y4;
    y4.SetGlobalBuffer((__gm__ int4b_t*)y, 960);
    if (v >= 1) y4.SetValue(880, int4b_t(1));
    if (v == 3) y4.SetValue(881, int4b_t(2));
    (void)y4.GetValue(v <= 1 ? 880 : 881);
    return;
  }
  if (mode == 13) {
    if (n != 2) DataCopy(yg, u, 16);
    if (n != 1 && n != 2) return;
    PipeBarrier<PIPE_ALL>();
    DataCopy(t, yg, 16);
    PipeBarrier<PIPE_ALL>();
    (void)t.GetValue(0);
    return;
  }
  if (mode == 11 || mode == 12) {
    DataCopy(yg, t, (n + 15) / 16 * 16);
    PipeBarrier<PIPE_ALL>();
    Duplicate(t, half(2.0f), 48);
    PipeBarrier<PIPE_ALL>();
    if (mode == 12) SetAtomicAdd<half>();
    DataCopy(yg[208], t, 48);
    if (mode == 12) SetAtomicNone();
    PipeBarrier<PIPE_ALL>();
    DataCopy(u, yg[208], 16);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, u, 16);
    return;
  }
  if (mode == 10) {
    DataCopy(yg[224], t[208], 32);
    return;
  }
  if (mode == 2) {
    DataCopyPad(yg, t, DataCopyExtParams(2, 64, 0, 0, 0));
    return;
  }
  if (mode == 3) {
    DataCopyParams p;
    p.blockCount = 3;
    p.blockLen = 1;
    p.srcGap = 0;
    p.dstGap = 1;
    DataCopy(yg, t, p);
    return;
  }
  if (mode == 4) {
    DataCopyPad(yg, t, DataCopyExtParams(3, 20, 0, 12, 0));
    return;
  }
  if (mode >= 5) {
    if (mode != 7) DataCopy(yg, t, (n + 15) / 16 * 16);
    PipeBarrier<PIPE_ALL>();
    if (mode == 6) {
      Duplicate(t, half(2.0f), 224);
      PipeBarrier<PIPE_ALL>();
      DataCopy(yg, t, 224);
      PipeBarrier<PIPE_ALL>();
    }
    if (mode == 8) {
      DataCopy(u, yg, 224);
      PipeBarrier<PIPE_ALL>();
      Muls(u, u, half(2.0f), 224);
      PipeBarrier<PIPE_ALL>();
      DataCopy(yg, u, 224);
      return;
    }
    DataCopy(u, yg[208], 16);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, u, 16);
    return;
  }
  if (mode == 1) SetAtomicAdd<half>();
  DataCopy(yg, t, (n + 15) / 16 * 16);
  if (mode == 1) SetAtomicNone();
}
