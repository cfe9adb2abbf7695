// Data layout changes: TransDataTo5HD (the vnchwconv instruction: 16 DataBlocks in, 16 out per repeat) and
// Transpose (16 x 16 blocks; [N,C,H,W] <-> [N,H,W,C]). Doc pages (asc-devkit docs/zh/api/SIMD-API/基础API/
// Memory矢量计算/数据排布转换/{TransDataTo5HD,Transpose}.md at mirror-cann/asc-devkit 82b89a15):
//  - TransDataTo5HD: per repeat, 16 source DataBlocks (srcList[i]) and 16 destination DataBlocks (dstList[j]):
//      b16: dst_j[i] = src_i[j]                                   (a 16 x 16 transpose)
//      b32: dst_2p[k] = src_k[p], dst_2p+1[k] = src_8+k[p]        (p < 8, k < 8: position p of all 16 blocks
//                                                                  fills two DataBlocks)
//      b8:  dst_j[16*dstHighHalf + i] = src_i[16*srcHighHalf + j] (a 16 x 16 transpose of half blocks)
//    Which DataBlocks CANN pairs for b32 and b8 follows how CANN's own A2 Transpose builds its address lists on
//    this instruction (impl/basic_api/dav_c220/kernel_operator_vec_transpose_impl.h: TransFracCal,
//    TransFracForB8Cal). Repeat r starts at r * repStride DataBlocks; with repeatTimes = 1 the start is
//    repStride itself ("when repeatTimes is 1 the effective start is the list's start plus the stride").
//    Every list entry must be 32-byte aligned. The addresses come as LocalTensors, as integers (GetPhyAddr),
//    or as a LocalTensor<uint64_t> of integers (read by the scalar unit); an integer must point into a live
//    UB buffer, and each entry's DataBlocks must stay inside its tensor (its buffer, for integers).
//  - Transpose(dst, src): a 16 x 16 block of int16_t / uint16_t / half (dst may be src).
//  - Transpose(dst, src, tmp, TransposeParamsExt): TRANSPOSE_ND2ND_B16 (uint16_t on A2) as above;
//    TRANSPOSE_NCHW2NHWC / NHWC2NCHW (int8..float) with hSize * wSize * sizeof(T) a multiple of 32 bytes,
//    cSize <= 4095, hSize * wSize <= 4095, src and dst apart, and tmp of at least (cSize + 2) resp.
//    (2 * cSize + 1) * h0 * w0 * sizeof(T) bytes (h0 = 32 for 8-bit types, else 16; w0 = 32 / sizeof(T)).
//    CANN builds these from TransDataTo5HD through tmp; here the result is computed directly and tmp is
//    written with scratch (its bytes become poison: nothing may read them). TRANSPOSE_TYPE_NONE does nothing;
//    the types the page marks "currently not supported" are rule api-argument.
#pragma once
#include <array>

#include "opkit_emu/vector.h"

namespace AscendC {

constexpr int32_t NCHW_CONV_ADDR_LIST_SIZE = 16;

enum class TransposeType : uint8_t {
  TRANSPOSE_TYPE_NONE, TRANSPOSE_NZ2ND_0213, TRANSPOSE_NZ2NZ_0213, TRANSPOSE_NZ2NZ_012_WITH_N,
  TRANSPOSE_NZ2ND_012_WITH_N, TRANSPOSE_NZ2ND_012_WITHOUT_N, TRANSPOSE_NZ2NZ_012_WITHOUT_N, TRANSPOSE_ND2ND_ONLY,
  TRANSPOSE_ND_UB_GM, TRANSPOSE_GRAD_ND_UB_GM, TRANSPOSE_ND2ND_B16, TRANSPOSE_NCHW2NHWC, TRANSPOSE_NHWC2NCHW
};

struct TransDataTo5HDParams {
  constexpr TransDataTo5HDParams() = default;
  constexpr TransDataTo5HDParams(const bool dstHighHalfIn, const bool srcHighHalfIn, const uint8_t repeatTimesIn,
                                 const uint16_t dstRepStrideIn, const uint16_t srcRepStrideIn)
      : dstHighHalf(dstHighHalfIn), srcHighHalf(srcHighHalfIn), repeatTimes(repeatTimesIn),
        dstRepStride(dstRepStrideIn), srcRepStride(srcRepStrideIn) {}
  bool dstHighHalf = false;
  bool srcHighHalf = false;
  uint8_t repeatTimes = 1;
  uint16_t dstRepStride = 0;
  uint16_t srcRepStride = 0;
};

struct TransposeParamsExt {
  constexpr TransposeParamsExt() = default;
  constexpr TransposeParamsExt(const uint16_t nSizeIn, const uint16_t cSizeIn, const uint16_t hSizeIn,
                               const uint16_t wSizeIn, const TransposeType transposeTypeIn)
      : nSize(nSizeIn), cSize(cSizeIn), hSize(hSizeIn), wSize(wSizeIn), transposeType(transposeTypeIn) {}
  uint16_t nSize = 0;
  uint16_t cSize = 0;
  uint16_t hSize = 0;
  uint16_t wSize = 0;
  TransposeType transposeType = TransposeType::TRANSPOSE_ND2ND_B16;
};

}  // namespace AscendC

