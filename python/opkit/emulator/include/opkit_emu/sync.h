// PipeBarrier / SetFlag / WaitFlag. The emulator runs instructions in program order, so these only
// check pairing (facts sheet §1 "Sync"): a WaitFlag needs an earlier SetFlag on the same event and id
// (otherwise the NPU would wait forever), and every SetFlag must be waited before the kernel ends.
#pragma once
#include "opkit_emu/pipe.h"

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
inline FlagRec& flag(AscendC::HardEvent e, int32_t id, const char* call, SrcLoc loc) {
  if (id < 0 || id >= 8)
    fail("sync-pairing", call, loc, strf("event id %d is out of range [0, 8)", id));
  return ctx().flags[static_cast<int>(e)][id];
}
}  // namespace opkit_emu

namespace AscendC {

template <pipe_t pipe>
inline void PipeBarrier() {
  static_assert(pipe != PIPE_S, "opkit emulator: PipeBarrier<PIPE_S> is not allowed");
}

template <HardEvent event>
inline void SetFlag(int32_t eventID, OPKIT_LOC) {
  opkit_emu::FlagRec& f = opkit_emu::flag(event, eventID, "SetFlag", loc);
  f.count++;
  f.last_set = loc;
}
template <HardEvent event>
inline void WaitFlag(int32_t eventID, OPKIT_LOC) {
  opkit_emu::FlagRec& f = opkit_emu::flag(event, eventID, "WaitFlag", loc);
  if (f.count <= 0)
    opkit_emu::fail("sync-pairing", "WaitFlag", loc,
                    opkit_emu::strf("WaitFlag<HardEvent::%s>(%d) has no matching SetFlag before it (the NPU would "
                                    "wait forever)",
                                    opkit_emu::event_name(event), eventID));
  f.count--;
}

}  // namespace AscendC

// Old-style intrinsic names some samples use.
template <pipe_t pipe> inline void pipe_barrier() {}
inline void pipe_barrier(pipe_t) {}
