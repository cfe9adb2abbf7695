// Lower-case set_flag / wait_flag intrinsics (pipe pair + event id) that older kernels call instead of
// SetFlag<HardEvent> / WaitFlag<HardEvent>: each maps to the HardEvent of its pipe pair, so pairing
// (and any later ordering check) is the same as for the upper-case API.
#pragma once
#include "opkit_emu/sync.h"

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