namespace opkit_emu {

template <class T> inline constexpr bool is_5hd_t =
    std::is_same<T, int8_t>::value || std::is_same<T, uint8_t>::value || std::is_same<T, int16_t>::value ||
    std::is_same<T, uint16_t>::value || std::is_same<T, half>::value || std::is_same<T, int32_t>::value ||
    std::is_same<T, uint32_t>::value || std::is_same<T, float>::value;
template <class T> inline constexpr bool is_b16_transpose_t =
    std::is_same<T, int16_t>::value || std::is_same<T, uint16_t>::value || std::is_same<T, half>::value;

// A UB address handed over as an integer (LocalTensor::GetPhyAddr): a view from it to the end of the live
// buffer it points into.
inline TensorMeta ub_view_at(uint64_t addr, const char* call, SrcLoc loc, const char* list, int i) {
  BlockCtx& c = ctx();
  const uint8_t* p = reinterpret_cast<const uint8_t*>(addr);
  if (p < c.ub || p >= c.ub + kChip.ub_total_bytes)
    fail("tensor-bounds", call, loc,
         strf("%s[%d] = 0x%llx is not a UB address (take it from LocalTensor::GetPhyAddr)", list, i,
              (unsigned long long)addr));
  const uint32_t off = static_cast<uint32_t>(p - c.ub);
  for (size_t b = c.bufs.size(); b-- > 0;) {
    const BufRec& r = c.bufs[b];
    if (r.state == BufState::Free || off < r.off || off >= r.off + r.len) continue;
    TensorMeta m;
    m.addr = c.ub + off;
    m.bytes = r.off + r.len - off;
    m.buf = static_cast<int32_t>(b);
    m.gen = r.gen;
    return m;
  }
  fail("tensor-bounds", call, loc,
       strf("%s[%d] points at UB offset %u, inside no allocated buffer (freed, or never handed out)", list, i, off));
}

// One vnchwconv instruction over 16 source and 16 destination lists.
template <class T>
void trans_5hd(const std::array<TensorMeta, 16>& dst, const std::array<TensorMeta, 16>& src,
               const AscendC::TransDataTo5HDParams& p, const char* call, SrcLoc loc) {
  static_assert(is_5hd_t<T>, "opkit emulator: TransDataTo5HD supports int8_t, uint8_t, int16_t, uint16_t, half, "
                             "int32_t, uint32_t, float on this chip");
  constexpr uint32_t E = sizeof(T);
  const uint32_t reps = p.repeatTimes;
  if (reps == 0) return;  // a NOP (TransDataTo5HD.md)
  for (int i = 0; i < 16; ++i) {
    if (dst[i].ub_off() % kBlk)
      fail("ub-alignment", call, loc, strf("dstList[%d] starts at UB offset %u, not 32-byte aligned", i, dst[i].ub_off()));
    if (src[i].ub_off() % kBlk)
      fail("ub-alignment", call, loc, strf("srcList[%d] starts at UB offset %u, not 32-byte aligned", i, src[i].ub_off()));
  }
  // bytes of each DataBlock taken / written: half a block for 8-bit types
  const uint32_t part = E == 1 ? 16 : 32;
  const uint32_t shalf = E == 1 && p.srcHighHalf ? 16 : 0, dhalf = E == 1 && p.dstHighHalf ? 16 : 0;
  const uint32_t spitch = p.srcRepStride * kBlk, dpitch = p.dstRepStride * kBlk;
  const uint32_t s0 = reps == 1 ? spitch : 0, d0 = reps == 1 ? dpitch : 0;
  static const char* sname[16] = {"srcList[0]", "srcList[1]", "srcList[2]", "srcList[3]", "srcList[4]",
                                  "srcList[5]", "srcList[6]", "srcList[7]", "srcList[8]", "srcList[9]",
                                  "srcList[10]", "srcList[11]", "srcList[12]", "srcList[13]", "srcList[14]",
                                  "srcList[15]"};
  static const char* dname[16] = {"dstList[0]", "dstList[1]", "dstList[2]", "dstList[3]", "dstList[4]",
                                  "dstList[5]", "dstList[6]", "dstList[7]", "dstList[8]", "dstList[9]",
                                  "dstList[10]", "dstList[11]", "dstList[12]", "dstList[13]", "dstList[14]",
                                  "dstList[15]"};
  // Hazards and bounds: every list entry's DataBlocks over all repeats (four calls of eight operands).
  for (int g = 0; g < 4; ++g) {
    ApiCall c(Pipe::V, call, loc);
    for (int k = g * 4; k < g * 4 + 4; ++k) {
      c.read_rows(src[k], s0 + shalf, reps, part, spitch, 8 * E, sname[k], kUnaligned);
      c.write_rows(dst[k], d0 + dhalf, reps, part, dpitch, 8 * E, dname[k], kUnaligned);
    }
    c.commit(Flow::Manual);
  }
  BlockStats& s = ctx().stats;
  s.op_calls[static_cast<int>(VecOp::Other)]++;
  s.op_elems[static_cast<int>(VecOp::Other)] += uint64_t(reps) * 16 * part / E;
  s.vector_elems += uint64_t(reps) * 16 * part / E;
  s.vector_repeats += reps;
  const uint32_t n = part / E;  // elements taken from each source DataBlock
  uint8_t in[16][32];
  bool bad[16][32];
  for (uint32_t r = 0; r < reps; ++r) {
    const uint32_t so = (reps == 1 ? s0 : r * spitch) + shalf, dof = (reps == 1 ? d0 : r * dpitch) + dhalf;
    for (int i = 0; i < 16; ++i) {  // every source block is read before any destination is written
      std::memcpy(in[i], src[i].addr + so, part);
      for (uint32_t e = 0; e < n; ++e) bad[i][e] = shadow_first_hole(src[i].ub_off() + so + e * E, E) >= 0;
    }
    for (int j = 0; j < 16; ++j)
      for (uint32_t e = 0; e < n; ++e) {
        int si;
        uint32_t se;
        if (E == 4) { si = (j % 2) * 8 + static_cast<int>(e); se = static_cast<uint32_t>(j / 2); }
        else { si = static_cast<int>(e); se = static_cast<uint32_t>(j); }
        std::memcpy(dst[j].addr + dof + e * E, in[si] + se * E, E);
        shadow_fill(dst[j].ub_off() + dof + e * E, E, !bad[si][se]);
      }
  }
}

template <class T>
std::array<TensorMeta, 16> metas_of(const AscendC::LocalTensor<T> (&list)[16]) {
  std::array<TensorMeta, 16> m;
  for (int i = 0; i < 16; ++i) m[i] = list[i].m_;
  return m;
}
inline std::array<TensorMeta, 16> metas_of(const uint64_t* list, const char* call, SrcLoc loc, const char* name) {
  std::array<TensorMeta, 16> m;
  for (int i = 0; i < 16; ++i) m[i] = ub_view_at(list[i], call, loc, name, i);
  return m;
}

// dst[i] = src[from(i)] for i < n, element by element with each element's poison (Transpose).
template <class T, class F>
void permute(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, uint32_t n, F from,
             const char* call, SrcLoc loc) {
  ApiCall c(Pipe::V, call, loc);
  c.dst(dst, n).src(src, n);
  const bool poisoned = c.commit(Flow::Manual);
  std::vector<T> in(src.data(), src.data() + n);
  std::vector<uint8_t> bad;
  if (poisoned) {
    bad.resize(n);
    for (uint32_t i = 0; i < n; ++i) bad[i] = ApiCall::lane_poisoned(c.operand(1), i);
  }
  for (uint32_t i = 0; i < n; ++i) dst.data()[i] = in[from(i)];
  if (poisoned)
    for (uint32_t i = 0; i < n; ++i) shadow_fill(dst.m_.ub_off() + i * sizeof(T), sizeof(T), !bad[from(i)]);
  else
    shadow_set(dst.m_.ub_off(), n * static_cast<uint32_t>(sizeof(T)));
  BlockStats& s = ctx().stats;
  s.op_calls[static_cast<int>(VecOp::Other)]++;
  s.op_elems[static_cast<int>(VecOp::Other)] += n;
  s.vector_elems += n;
  s.vector_repeats += (n * sizeof(T) + kRepeat - 1) / kRepeat;
}

}  // namespace opkit_emu

