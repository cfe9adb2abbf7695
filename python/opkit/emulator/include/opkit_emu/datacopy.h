// DataCopy / DataCopyPad between GM and UB, SetAtomicAdd. Facts sheet §2.
#pragma once
#include "opkit_emu/api_call.h"
#include "opkit_emu/gm_pad.h"

namespace AscendC {

struct DataCopyParams {
  uint16_t blockCount = 1;
  uint16_t blockLen = 0;   // 32-byte blocks
  union { uint16_t srcGap = 0; uint16_t srcStride; };   // 32-byte blocks between blocks
  union { uint16_t dstGap = 0; uint16_t dstStride; };
  DataCopyParams() {}
  DataCopyParams(uint16_t count, uint16_t len, uint16_t srcS, uint16_t dstS)
      : blockCount(count), blockLen(len), srcGap(srcS), dstGap(dstS) {}
};

struct DataCopyExtParams {
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;   // bytes
  uint32_t srcStride = 0;  // GM side: bytes; UB side: 32-byte blocks
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
  DataCopyExtParams() {}
  DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcS, uint32_t dstS, uint32_t r)
      : blockCount(count), blockLen(len), srcStride(srcS), dstStride(dstS), rsv(r) {}
};

template <class T>
struct DataCopyPadExtParams {
  bool isPad = false;
  uint8_t leftPadding = 0;   // elements
  uint8_t rightPadding = 0;  // elements
  T paddingValue{};
  DataCopyPadExtParams() {}
  DataCopyPadExtParams(bool pad, uint8_t left, uint8_t right, T value)
      : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

// Older DataCopyPad parameter structs (blockLen in bytes, 16-bit fields).
struct DataCopyPadParams {
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  uint64_t paddingValue = 0;
  DataCopyPadParams() {}
  DataCopyPadParams(bool pad, uint8_t left, uint8_t right, uint64_t value)
      : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

}  // namespace AscendC

namespace opkit_emu {

template <class T> constexpr int atomic_code() {
  if constexpr (std::is_same<T, float>::value) return 0;
  else if constexpr (std::is_same<T, half>::value) return 1;
  else if constexpr (std::is_same<T, bfloat16_t>::value) return 2;
  else if constexpr (std::is_same<T, int32_t>::value) return 3;
  else if constexpr (std::is_same<T, int16_t>::value) return 4;
  else if constexpr (std::is_same<T, int8_t>::value) return 5;
  else return -1;
}

template <class T> constexpr void check_copy_dtype() {
  static_assert(!(kIs310P && is_bf16_v<T>), "opkit emulator: bfloat16_t does not exist on ascend310p (no bf16 DataCopy)");
}

// One UB->GM block write: plain, or recorded for the deferred atomic add.
// The BlockCtx& forms: with the context the caller holds (a copy's rows need not look it up each).
inline void gm_store(BlockCtx& c, uint8_t* dst, const uint8_t* src, size_t bytes) {
  c.stats.gm_write_bytes += bytes;
  gm_mark_write(c, dst);
  // an aclrtMalloc buffer's data nothing wrote yet is written now (gm_pad.h gm_data_write); an atomic add onto it
  // leaves garbage (run-asc only: elsewhere the gate is 0)
  if (GmPadPoison::get().unwritten_live.load(std::memory_order_relaxed)) gm_data_write(dst, bytes, c.atomic_dtype >= 0);
  if (c.atomic_dtype < 0) {
    std::memcpy(dst, src, bytes);
  } else {
    c.atomics.push_back(AtomicRecord{dst, c.atomic_dtype, std::vector<uint8_t>(src, src + bytes)});
  }
}
// One GM->UB block read (after the call's commit marked dst defined): bytes from poisoned GM padding stay poison.
inline void gm_load(BlockCtx& c, uint8_t* dst, const uint8_t* src, size_t bytes) {
  c.stats.gm_read_bytes += bytes;
  std::memcpy(dst, src, bytes);
  if (GmPadPoison::get().live.load(std::memory_order_relaxed))
    gm_pad_load(static_cast<uint32_t>(dst - c.ub), 1, static_cast<uint32_t>(bytes), 0, src, 0);
}
inline void gm_store(uint8_t* dst, const uint8_t* src, size_t bytes) { gm_store(ctx(), dst, src, bytes); }
inline void gm_load(uint8_t* dst, const uint8_t* src, size_t bytes) { gm_load(ctx(), dst, src, bytes); }

// A UB->GM copy into a tensor list that runs from one member's extent into another's (or over the list's descriptor
// words): data_end_for calls all of it data, but each member's padding it covers is padding, as a lone tensor's is.
// Poison is an error only in a lane with a byte in some member's data or outside every member (descriptor words);
// poison landing in a member's padding is remembered (gm_pad_store), and a plain copy of defined bytes clears it.
// The copy is one operand (pipe hazards); the first poisoned data lane, if any, is added as a one-lane sink, so the
// call's pipe checks still come first and the message names that element. Returns false (nothing added) when the
// copy covers no padding: the caller's all-data sink is then exact.
inline bool sink_members(ApiCall& c, const GmRegion& r, const TensorMeta& t, uint32_t rel_off, uint32_t rows,
                         uint32_t row_bytes, uint32_t ub_pitch, uint32_t lane_bits, const char* name,
                         const uint8_t* g, uint64_t gm_pitch, unsigned flags) {
  if (!gm_pad_touches(r, g, rows, row_bytes, gm_pitch)) return false;
  c.read_rows(t, rel_off, rows, row_bytes, ub_pitch, lane_bits, name, flags);  // hazards and bounds, no sink
  const uint32_t lb = lane_bits / 8;  // as sink_rows: callers pass 8 * sizeof(T), int4b_t's byte included
  const uint32_t ub = t.ub_off(ctx()) + rel_off;
  const uint8_t* const region_end = r.base + r.bytes;
  for (uint32_t row = 0; row < rows; ++row) {
    const uint8_t* gr = g + row * gm_pitch;
    if (gr >= region_end) break;  // past the allocation: gm-bounds fails it (dst.check)
    const uint32_t limit =
        static_cast<uint32_t>(std::min<uint64_t>(row_bytes, static_cast<uint64_t>(region_end - gr)));
    int64_t bad = -1;  // first poisoned data byte of the row, from its start
    uint32_t from = 0;  // start of the data run not yet checked
    auto data_run = [&](uint32_t a, uint32_t b) {  // [a, b) of the row is data: its lanes, rounded out, are checked
      if (bad >= 0 || a >= b) return;
      const uint32_t la = a / lb * lb, lz = std::min(row_bytes, (b + lb - 1) / lb * lb);
      const int64_t h = shadow_first_hole(ub + row * ub_pitch + la, lz - la);
      if (h >= 0) bad = la + h;
    };
    gm_pad_spans(r, gr, gr + row_bytes, [&](const uint8_t* s, const uint8_t* e) {
      data_run(from, static_cast<uint32_t>(s - gr));
      from = static_cast<uint32_t>(e - gr);
    });
    data_run(from, limit);
    if (bad >= 0) {
      const uint32_t lane = static_cast<uint32_t>(bad) / lb;
      c.read(t, rel_off + row * ub_pitch + lane * lb, 1, lane_bits, name, flags | kSink | kUnaligned)
          .lane_base(static_cast<uint32_t>(uint64_t(row) * (row_bytes / lb) + lane));
      break;
    }
  }
  gm_pad_store(r, g, ub, rows, row_bytes, ub_pitch, gm_pitch);
  return true;
}

// The UB source of a UB->GM copy (plain or atomic): `rows` rows of row_bytes, ub_pitch bytes apart from byte rel_off
// of t, landing gm_pitch bytes apart from `gm`. Poison is an error (ub-uninitialized) only in the bytes that land
// inside the GM argument's data extent (GmRegion::data_end_for: launch ABI arg_data_bytes, or a tensor list member's
// own data): a tail's 32-byte block
// written past the tensor into its allocation's padding carries whatever UB held, on the device too, and is harmless
// unless read back: gm_pad.h remembers it, and a GM->UB load of it gives poison UB (docs/emulator.md "Data extent").
// The bytes past it stay operands (pipe hazards), not sinks.
inline void sink_rows(ApiCall& c, const TensorMeta& t, uint32_t rel_off, uint32_t rows, uint32_t row_bytes,
                      uint32_t ub_pitch, uint32_t lane_bits, const char* name, const void* gm, uint64_t gm_pitch,
                      unsigned flags = 0) {
  const auto* g = static_cast<const uint8_t*>(gm);
  const GmRegion* r = c.block().checks && rows && row_bytes ? gm_find(c.block(), g) : nullptr;
  const uint64_t end = static_cast<uint64_t>(rows - 1) * gm_pitch + row_bytes;  // GM bytes from g the copy spans
  const uint8_t* data_end = r ? r->data_end_for(g, end) : nullptr;  // a tensor list: the member's
  if (!r || data_end >= g + end) {  // the usual case: all of it is data (or the GM check will fail it)
    // a tensor list's copy that is not inside one member (data_end_for: the whole buffer) may cover padding
    if (r && !r->members.empty() && data_end == r->base + r->bytes &&
        sink_members(c, *r, t, rel_off, rows, row_bytes, ub_pitch, lane_bits, name, g, gm_pitch, flags))
      return;
    c.read_rows(t, rel_off, rows, row_bytes, ub_pitch, lane_bits, name, flags | kSink);
    return;
  }
  gm_pad_store(*r, g, t.ub_off(ctx()) + rel_off, rows, row_bytes, ub_pitch, gm_pitch);
  // GM rows go up (gm_pitch >= row_bytes): rows [0, full) lie inside the data, row `full` may straddle its end
  const uint64_t in = data_end > g ? static_cast<uint64_t>(data_end - g) : 0;
  const uint32_t full = in < row_bytes ? 0 : static_cast<uint32_t>(std::min<uint64_t>(rows, (in - row_bytes) / gm_pitch + 1));
  const uint32_t lb = lane_bits / 8;
  // (full < rows here: all rows inside the data took the branch above)
  uint32_t part = static_cast<uint32_t>(std::min<uint64_t>(row_bytes, in - std::min(in, uint64_t(full) * gm_pitch)));
  part = (part + lb - 1) / lb * lb;  // a lane that reaches into the data counts whole
  unsigned first = 0;                // the first operand keeps the alignment check; the others start mid-call
  if (full) {
    c.read_rows(t, rel_off, full, row_bytes, ub_pitch, lane_bits, name, flags | kSink);
    first = kUnaligned;
  }
  // each piece counts its elements from the start of the whole copy (lane_base), as the unsplit operand would
  const uint32_t at = rel_off + full * ub_pitch;
  const uint32_t lane_full = static_cast<uint32_t>(uint64_t(full) * row_bytes / lb);
  if (part)
    c.read(t, at, part / lb, lane_bits, name, flags | kSink | first).lane_base(lane_full), first = kUnaligned;
  if (part < row_bytes)
    c.read(t, at + part, (row_bytes - part) / lb, lane_bits, name, flags | first).lane_base(lane_full + part / lb),
        first = kUnaligned;
  if (full + 1 < rows)
    c.read_rows(t, at + ub_pitch, rows - full - 1, row_bytes, ub_pitch, lane_bits, name, flags | first)
        .lane_base(lane_full + row_bytes / lb);
}

}  // namespace opkit_emu

namespace AscendC {

// ---- contiguous, count form -------------------------------------------------------------------
namespace detail {
template <class T>
inline void check_count_len(uint32_t count, const char* call, opkit_emu::SrcLoc loc) {
  uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  if (bytes % opkit_emu::kBlk != 0)
    opkit_emu::fail("datacopy-length", call, loc,
                    opkit_emu::strf("count %u x %zu bytes = %llu bytes is not a multiple of 32 bytes; the NPU would "
                                    "silently copy only %llu bytes (rounded down to 32 B); use DataCopyPad for tails",
                                    count, sizeof(T), (unsigned long long)bytes,
                                    (unsigned long long)(bytes / 32 * 32)));
}
}  // namespace detail

template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count, OPKIT_LOC) {
  opkit_emu::check_copy_dtype<T>();
  if (count == 0) return;
  detail::check_count_len<T>(count, "DataCopy", loc);
  uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  opkit_emu::ApiCall c(opkit_emu::Pipe::MTE2, "DataCopy", loc);
  c.dst(dst, count, "dst (UB)");
  src.check(0, count, "DataCopy", loc);
  c.commit();
  opkit_emu::gm_load(c.block(), dst.m_.addr, reinterpret_cast<const uint8_t*>(src.GetPhyAddr()), bytes);
}

template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count, OPKIT_LOC) {
  opkit_emu::check_copy_dtype<T>();
  if (count == 0) return;
  detail::check_count_len<T>(count, "DataCopy", loc);
  uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  opkit_emu::ApiCall c(opkit_emu::Pipe::MTE3, "DataCopy", loc);
  opkit_emu::sink_rows(c, src.m_, 0, 1, static_cast<uint32_t>(bytes), static_cast<uint32_t>(bytes), 8 * sizeof(T),
                       "src (UB)", dst.GetPhyAddr(), bytes);
  dst.check(0, count, "DataCopy", loc);
  c.commit();
  opkit_emu::gm_store(c.block(), reinterpret_cast<uint8_t*>(dst.GetPhyAddr()), src.m_.addr, bytes);
}

