// CANN's pointer-level copy functions, which some ops call directly (ops-nn index/linear_index, ops-math
// conversion/diag_flat): DataCopyGM2UBImpl, DataCopyUB2GMImpl, DataCopyPadGm2UBImpl, DataCopyPadUB2GMImpl
// (asc-devkit 82b89a15 impl/basic_api/dav_c220/kernel_operator_data_copy_impl.h:53,100,453,502,564,605). Each is the
// tensor-level DataCopy / DataCopyPad of the same parameters: the UB pointer is resolved to the live UB buffer that
// holds it (a pointer into no buffer is tensor-bounds, a stale one queue-protocol as for a tensor), the GM pointer
// checked like any GlobalTensor. So every rule of the tensor form applies unchanged.
#pragma once
#include "opkit_emu/datacopy.h"
#include "opkit_emu/tpipe.h"

namespace opkit_emu {
template <class T>
AscendC::LocalTensor<T> ub_view(const T* p, const char* call, SrcLoc loc) {
  BlockCtx& c = ctx();
  const uint8_t* b = reinterpret_cast<const uint8_t*>(p);
  if (b < c.ub || b >= c.ub + kChip.ub_total_bytes)
    fail("tensor-bounds", call, loc, "the __ubuf__ pointer does not point into the Unified Buffer");
  const uint32_t off = static_cast<uint32_t>(b - c.ub);
  for (size_t i = c.bufs.size(); i-- > 0;) {  // the newest buffer holding it (PopStackBuffer may overlap older ones)
    const BufRec& r = c.bufs[i];
    if (r.pipe == c.live_pipe && off >= r.off && off < r.off + r.len)
      return make_tensor<T>(static_cast<uint32_t>(i), off - r.off, r.off + r.len - off);
  }
  fail("tensor-bounds", call, loc, strf("UB offset %u is in no buffer of the live TPipe", off));
}
template <class T>
AscendC::GlobalTensor<T> gm_view(T* p) {
  AscendC::GlobalTensor<T> g;
  g.SetGlobalBuffer(p);
  return g;
}
}  // namespace opkit_emu

namespace AscendC {
template <class T>
void DataCopyGM2UBImpl(__ubuf__ T* dst, __gm__ T* src, const DataCopyParams& intriParams, OPKIT_LOC) {
  DataCopy(opkit_emu::ub_view(dst, "DataCopyGM2UBImpl", loc), opkit_emu::gm_view(src), intriParams, loc);
}
template <class T>
void DataCopyUB2GMImpl(__gm__ T* dst, __ubuf__ T* src, const DataCopyParams& intriParams, OPKIT_LOC) {
  DataCopy(opkit_emu::gm_view(dst), opkit_emu::ub_view(src, "DataCopyUB2GMImpl", loc), intriParams, loc);
}
template <class T>
void DataCopyPadGm2UBImpl(__ubuf__ T* dst, __gm__ T* src, const DataCopyParams& intriParams,
                          const DataCopyPadParams& padParams, OPKIT_LOC) {
  DataCopyPad(opkit_emu::ub_view(dst, "DataCopyPadGm2UBImpl", loc), opkit_emu::gm_view(src), intriParams, padParams,
              loc);
}
template <class T>
void DataCopyPadGm2UBImpl(__ubuf__ T* dst, __gm__ T* src, const DataCopyExtParams& intriParams,
                          const DataCopyPadExtParams<T>& padParams, OPKIT_LOC) {
  DataCopyPad(opkit_emu::ub_view(dst, "DataCopyPadGm2UBImpl", loc), opkit_emu::gm_view(src), intriParams, padParams,
              loc);
}
template <class T>
void DataCopyPadUB2GMImpl(__gm__ T* dst, __ubuf__ T* src, const DataCopyParams& intriParams, OPKIT_LOC) {
  DataCopyPad(opkit_emu::gm_view(dst), opkit_emu::ub_view(src, "DataCopyPadUB2GMImpl", loc), intriParams, loc);
}
template <class T>
void DataCopyPadUB2GMImpl(__gm__ T* dst, __ubuf__ T* src, const DataCopyExtParams& intriParams, OPKIT_LOC) {
  DataCopyPad(opkit_emu::gm_view(dst), opkit_emu::ub_view(src, "DataCopyPadUB2GMImpl", loc), intriParams, loc);
}
}  // namespace AscendC