namespace AscendC {

template <typename T>
void TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE],
                    const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE],
                    const TransDataTo5HDParams& nchwconvParams, OPKIT_LOC) {
  opkit_emu::trans_5hd<T>(opkit_emu::metas_of(dstList), opkit_emu::metas_of(srcList), nchwconvParams,
                          "TransDataTo5HD", loc);
}
template <typename T>
void TransDataTo5HD(uint64_t dstList[NCHW_CONV_ADDR_LIST_SIZE], uint64_t srcList[NCHW_CONV_ADDR_LIST_SIZE],
                    const TransDataTo5HDParams& nchwconvParams, OPKIT_LOC) {
  const char* call = "TransDataTo5HD";
  opkit_emu::trans_5hd<T>(opkit_emu::metas_of(dstList, call, loc, "dstList"),
                          opkit_emu::metas_of(srcList, call, loc, "srcList"), nchwconvParams, call, loc);
}
// CANN's implementation functions, which kernels call directly (ops-nn activation/ge_glu_grad_v2, index/scatter_list):
// asc-devkit 82b89a15 impl/basic_api/dav_c220/kernel_operator_vec_transpose_impl.h:246-273 -- the same instruction
// over __ubuf__ pointer lists, or over uint64_t address lists; here as TransDataTo5HD of the same lists.
template <typename T>
void TransDataTo5HDImpl(__ubuf__ T* dstList[NCHW_CONV_ADDR_LIST_SIZE], __ubuf__ T* srcList[NCHW_CONV_ADDR_LIST_SIZE],
                        const TransDataTo5HDParams& transDataTo5HDParams, OPKIT_LOC) {
  const char* call = "TransDataTo5HDImpl";
  uint64_t d[16], s[16];
  for (int i = 0; i < 16; ++i) {
    d[i] = reinterpret_cast<uint64_t>(dstList[i]);
    s[i] = reinterpret_cast<uint64_t>(srcList[i]);
  }
  opkit_emu::trans_5hd<T>(opkit_emu::metas_of(d, call, loc, "dstList"), opkit_emu::metas_of(s, call, loc, "srcList"),
                          transDataTo5HDParams, call, loc);
}
template <typename T>
void TransDataTo5HDImpl(uint64_t dstList[NCHW_CONV_ADDR_LIST_SIZE], uint64_t srcList[NCHW_CONV_ADDR_LIST_SIZE],
                        const TransDataTo5HDParams& transDataTo5HDParams, OPKIT_LOC) {
  const char* call = "TransDataTo5HDImpl";
  opkit_emu::trans_5hd<T>(opkit_emu::metas_of(dstList, call, loc, "dstList"),
                          opkit_emu::metas_of(srcList, call, loc, "srcList"), transDataTo5HDParams, call, loc);
}
// The address lists in UB: the scalar unit reads them (CANN: __in_pipe__(S) __out_pipe__(V)).
template <typename T>
void TransDataTo5HD(const LocalTensor<uint64_t>& dst, const LocalTensor<uint64_t>& src,
                    const TransDataTo5HDParams& nchwconvParams, OPKIT_LOC) {
  const char* call = "TransDataTo5HD";
  opkit_emu::ApiCall c(opkit_emu::Pipe::S, call, loc);
  c.src(dst, 16, "dst (address list)", opkit_emu::kSink).src(src, 16, "src (address list)", opkit_emu::kSink);
  c.commit();
  uint64_t d[16], s[16];
  std::memcpy(d, dst.data(), sizeof d);
  std::memcpy(s, src.data(), sizeof s);
  opkit_emu::trans_5hd<T>(opkit_emu::metas_of(d, call, loc, "dst"), opkit_emu::metas_of(s, call, loc, "src"),
                          nchwconvParams, call, loc);
}

