// PipeBarrier / SetFlag / WaitFlag. The emulator runs instructions in program order; these check pairing
// (facts sheet §1 "Sync": a WaitFlag needs an earlier SetFlag on the same event and id, otherwise the NPU
// would wait forever; every SetFlag must be waited before the kernel ends) and carry the ordering they
// create between pipes to the hazard tracker (hazard.h): SetFlag<SRC_DST> hands over what pipe SRC has
// done, WaitFlag<SRC_DST> makes pipe DST wait for it; PipeBarrier<PIPE_ALL> drains every pipe.
// The lower-case intrinsics older kernels call (set_flag / wait_flag with a pipe pair, pipe_barrier) and
// TQueSync<src, dst> map to the HardEvent of their pipe pair, so they are checked the same way.
#pragma once
#include "opkit_emu/tpipe.h"

enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_FIX };
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

namespace opkit_emu {
inline const char* event_name(AscendC::HardEvent e) {
  static const char* n[] = {"MTE2_MTE1", "MTE1_MTE2", "MTE1_M", "M_MTE1", "MTE2_V", "V_MTE2", "MTE3_V", "V_MTE3",
                            "M_V", "V_M", "V_V", "MTE3_MTE1", "MTE1_MTE3", "MTE1_V", "MTE2_M", "M_MTE2", "V_MTE1",
                            "M_FIX", "FIX_M", "MTE3_MTE2", "MTE2_MTE3", "S_V", "V_S", "S_MTE2", "MTE2_S", "S_MTE3",
                            "MTE3_S", "MTE2_FIX", "FIX_MTE2", "FIX_S", "M_S", "FIX_MTE3", "MTE1_FIX", "FIX_MTE1",
                            "FIX_FIX", "MAX"};
  return n[static_cast<int>(e)];
}
// The UB pipes (hazard.h) an event orders; false for events between other units (cube, FIX, MTE1).
inline bool event_pipes(AscendC::HardEvent e, int& src, int& dst) {
  using E = AscendC::HardEvent;
  constexpr int S = 0, V = 1, M2 = 2, M3 = 3;
  switch (e) {
    case E::MTE2_V: src = M2; dst = V; return true;
    case E::V_MTE2: src = V; dst = M2; return true;
    case E::MTE3_V: src = M3; dst = V; return true;
    case E::V_MTE3: src = V; dst = M3; return true;
    case E::MTE3_MTE2: src = M3; dst = M2; return true;
    case E::MTE2_MTE3: src = M2; dst = M3; return true;
    case E::S_V: src = S; dst = V; return true;
    case E::V_S: src = V; dst = S; return true;
    case E::S_MTE2: src = S; dst = M2; return true;
    case E::MTE2_S: src = M2; dst = S; return true;
    case E::S_MTE3: src = S; dst = M3; return true;
    case E::MTE3_S: src = M3; dst = S; return true;
    default: return false;
  }
}
OPKIT_EMU_RT FlagRec& flag(AscendC::HardEvent e, int32_t id, const char* call, SrcLoc loc);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT FlagRec& flag(AscendC::HardEvent e, int32_t id, const char* call, SrcLoc loc) {
  if (id < 0 || id >= 8)
    fail("sync-pairing", call, loc, strf("event id %d is out of range [0, 8)", id));
  return ctx().flags.at(static_cast<int>(e), id);
}
#endif
// SetFlag / WaitFlag of one event (the templates below pass theirs): compiled once (OPKIT_EMU_RT), not per event
// and module.
OPKIT_EMU_RT void set_flag_event(AscendC::HardEvent event, int32_t eventID, SrcLoc loc);
OPKIT_EMU_RT void wait_flag_event(AscendC::HardEvent event, int32_t eventID, SrcLoc loc);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void set_flag_event(AscendC::HardEvent event, int32_t eventID, SrcLoc loc) {
  FlagRec& f = flag(event, eventID, "SetFlag", loc);
  f.count++;
  f.last_set = loc;
  int src, dst;
  if (ctx().checks && event_pipes(event, src, dst)) f.pending.push_back(ctx().hz.snapshot(src));
}
OPKIT_EMU_RT void wait_flag_event(AscendC::HardEvent event, int32_t eventID, SrcLoc loc) {
  FlagRec& f = flag(event, eventID, "WaitFlag", loc);
  if (f.count <= 0)
    fail("sync-pairing", "WaitFlag", loc,
         strf("WaitFlag<HardEvent::%s>(%d) has no matching SetFlag before it (the NPU would wait forever)",
              event_name(event), eventID));
  f.count--;
  int src, dst;
  if (event_pipes(event, src, dst) && !f.pending.empty()) {
    ctx().hz.wait(dst, f.pending.front());
    f.pending.erase(f.pending.begin());
  }
}
#endif
}  // namespace opkit_emu