template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count, OPKIT_LOC) {
  if (count == 0) return;
  detail::check_count_len<T>(count, "DataCopy", loc);
  uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  // UB -> UB copies run on the vector pipe (CANN puts PipeBarrier<PIPE_V> between them and vector ops).
  opkit_emu::ApiCall(opkit_emu::Pipe::V, "DataCopy", loc).dst(dst, count, "dst (UB)").src(src, count, "src (UB)").commit();
  std::memmove(dst.m_.addr, src.m_.addr, bytes);
}

// ---- strided form: blockLen and gaps in 32-byte blocks ---------------------------------------
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p, OPKIT_LOC) {
  opkit_emu::check_copy_dtype<T>();
  if (p.blockCount == 0 || p.blockLen == 0) return;
  const uint64_t blk = static_cast<uint64_t>(p.blockLen) * 32;
  const uint64_t ub_span = (p.blockCount - 1) * (blk + p.dstGap * 32ull) + blk;
  const uint64_t gm_span = (p.blockCount - 1) * (blk + p.srcGap * 32ull) + blk;
  if (blk % sizeof(T) || (p.srcGap * 32ull) % sizeof(T))
    opkit_emu::fail("datacopy-length", "DataCopy", loc, "block length/gap is not a whole number of elements");
  (void)ub_span;
  opkit_emu::ApiCall c(opkit_emu::Pipe::MTE2, "DataCopy", loc);
  c.write_rows(dst.m_, 0, p.blockCount, static_cast<uint32_t>(blk), static_cast<uint32_t>(blk + p.dstGap * 32ull),
               8 * sizeof(T), "dst (UB)");
  src.check(0, gm_span / sizeof(T), "DataCopy", loc);
  c.commit();
  const uint8_t* g = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    uint64_t uo = b * (blk + p.dstGap * 32ull), go = b * (blk + p.srcGap * 32ull);
    opkit_emu::gm_load(c.block(), dst.m_.addr + uo, g + go, blk);
  }
}