template <typename T>
void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, OPKIT_LOC) {
  static_assert(opkit_emu::is_b16_transpose_t<T>, "opkit emulator: Transpose (16 x 16) supports int16_t, uint16_t, half");
  opkit_emu::permute(dst, src, 256, [](uint32_t i) { return (i % 16) * 16 + i / 16; }, "Transpose", loc);
}

template <typename T>
void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
               const TransposeParamsExt& transposeParams, OPKIT_LOC) {
  using namespace opkit_emu;
  static_assert(is_5hd_t<T>, "opkit emulator: Transpose supports int8_t, uint8_t, int16_t, uint16_t, half, int32_t, "
                             "uint32_t, float on this chip");
  const char* call = "Transpose";
  const TransposeParamsExt& p = transposeParams;
  switch (p.transposeType) {
    case TransposeType::TRANSPOSE_TYPE_NONE: return;
    case TransposeType::TRANSPOSE_ND2ND_B16:
      if constexpr (!std::is_same<T, uint16_t>::value)
        fail("dtype-unsupported", call, loc, strf("TRANSPOSE_ND2ND_B16 takes uint16_t on this chip, not %s",
                                                  type_name<T>()));
      else
        permute(dst, src, 256, [](uint32_t i) { return (i % 16) * 16 + i / 16; }, call, loc);
      return;
    case TransposeType::TRANSPOSE_NCHW2NHWC:
    case TransposeType::TRANSPOSE_NHWC2NCHW: break;
    default:
      fail("api-argument", call, loc,
           strf("transposeType %d is not supported (Transpose.md: \"currently not supported\")",
                static_cast<int>(p.transposeType)));
  }
  const uint32_t hw = uint32_t(p.hSize) * p.wSize, c = p.cSize, n = uint32_t(p.nSize) * c * hw;
  if (c > 4095 || hw > 4095)
    fail("api-argument", call, loc, strf("cSize %u and hSize * wSize %u must each be at most 4095", c, hw));
  if (hw * sizeof(T) % kBlk)
    fail("api-argument", call, loc,
         strf("hSize * wSize * sizeof(T) = %zu bytes is not a multiple of 32", hw * sizeof(T)));
  const bool to_nhwc = p.transposeType == TransposeType::TRANSPOSE_NCHW2NHWC;
  const uint64_t h0 = sizeof(T) == 1 ? 32 : 16, w0 = kBlk / sizeof(T);
  const uint64_t tmp = (to_nhwc ? c + 2 : 2 * c + 1) * h0 * w0 * sizeof(T);
  if (tmp > sharedTmpBuffer.GetSize())
    fail("tensor-bounds", call, loc,
         strf("sharedTmpBuffer holds %u bytes; this transpose needs %llu ((cSize %s) * h0 * w0 * sizeof(T))",
              sharedTmpBuffer.GetSize(), (unsigned long long)tmp, to_nhwc ? "+ 2" : "* 2 + 1"));
  if (n && overlaps(dst.data(), src.data(), uint64_t(n) * sizeof(T)))
    fail("api-argument", call, loc, "src and dst overlap: NCHW <-> NHWC cannot work in place (Transpose.md)");
  if (n == 0) return;
  ApiCall t(Pipe::V, call, loc);
  t.dst(sharedTmpBuffer, tmp, "sharedTmpBuffer");
  t.commit(Flow::Manual);
  shadow_clear(sharedTmpBuffer.m_.ub_off(), static_cast<uint32_t>(tmp));  // scratch: nothing may read it
  if (to_nhwc)  // dst[b][s][k] = src[b][k][s], s < hw, k < c
    permute(dst, src, n, [=](uint32_t i) { return (i / (hw * c)) * hw * c + (i % c) * hw + (i / c) % hw; }, call, loc);
  else          // dst[b][k][s] = src[b][s][k]
    permute(dst, src, n, [=](uint32_t i) { return (i / (hw * c)) * hw * c + (i % hw) * c + (i / hw) % c; }, call, loc);
}

}  // namespace AscendC
