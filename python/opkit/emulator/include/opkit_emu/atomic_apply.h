// Applying a deferred atomic GM write (AtomicRecord, runtime.h): SetAtomicAdd / SetAtomicMax / SetAtomicMin copies
// land when the launch ends (launch.h), when a SyncAll completes (sync_all.h), at a GroupBarrier (group_barrier.h)
// or, a block's own, when it sets a flag another block waits on (CrossCoreSetFlag, IBSet, NotifyNextBlock).
#pragma once
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "opkit_emu/nan_rule.h"
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
      // A NaN operand: the device gives a NaN, payload and sign not specified (asc-devkit
      // docs/zh/api/附录/原子操作类接口边界值汇总.md 表1, SetAtomicAdd: "nan", as IEEE 754). Which NaN is the emulator's
      // NaN rule (nan_rule.h): the GM value's, else the added value's, quieted, else the default NaN -- what the
      // kernel modules gave before the runtime was compiled once (issue 38 item 3). Max / Min above keep the added
      // value's NaN instead (take_b): each is what that rule gave before.
      r = from_f<T>(fadd(to_f(a), to_f(b)));
    }
    std::memcpy(dst + o, &r, sizeof(T));
  }
}
// Compiled once (OPKIT_EMU_RT): its six instantiations are not every module's to compile again.
OPKIT_EMU_RT void atomic_apply(const AtomicRecord& r);
#if OPKIT_EMU_RT_DEFS
OPKIT_EMU_RT void atomic_apply(const AtomicRecord& r) {
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
#endif

}  // namespace opkit_emu
