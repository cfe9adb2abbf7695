// The kernel toolkit: helpers every opkit kernel (and a copied or scaffolded op) shares, so they are
// written once. Include after "kernel_operator.h"; works with the emulator and with CANN (the same
// AscendC calls a kernel would make inline). Host-side counterpart: opkit/tiling_util.h.
#pragma once
#include "kernel_operator.h"
#include "constants.h"  // next to this file: found in every layout (include path, op package)

namespace opkit {

// Type test for `if constexpr` (std::is_same is not available to every device compiler).
template <typename A, typename B>
struct SameType { static constexpr bool value = false; };
template <typename A>
struct SameType<A, A> { static constexpr bool value = true; };

// One pipe waits for another on a fresh event id. A scalar read of a vector result needs V_S; a scalar
// write must land before the vector pipe (S_V) or the store (S_MTE3) reads it.
template <AscendC::HardEvent E>
__aicore__ inline void PipeSync() {
  event_t e = static_cast<event_t>(AscendC::GetTPipePtr()->FetchEventID(E));
  AscendC::SetFlag<E>(e);
  AscendC::WaitFlag<E>(e);
}
__aicore__ inline void VectorToScalarSync() { PipeSync<AscendC::HardEvent::V_S>(); }
__aicore__ inline void ScalarToVectorSync() { PipeSync<AscendC::HardEvent::S_V>(); }
__aicore__ inline void ScalarToStoreSync() { PipeSync<AscendC::HardEvent::S_MTE3>(); }

// This block's share of `rows` rows split by opkit::SplitRows (tiling_util.h): every block gets
// rowsPerBlock rows and blocks [0, remainderRows) one more.
struct BlockRows {
  uint32_t count;
  uint64_t first;
};
__aicore__ inline BlockRows RowsOfBlock(uint32_t rowsPerBlock, uint32_t remainderRows) {
  const uint64_t b = AscendC::GetBlockIdx();
  return BlockRows{rowsPerBlock + (b < remainderRows ? 1u : 0u),
                   b * rowsPerBlock + (b < remainderRows ? b : remainderRows)};
}

// This block's share of a flat range of `total` elements split in kSplitUnit units (the first blocks take
// one unit more); len 0 when the block has nothing to do.
struct BlockRange {
  uint64_t start;
  uint64_t len;
};
__aicore__ inline BlockRange RangeOfBlock(uint64_t total) {
  const uint64_t units = (total + kSplitUnit - 1) / kSplitUnit;
  const uint64_t blocks = AscendC::GetBlockNum(), idx = AscendC::GetBlockIdx();
  const uint64_t base = units / blocks, rem = units % blocks;
  const uint64_t firstUnit = idx * base + (idx < rem ? idx : rem);
  const uint64_t start = firstUnit * kSplitUnit;
  uint64_t end = (firstUnit + base + (idx < rem ? 1 : 0)) * kSplitUnit;
  if (end > total) end = total;
  return BlockRange{start, end > start ? end - start : 0};
}

// GM -> UB of `rows` rows of `cols` elements starting at src, each row zero-padded to a 32-byte pitch
// (DataCopyPad: any length, no 32-byte rule on cols).
template <typename T>
__aicore__ inline void CopyRowsPadded(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src,
                                      uint32_t rows, uint32_t cols) {
  constexpr uint32_t kElems = kBlockBytes / sizeof(T);
  const uint32_t pitch = (cols + kElems - 1) / kElems * kElems;
  AscendC::DataCopyExtParams p{static_cast<uint16_t>(rows), static_cast<uint32_t>(cols * sizeof(T)), 0, 0, 0};
  AscendC::DataCopyPadExtParams<T> pad{true, 0, static_cast<uint8_t>(pitch - cols), static_cast<T>(0.0f)};
  AscendC::DataCopyPad(dst, src, p, pad);
}

}  // namespace opkit