template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, OPKIT_LOC) {
  opkit_emu::check_copy_dtype<T>();
  if (p.blockCount == 0 || p.blockLen == 0) return;
  const uint64_t blk = static_cast<uint64_t>(p.blockLen) * 32;
  const uint64_t ub_span = (p.blockCount - 1) * (blk + p.srcGap * 32ull) + blk;
  const uint64_t gm_span = (p.blockCount - 1) * (blk + p.dstGap * 32ull) + blk;
  if (blk % sizeof(T) || (p.dstGap * 32ull) % sizeof(T))
    opkit_emu::fail("datacopy-length", "DataCopy", loc, "block length/gap is not a whole number of elements");
  (void)ub_span;
  opkit_emu::ApiCall c(opkit_emu::Pipe::MTE3, "DataCopy", loc);
  opkit_emu::sink_rows(c, src.m_, 0, p.blockCount, static_cast<uint32_t>(blk),
                       static_cast<uint32_t>(blk + p.srcGap * 32ull), 8 * sizeof(T), "src (UB)", dst.GetPhyAddr(),
                       blk + p.dstGap * 32ull);
  dst.check(0, gm_span / sizeof(T), "DataCopy", loc);
  c.commit();
  uint8_t* g = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    uint64_t uo = b * (blk + p.srcGap * 32ull), go = b * (blk + p.dstGap * 32ull);
    opkit_emu::gm_store(c.block(), g + go, src.m_.addr + uo, blk);
  }
}