namespace AscendC {

template <pipe_t pipe>
inline void PipeBarrier() {
  static_assert(pipe != PIPE_S, "opkit emulator: PipeBarrier<PIPE_S> is not allowed");
  // A barrier on one pipe orders that pipe with itself only; pipes are already in order in the model.
  if constexpr (pipe == PIPE_ALL) opkit_emu::ctx().hz.barrier_all();
}

template <HardEvent event>
inline void SetFlag(int32_t eventID, OPKIT_LOC) {
  opkit_emu::set_flag_event(event, eventID, loc);
}
template <HardEvent event>
inline void WaitFlag(int32_t eventID, OPKIT_LOC) {
  opkit_emu::wait_flag_event(event, eventID, loc);
}

}  // namespace AscendC

// Old-style intrinsic names some samples use.
template <pipe_t pipe> inline void pipe_barrier() { AscendC::PipeBarrier<pipe>(); }
inline void pipe_barrier(pipe_t p) {
  if (p == PIPE_ALL) opkit_emu::ctx().hz.barrier_all();
}

// ---- lower-case intrinsics and TQueSync: the HardEvent of a pipe pair ----
namespace opkit_emu {
inline int pipe_pair_event(pipe_t src, pipe_t dst) {
  using E = AscendC::HardEvent;
  struct P { pipe_t s, d; E e; };
  static const P table[] = {
      {PIPE_MTE2, PIPE_V, E::MTE2_V},     {PIPE_V, PIPE_MTE2, E::V_MTE2},     {PIPE_MTE3, PIPE_V, E::MTE3_V},
      {PIPE_V, PIPE_MTE3, E::V_MTE3},     {PIPE_V, PIPE_V, E::V_V},           {PIPE_S, PIPE_V, E::S_V},
      {PIPE_V, PIPE_S, E::V_S},           {PIPE_S, PIPE_MTE2, E::S_MTE2},     {PIPE_MTE2, PIPE_S, E::MTE2_S},
      {PIPE_S, PIPE_MTE3, E::S_MTE3},     {PIPE_MTE3, PIPE_S, E::MTE3_S},     {PIPE_MTE2, PIPE_MTE3, E::MTE2_MTE3},
      {PIPE_MTE3, PIPE_MTE2, E::MTE3_MTE2}};
  for (const P& p : table)
    if (p.s == src && p.d == dst) return static_cast<int>(p.e);
  return -1;
}
template <bool Set>
inline void flag_by_pipes(pipe_t src, pipe_t dst, int32_t id, SrcLoc loc) {
  using E = AscendC::HardEvent;
  const char* call = Set ? "set_flag" : "wait_flag";
  switch (pipe_pair_event(src, dst)) {
#define OPKIT_EMU_FLAG_CASE(EV) \
  case static_cast<int>(E::EV): Set ? AscendC::SetFlag<E::EV>(id, loc) : AscendC::WaitFlag<E::EV>(id, loc); return;
    OPKIT_EMU_FLAG_CASE(MTE2_V) OPKIT_EMU_FLAG_CASE(V_MTE2) OPKIT_EMU_FLAG_CASE(MTE3_V) OPKIT_EMU_FLAG_CASE(V_MTE3)
    OPKIT_EMU_FLAG_CASE(V_V) OPKIT_EMU_FLAG_CASE(S_V) OPKIT_EMU_FLAG_CASE(V_S) OPKIT_EMU_FLAG_CASE(S_MTE2)
    OPKIT_EMU_FLAG_CASE(MTE2_S) OPKIT_EMU_FLAG_CASE(S_MTE3) OPKIT_EMU_FLAG_CASE(MTE3_S)
    OPKIT_EMU_FLAG_CASE(MTE2_MTE3) OPKIT_EMU_FLAG_CASE(MTE3_MTE2)
#undef OPKIT_EMU_FLAG_CASE
    default:
      fail("sync-pairing", call, loc,
           strf("no vector-core event for the pipe pair (%d -> %d); cube pipes are not emulated", src, dst));
  }
}
}  // namespace opkit_emu

inline void set_flag(pipe_t pipe, pipe_t tpipe, event_t pipeID, OPKIT_LOC) {
  opkit_emu::flag_by_pipes<true>(pipe, tpipe, pipeID, loc);
}
inline void wait_flag(pipe_t pipe, pipe_t tpipe, event_t pipeID, OPKIT_LOC) {
  opkit_emu::flag_by_pipes<false>(pipe, tpipe, pipeID, loc);
}
inline void set_flag(pipe_t pipe, pipe_t tpipe, int pipeID, OPKIT_LOC) {
  opkit_emu::flag_by_pipes<true>(pipe, tpipe, pipeID, loc);
}
inline void wait_flag(pipe_t pipe, pipe_t tpipe, int pipeID, OPKIT_LOC) {
  opkit_emu::flag_by_pipes<false>(pipe, tpipe, pipeID, loc);
}

namespace AscendC {
// TQueSync<src, dst>: SetFlag / WaitFlag on the event of one pipe pair (kernel_operator_block_sync_intf.h).
template <pipe_t src, pipe_t dst>
class TQueSync {
 public:
  void SetFlag(TEventID id, OPKIT_LOC) { opkit_emu::flag_by_pipes<true>(src, dst, id, loc); }
  void WaitFlag(TEventID id, OPKIT_LOC) { opkit_emu::flag_by_pipes<false>(src, dst, id, loc); }
};
}  // namespace AscendC
