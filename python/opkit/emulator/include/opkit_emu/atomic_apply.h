// Applying a deferred atomic GM write (AtomicRecord, runtime.h): SetAtomicAdd / SetAtomicMax / SetAtomicMin copies
// land when the launch ends (launch.h), when a SyncAll completes (sync_all.h), at a GroupBarrier (group_barrier.h)
// or, a block's own, when it sets a flag another block waits on (CrossCoreSetFlag, IBSet, NotifyNextBlock).
#pragma once
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "opkit_emu/runtime.h"

namespace opkit_emu {

template <class T>
inline void atomic_apply_t(uint8_t* dst, const uint8_t* src, size_t bytes, int op = 0) {
  for (size_t o = 0; o + sizeof(T) <= bytes; o += sizeof(T)) {
    T a, b;
    std::memcpy(&a, dst + o, sizeof(T));
    std::memcpy(&b, src + o, sizeof(T));
    T r;
    if (op != 0) {  // SetAtomicMax (1) / SetAtomicMin (2); a NaN operand is kept
      const float fa = to_f(a), fb = to_f(b);
      const bool take_b = fb != fb || (fa == fa && (op == 1 ? fb > fa : fb < fa));
      if constexpr (std::is_integral<T>::value) r = op == 1 ? std::max(a, b) : std::min(a, b);
      else r = take_b ? b : a;
    } else if constexpr (std::is_integral<T>::value)
      r = static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) + static_cast<std::make_unsigned_t<T>>(b));
    else {
      // NaN + NaN: x86 returns the first operand's NaN, and which operand g++ puts first is its own choice -- it
      // differed between the launch's code compiled in each kernel module and compiled once in the runtime
      // object (config.h, OPKIT_EMU_RT), flipping a NaN's sign. Spelled out: the GM value's NaN first, then the
      // added value's (quieted, as addss does), which is what the modules gave before (issue 38 item 3).
      const float fa = to_f(a), fb = to_f(b);
      r = from_f<T>(fa != fa ? fa + 0.0f : fb != fb ? fb + 0.0f : fa + fb);
    }
    std::memcpy(dst + o, &r, sizeof(T));
  }
}
inline void atomic_apply(const AtomicRecord& r) {
  const int op = r.dtype / 8;  // 0 add, 1 max, 2 min (datacopy.h)
  switch (r.dtype % 8) {
    case 0: atomic_apply_t<float>(r.dst, r.data.data(), r.data.size(), op); break;
    case 1: atomic_apply_t<half>(r.dst, r.data.data(), r.data.size(), op); break;
    case 2: atomic_apply_t<bfloat16_t>(r.dst, r.data.data(), r.data.size(), op); break;
    case 3: atomic_apply_t<int32_t>(r.dst, r.data.data(), r.data.size(), op); break;
    case 4: atomic_apply_t<int16_t>(r.dst, r.data.data(), r.data.size(), op); break;
    default: atomic_apply_t<int8_t>(r.dst, r.data.data(), r.data.size(), op); break;
  }
}

}  // namespace opkit_emu