template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, OPKIT_LOC) {
  if (p.blockCount == 0 || p.blockLen == 0) return;
  const uint64_t blk = static_cast<uint64_t>(p.blockLen) * 32;
  const uint64_t s_span = (p.blockCount - 1) * (blk + p.srcGap * 32ull) + blk;
  const uint64_t d_span = (p.blockCount - 1) * (blk + p.dstGap * 32ull) + blk;
  (void)s_span;
  (void)d_span;
  opkit_emu::ApiCall(opkit_emu::Pipe::V, "DataCopy", loc)
      .read_rows(src.m_, 0, p.blockCount, static_cast<uint32_t>(blk), static_cast<uint32_t>(blk + p.srcGap * 32ull),
                 8 * sizeof(T), "src (UB)")
      .write_rows(dst.m_, 0, p.blockCount, static_cast<uint32_t>(blk), static_cast<uint32_t>(blk + p.dstGap * 32ull),
                  8 * sizeof(T), "dst (UB)")
      .commit();
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    uint64_t so = b * (blk + p.srcGap * 32ull), d = b * (blk + p.dstGap * 32ull);
    std::memmove(dst.m_.addr + d, src.m_.addr + so, blk);
  }
}

// ---- DataCopyPad: blockLen in bytes; GM strides in bytes, UB strides in 32-byte blocks ---------
namespace detail {
template <class T>
constexpr void check_pad_available() {
  static_assert(!opkit_emu::kIs310P || sizeof(T) == 0,
                "opkit emulator: DataCopyPad does not exist on ascend310p (use DataCopy with 32-byte aligned counts)");
}
}  // namespace detail

