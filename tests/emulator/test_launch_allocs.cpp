// Heap allocations of a launch (issue 38: a small call's per-launch allocations). Every operator new of the
// process is counted; a kernel with a queue, a TBuf, flags and vector calls runs on the calling thread
// (threads = 1) with 1 and with 8 blocks, checked and fast, after two warm-up launches. The thread's block
// context is reused block after block, so the 8-block launch allocates no more than the 1-block one.
// Prints "allocs <flags> <blocks> <count>" lines and the outputs' check; test_launch.py reads them.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <new>
#include <vector>

#include "kernel_operator.h"

static std::atomic<long> g_news{0};
void* operator new(std::size_t n) {
  ++g_news;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace AscendC;

constexpr uint32_t kElems = 64;

// out[block] = 2 * in[block] + 1 through a queue (EnQue/DeQue), a TBuf and a V->MTE3 flag.
static void kernel(float* in, float* out) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  TBuf<TPosition::VECCALC> tmp;
  pipe.InitBuffer(q, 2, kElems * sizeof(float));
  pipe.InitBuffer(tmp, kElems * sizeof(float));
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer(in + GetBlockIdx() * kElems, kElems);
  go.SetGlobalBuffer(out + GetBlockIdx() * kElems, kElems);
  LocalTensor<float> a = q.AllocTensor<float>();
  DataCopy(a, gi, kElems);
  q.EnQue(a);
  a = q.DeQue<float>();
  LocalTensor<float> t = tmp.Get<float>();
  Muls(t, a, 2.0f, kElems);
  Adds(t, t, 1.0f, kElems);
  q.FreeTensor(a);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(go, t, kElems);
}

// Block 0 leaves its second queue buffer enqueued (a fast launch runs no end-of-kernel check); block 1, on the
// same thread and so the same reused context, copies in to out through the same queue: its DeQue must return
// its own buffer, not block 0's (reset_block empties every fifo).
static void stale_queue_kernel(float* in, float* out) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, kElems * sizeof(float));
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer(in, kElems);
  go.SetGlobalBuffer(out, kElems);
  if (GetBlockIdx() == 0) {
    LocalTensor<float> a = q.AllocTensor<float>(), b = q.AllocTensor<float>();
    Duplicate(b, 7.0f, kElems);
    q.EnQue(b);
    q.FreeTensor(a);
    return;
  }
  LocalTensor<float> a = q.AllocTensor<float>();
  DataCopy(a, gi, kElems);
  q.EnQue(a);
  a = q.DeQue<float>();
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, a, kElems);
  q.FreeTensor(a);
}

static size_t g_long_log_bytes = 0, g_kept_log_bytes = 0;

// A long checked kernel: its hazard log and segments grow to MiBs during the block.
static void long_kernel() {
  TPipe pipe;
  TBuf<TPosition::VECCALC> t;
  pipe.InitBuffer(t, 64 * 1024);
  LocalTensor<float> x = t.Get<float>();
  Duplicate(x, 1.0f, 16 * 1024);
  for (int i = 0; i < 30000; ++i) {
    PipeBarrier<PIPE_V>();
    Adds(x[(i % 256) * 64], x[(i % 256) * 64], 1.0f, 64);
  }
  g_long_log_bytes = opkit_emu::t_ctx->hz.log.capacity() * sizeof(opkit_emu::t_ctx->hz.log[0]);
}

// What the thread's context still holds when its next block starts.
static void probe_kernel() {
  g_kept_log_bytes = opkit_emu::t_ctx->hz.log.capacity() * sizeof(opkit_emu::t_ctx->hz.log[0]);
}

// A launch from inside a block on the same thread: the inner launch must leave the outer block's context (queues,
// UB, t_ctx) as it found them, so the outer block's queue still holds its data.
static const std::vector<opkit_emu::GmRegion>* g_nested_gm;
static float *g_nested_in, *g_nested_out;
static int g_inner_status = -1;
static void nested_inner() {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> q;
  pipe.InitBuffer(q, 1, kElems * sizeof(float));
  LocalTensor<float> a = q.AllocTensor<float>();
  Duplicate(a, 7.0f, kElems);
  q.FreeTensor(a);
}
static void nested_outer() {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> q;
  pipe.InitBuffer(q, 1, kElems * sizeof(float));
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer(g_nested_in, kElems);
  go.SetGlobalBuffer(g_nested_out, kElems);
  LocalTensor<float> a = q.AllocTensor<float>();
  DataCopy(a, gi, kElems);
  g_inner_status = opkit_emu::run_blocks(1, 0, 1, *g_nested_gm, [] { nested_inner(); }).status;
  q.EnQue(a);
  a = q.DeQue<float>();
  PipeBarrier<PIPE_ALL>();
  DataCopy(go, a, kElems);
  q.FreeTensor(a);
}

