// y = x / sum(x) over all blocks: each block sums its slice (ReduceSum), publishes the partial sum in
// the user workspace, SyncAll, then every block adds the partials and scales its slice. The scalar
// unit reads vector results only after a V->S flag (lower-case set_flag / wait_flag). Written here in
// the style of the SyncAll example of the AscendC API docs (see ../README.md).
#include "kernel_operator.h"
using namespace AscendC;

struct NormalizeTiling {
  uint32_t blockLength;  // elements per block, a multiple of 8
};

extern "C" __global__ __aicore__ void normalize_syncall(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(NormalizeTiling, t, tiling);
  SetSysWorkspace(workspace);
  GM_ADDR usr = GetUserWorkspace(workspace);
  const uint32_t n = t.blockLength;
  GlobalTensor<float> xGm, yGm, partGm;
  xGm.SetGlobalBuffer((__gm__ float*)x + n * block_idx, n);
  yGm.SetGlobalBuffer((__gm__ float*)y + n * block_idx, n);
  partGm.SetGlobalBuffer((__gm__ float*)usr, 8 * block_num);  // one 32-byte slot per block
  TPipe pipe;
  TBuf<TPosition::VECCALC> xb, rb, pb;
  pipe.InitBuffer(xb, n * sizeof(float));
  pipe.InitBuffer(rb, 64 * sizeof(float));
  pipe.InitBuffer(pb, AlignUp(8 * block_num * sizeof(float), 32));
  LocalTensor<float> xl = xb.Get<float>(), r = rb.Get<float>(), parts = pb.Get<float>();
  DataCopy(xl, xGm, n);
  set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
  ReduceSum(r, xl, r[16], static_cast<int32_t>(n));  // r[16..64) is the shared tmp
  Duplicate(r[8], 0.0f, 8);
  set_flag(PIPE_V, PIPE_S, EVENT_ID0);
  wait_flag(PIPE_V, PIPE_S, EVENT_ID0);
  r.SetValue(8, r.GetValue(0));  // the partial sum, alone in a 32-byte slot
  set_flag(PIPE_S, PIPE_MTE3, EVENT_ID0);
  wait_flag(PIPE_S, PIPE_MTE3, EVENT_ID0);
  DataCopy(partGm[8 * block_idx], r[8], 8);
  SyncAll();
  DataCopy(parts, partGm, 8 * block_num);
  set_flag(PIPE_MTE2, PIPE_S, EVENT_ID0);
  wait_flag(PIPE_MTE2, PIPE_S, EVENT_ID0);
  float total = 0.0f;
  for (int64_t b = 0; b < block_num; ++b) total += parts.GetValue(8 * b);
  set_flag(PIPE_S, PIPE_V, EVENT_ID0);
  wait_flag(PIPE_S, PIPE_V, EVENT_ID0);
  Muls(xl, xl, 1.0f / total, static_cast<int32_t>(n));
  pipe_barrier(PIPE_ALL);
  DataCopy(yGm, xl, n);
}