template <class T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                 const DataCopyPadExtParams<T>& pad, OPKIT_LOC) {
  detail::check_pad_available<T>();
  opkit_emu::check_copy_dtype<T>();
  const char* call = "DataCopyPad";
  if (p.blockCount == 0 || p.blockLen == 0) return;
  if (p.blockLen % sizeof(T))
    opkit_emu::fail("datacopy-length", call, loc,
                    opkit_emu::strf("blockLen %u bytes is not a multiple of sizeof(%s) = %zu", p.blockLen,
                                    opkit_emu::type_name<T>(), sizeof(T)));
  if (pad.leftPadding * sizeof(T) > 32 || pad.rightPadding * sizeof(T) > 32)
    opkit_emu::fail("datacopy-length", call, loc, "leftPadding/rightPadding must each be at most 32 bytes");
  const uint64_t lp = pad.leftPadding * sizeof(T), rp = pad.rightPadding * sizeof(T);
  const uint64_t row = (lp + p.blockLen + rp + 31) / 32 * 32;
  const uint64_t ub_pitch = row + p.dstStride * 32ull, gm_pitch = static_cast<uint64_t>(p.blockLen) + p.srcStride;
  const uint64_t ub_span = (p.blockCount - 1) * ub_pitch + row;
  const uint64_t gm_span = (p.blockCount - 1) * gm_pitch + p.blockLen;
  // The data (with requested padding) must fit the tensor; the 32-byte rounding of the last row may
  // run past the view into the rest of its buffer, as it does on the device.
  opkit_emu::ApiCall c(opkit_emu::Pipe::MTE2, call, loc);
  c.write_rows(dst.m_, 0, p.blockCount, static_cast<uint32_t>(row), static_cast<uint32_t>(ub_pitch), 8 * sizeof(T),
               "dst (UB)", opkit_emu::kPastView);
  const uint64_t need = (p.blockCount - 1) * ub_pitch + lp + p.blockLen + rp;
  if (need > dst.m_.bytes)
    opkit_emu::fail("tensor-bounds", call, loc,
                    opkit_emu::strf("dst (UB): the call touches %llu bytes but the tensor holds only %u bytes",
                                    (unsigned long long)need, dst.m_.bytes));
  if (ub_span > dst.m_.bytes_to_buffer_end())
    opkit_emu::fail("tensor-bounds", call, loc,
                    opkit_emu::strf("dst (UB): the 32-byte padded rows need %llu bytes but the buffer has only %u "
                                    "bytes from the tensor's start",
                                    (unsigned long long)ub_span, dst.m_.bytes_to_buffer_end()));
  // GM side is byte-addressed: check the byte span directly.
  if (gm_span % sizeof(T) == 0) src.check(0, gm_span / sizeof(T), call, loc);
  else opkit_emu::gm_check(src.GetPhyAddr(), gm_span, call, loc, "src (GM)");
  c.commit(opkit_emu::Flow::Manual);
  const uint8_t* g = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
  // isPad=false with padding asked: the value SetPadValue<T> set (SetPadValue(ISASI).md), else undefined
  opkit_emu::BlockCtx& bc = c.block();
  const bool pad_register = !pad.isPad && (pad.leftPadding || pad.rightPadding) && bc.pad_value_size != 0;
  if (pad_register && bc.pad_value_size != sizeof(T))
    opkit_emu::fail("api-argument", call, loc,
                    opkit_emu::strf("SetPadValue set a %u-byte value; this DataCopyPad moves %s (the page: the "
                                    "value's type is the copy's)", unsigned(bc.pad_value_size), opkit_emu::type_name<T>()));
  T reg_fill{};
  if (pad_register) std::memcpy(&reg_fill, &bc.pad_value, sizeof(T));
  const bool undefined_pad = !pad.isPad && (pad.leftPadding || pad.rightPadding) && !pad_register;
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    uint8_t* u = dst.m_.addr + b * ub_pitch;
    const uint32_t rel = static_cast<uint32_t>(b * ub_pitch);
    // the row's shadow before the load, so gm_load can put back the poison of bytes read from GM padding garbage
    // (gm_pad_load; marked after it, a DataCopyPad load lost that poison)
    if (undefined_pad) {  // documented as undefined: the padding bytes become poison
      opkit_emu::shadow_fill(bc, dst.m_.ub_off(bc) + rel, static_cast<uint32_t>(row), false);
      opkit_emu::shadow_fill(bc, dst.m_.ub_off(bc) + rel + static_cast<uint32_t>(lp), p.blockLen, true);
    } else {
      opkit_emu::shadow_fill(bc, dst.m_.ub_off(bc) + rel, static_cast<uint32_t>(row), true);
    }
    opkit_emu::gm_load(bc, u + lp, g + b * gm_pitch, p.blockLen);
    // Bytes of the 32-byte row around the data: the padding value, or (isPad=false, no padding asked)
    // the block's first element repeated, as the docs describe the hardware's "dummy" fill.
    T fill = pad.isPad ? pad.paddingValue : pad_register ? reg_fill : *reinterpret_cast<const T*>(u + lp);
    for (uint64_t o = 0; o < lp; o += sizeof(T)) std::memcpy(u + o, &fill, sizeof(T));
    for (uint64_t o = lp + p.blockLen; o + sizeof(T) <= row; o += sizeof(T)) std::memcpy(u + o, &fill, sizeof(T));
  }
}