int main() {
  constexpr uint32_t kMaxBlocks = 8;
  std::vector<float> in(kMaxBlocks * kElems), out(kMaxBlocks * kElems);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 97) - 40.0f;
  const std::vector<opkit_emu::GmRegion> gm = {
      {reinterpret_cast<const uint8_t*>(in.data()), in.size() * sizeof(float), 0, in.size() * sizeof(float)},
      {reinterpret_cast<const uint8_t*>(out.data()), out.size() * sizeof(float), 1, out.size() * sizeof(float)}};
  auto body = [&]() { kernel(in.data(), out.data()); };
  int bad = 0;
  for (uint32_t flags : {0u, static_cast<uint32_t>(OPKIT_LAUNCH_FAST)}) {
    for (uint32_t blocks : {1u, kMaxBlocks}) {
      for (int w = 0; w < 2; ++w)  // warm-up: the thread's containers (and their spare lists) grow here
        opkit_emu::run_blocks(blocks, 0, 1, gm, body, flags);
      // A launch that wrote nothing must not pass on the earlier launches' outputs.
      std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
      const long before = g_news.load();
      const opkit_emu::LaunchOutcome o = opkit_emu::run_blocks(blocks, 0, 1, gm, body, flags);
      const long n = g_news.load() - before;
      if (o.status != 0) {
        std::printf("launch failed: %s\n", o.violation ? o.violation->what() : o.error.c_str());
        return 1;
      }
      for (uint32_t i = 0; i < blocks * kElems; ++i) bad += out[i] != 2.0f * in[i] + 1.0f;
      std::printf("allocs %u %u %ld\n", flags, blocks, n);
    }
  }
  std::printf("mismatches %d\n", bad);

  std::vector<float> sin(kElems, 1.5f), sout(kElems, 0.0f);
  const std::vector<opkit_emu::GmRegion> sgm = {
      {reinterpret_cast<const uint8_t*>(sin.data()), kElems * sizeof(float), 0, kElems * sizeof(float)},
      {reinterpret_cast<const uint8_t*>(sout.data()), kElems * sizeof(float), 1, kElems * sizeof(float)}};
  const opkit_emu::LaunchOutcome so = opkit_emu::run_blocks(
      2, 0, 1, sgm, [&]() { stale_queue_kernel(sin.data(), sout.data()); }, OPKIT_LAUNCH_FAST);
  int stale = so.status != 0;
  for (float v : sout) stale += v != 1.5f;
  const float stale_out0 = sout[0];
  // The reused context must not keep a long block's hazard log (MiBs) for the thread's life (trim_block).
  const opkit_emu::LaunchOutcome lo = opkit_emu::run_blocks(1, 0, 1, sgm, [] { long_kernel(); });
  const opkit_emu::LaunchOutcome po = opkit_emu::run_blocks(1, 0, 1, sgm, [] { probe_kernel(); });
  std::printf("long status %d %d log %zu KiB, next block starts with %zu KiB\n", lo.status, po.status,
              g_long_log_bytes / 1024, g_kept_log_bytes / 1024);
  std::fill(sout.begin(), sout.end(), 0.0f);
  g_nested_gm = &sgm;
  g_nested_in = sin.data();
  g_nested_out = sout.data();
  const opkit_emu::LaunchOutcome no = opkit_emu::run_blocks(1, 0, 1, sgm, [] { nested_outer(); });
  int nested_bad = no.status != 0 || g_inner_status != 0;
  for (float v : sout) nested_bad += v != 1.5f;
  std::printf("nested %d (inner %d, outer %d %s)\n", nested_bad, g_inner_status, no.status,
              no.violation ? no.violation->what() : no.error.c_str());
  std::printf("stale queue %d (status %d, out[0] %g, want 1.5)\n", stale, so.status, stale_out0);
  return 0;
}