template <class T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p, OPKIT_LOC) {
  detail::check_pad_available<T>();
  opkit_emu::check_copy_dtype<T>();
  const char* call = "DataCopyPad";
  if (p.blockCount == 0 || p.blockLen == 0) return;
  if (p.blockLen % sizeof(T))
    opkit_emu::fail("datacopy-length", call, loc,
                    opkit_emu::strf("blockLen %u bytes is not a multiple of sizeof(%s) = %zu", p.blockLen,
                                    opkit_emu::type_name<T>(), sizeof(T)));
  const uint64_t row = (static_cast<uint64_t>(p.blockLen) + 31) / 32 * 32;
  const uint64_t ub_pitch = row + p.srcStride * 32ull, gm_pitch = static_cast<uint64_t>(p.blockLen) + p.dstStride;
  const uint64_t ub_span = (p.blockCount - 1) * ub_pitch + p.blockLen;
  const uint64_t gm_span = (p.blockCount - 1) * gm_pitch + p.blockLen;
  (void)ub_span;
  opkit_emu::ApiCall c(opkit_emu::Pipe::MTE3, call, loc);
  opkit_emu::sink_rows(c, src.m_, 0, p.blockCount, p.blockLen, static_cast<uint32_t>(ub_pitch), 8 * sizeof(T),
                       "src (UB)", dst.GetPhyAddr(), gm_pitch);
  if (gm_span % sizeof(T) == 0) dst.check(0, gm_span / sizeof(T), call, loc);
  else opkit_emu::gm_check(dst.GetPhyAddr(), gm_span, call, loc, "dst (GM)");
  c.commit();
  uint8_t* g = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  opkit_emu::BlockCtx& bc = c.block();
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    opkit_emu::gm_store(bc, g + b * gm_pitch, src.m_.addr + b * ub_pitch, p.blockLen);
  }
}

// SetPadValue<T, pos> (asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据搬运辅助配置接口/
// SetPadValue(ISASI).md; declared include/basic_api/kernel_operator_data_copy_intf.h): the value a GM->UB
// DataCopyPad with isPad=false writes into the padding it asks for (otherwise undefined: poison here). Per block,
// until set again; its type must be the copy's (api-argument). pos: VECIN, VECOUT or MAX (either).
template <class T, TPosition pos = TPosition::MAX>
void SetPadValue(T paddingValue) {
  static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT || pos == TPosition::MAX,
                "SetPadValue: pos is VECIN, VECOUT or MAX (its page)");
  static_assert(std::is_arithmetic<T>::value || std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value,
                "opkit emulator: SetPadValue takes the element types of its page (int8_t ... double)");
  static_assert(sizeof(T) <= 8, "SetPadValue: at most 8 bytes");
  opkit_emu::BlockCtx& c = opkit_emu::ctx();
  c.pad_value = 0;
  std::memcpy(&c.pad_value, &paddingValue, sizeof(T));
  c.pad_value_size = sizeof(T);
}

// Older overloads: DataCopyParams with blockLen in bytes.
template <class T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                 const DataCopyPadParams& pad, OPKIT_LOC) {
  T v;
  std::memcpy(&v, &pad.paddingValue, sizeof(T));
  DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcGap, p.dstGap, 0),
              DataCopyPadExtParams<T>(pad.isPad, pad.leftPadding, pad.rightPadding, v), loc);
}
template <class T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, OPKIT_LOC) {
  DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcGap, p.dstGap, 0), loc);
}

// ---- atomic accumulation into GM --------------------------------------------------------------
template <class T>
void SetAtomicAdd() {
  static_assert(opkit_emu::atomic_code<T>() >= 0, "opkit emulator: SetAtomicAdd supports float, half, bfloat16_t, int32_t, int16_t, int8_t");
  opkit_emu::check_copy_dtype<T>();
  opkit_emu::ctx().atomic_dtype = opkit_emu::atomic_code<T>();
}
inline void SetAtomicNone() { opkit_emu::ctx().atomic_dtype = -1; }
// SetAtomicType<T> (原子操作/SetAtomicType.md, A2: int8_t, int16_t, half, bfloat16_t, int32_t, float): the element
// type of the atomic operation only. On the device the operation (add / max / min / none) and the type are two
// fields (asc-devkit 82b89a15 impl/basic_api/dav_c220/kernel_operator_set_atomic_impl.h:25-95: SetAtomicAdd<T> is
// set_atomic_add then SetAtomicType<T>): with an operation on, it goes on in the new type; with none, nothing
// changes that a copy sees (SetAtomicAdd/Max/Min set the type again).
template <class T>
void SetAtomicType() {
  static_assert(opkit_emu::atomic_code<T>() >= 0, "opkit emulator: SetAtomicType supports float, half, bfloat16_t, int32_t, int16_t, int8_t");
  opkit_emu::check_copy_dtype<T>();
  int& code = opkit_emu::ctx().atomic_dtype;
  if (code >= 0) code = code / 8 * 8 + opkit_emu::atomic_code<T>();
}
// CANN's current name of SetAtomicNone (asc-devkit 82b89a15 impl/basic_api/kernel_operator_set_atomic_intf_impl.h:59-62)
inline void DisableDmaAtomic() { SetAtomicNone(); }
// SetAtomicMax / SetAtomicMin (原子操作/SetAtomicMax(ISASI).md, SetAtomicMin(ISASI).md; A2: int8_t, int16_t, half,
// bfloat16_t, int32_t, float): copies to GM then keep the larger / smaller of the copied and the present value,
// applied after all blocks like the atomic add (max and min do not depend on the order). Which NaN wins is not
// documented: a NaN operand is kept (what a compare-and-select on the device would do is not known).
// The code is dtype + 8 x operation (0 add, 1 max, 2 min): opkit_emu::atomic_apply.
template <class T>
void SetAtomicMax() {
  static_assert(opkit_emu::atomic_code<T>() >= 0, "opkit emulator: SetAtomicMax supports float, half, bfloat16_t, int32_t, int16_t, int8_t");
  opkit_emu::check_copy_dtype<T>();
  opkit_emu::ctx().atomic_dtype = opkit_emu::atomic_code<T>() + 8;
}
template <class T>
void SetAtomicMin() {
  static_assert(opkit_emu::atomic_code<T>() >= 0, "opkit emulator: SetAtomicMin supports float, half, bfloat16_t, int32_t, int16_t, int8_t");
  opkit_emu::check_copy_dtype<T>();
  opkit_emu::ctx().atomic_dtype = opkit_emu::atomic_code<T>() + 16;
}

// Data cache maintenance (include/basic_api/kernel_operator_cache_intf.h, enums impl/basic_api/kernel_reg.h):
// no-ops here, the emulator's GM has no cache between blocks and memory (a write is seen at once).
enum class CacheLine : uint64_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint64_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
template <class T, CacheLine entireType, DcciDst dcciDst> inline void DataCacheCleanAndInvalid(const GlobalTensor<T>&) {}
template <class T, CacheLine entireType, DcciDst dcciDst> inline void DataCacheCleanAndInvalid(const LocalTensor<T>&) {}
template <class T, CacheLine entireType> inline void DataCacheCleanAndInvalid(const GlobalTensor<T>&) {}
template <class T> inline void DataCachePreload(const GlobalTensor<uint64_t>&, const T) {}

}  // namespace AscendC
