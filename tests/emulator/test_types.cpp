// half / bfloat16_t conversions and Cast (every RoundMode of the A2 table). Facts sheet §3 "Cast", §7.
#include "opkit_emu/pybind.h"

namespace py = pybind11;
using namespace AscendC;

struct CastTiling {
  uint32_t count;
  int32_t mode;
};

// Tiles of up to 4096 elements: DataCopyPad in, Cast with the tiling's mode, DataCopyPad out.
template <class D, class S>
__aicore__ void cast_kernel(GM_ADDR src, GM_ADDR dst, GM_ADDR tiling) {
  constexpr uint32_t kTile = 4096;
  GET_TILING_DATA_WITH_STRUCT(CastTiling, t, tiling);
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  TQue<TPosition::VECOUT, 1> out;
  GlobalTensor<S> sg;
  GlobalTensor<D> dg;
  sg.SetGlobalBuffer((__gm__ S*)src, t.count);
  dg.SetGlobalBuffer((__gm__ D*)dst, t.count);
  pipe.InitBuffer(in, 1, kTile * sizeof(S));
  pipe.InitBuffer(out, 1, kTile * sizeof(D));
  for (uint32_t base = 0; base < t.count; base += kTile) {
    const uint32_t n = t.count - base < kTile ? t.count - base : kTile;
    LocalTensor<S> s = in.AllocTensor<S>();
    DataCopyPad(s, sg[base], DataCopyExtParams{1, (uint32_t)(n * sizeof(S)), 0, 0, 0}, DataCopyPadExtParams<S>{});
    in.EnQue(s);
    s = in.DeQue<S>();
    LocalTensor<D> d = out.AllocTensor<D>();
    Cast(d, s, static_cast<RoundMode>(t.mode), n);
    in.FreeTensor(s);
    out.EnQue(d);
    d = out.DeQue<D>();
    DataCopyPad(dg[base], d, DataCopyExtParams{1, (uint32_t)(n * sizeof(D)), 0, 0, 0});
    out.FreeTensor(d);
  }
}

#define CAST_ENTRY(name, D, S) \
  extern "C" __global__ __aicore__ void name(GM_ADDR s, GM_ADDR d, GM_ADDR t) { cast_kernel<D, S>(s, d, t); }
CAST_ENTRY(cast_f32_f16, half, float)
CAST_ENTRY(cast_f32_bf16, bfloat16_t, float)
CAST_ENTRY(cast_f16_f32, float, half)
CAST_ENTRY(cast_bf16_f32, float, bfloat16_t)
CAST_ENTRY(cast_f32_f32, float, float)
CAST_ENTRY(cast_f32_i32, int32_t, float)
CAST_ENTRY(cast_f32_i16, int16_t, float)
CAST_ENTRY(cast_f32_i64, int64_t, float)
CAST_ENTRY(cast_i32_f32, float, int32_t)
CAST_ENTRY(cast_f16_i32, int32_t, half)
CAST_ENTRY(cast_f16_i8, int8_t, half)
CAST_ENTRY(cast_f16_u8, uint8_t, half)
// The rest of the A2 table (Cast.md, mirror-cann/asc-devkit 7359511d).
CAST_ENTRY(cast_i8_f16, half, int8_t)
CAST_ENTRY(cast_u8_f16, half, uint8_t)
CAST_ENTRY(cast_i16_f16, half, int16_t)
CAST_ENTRY(cast_i16_f32, float, int16_t)
CAST_ENTRY(cast_f16_i16, int16_t, half)
CAST_ENTRY(cast_bf16_i32, int32_t, bfloat16_t)
CAST_ENTRY(cast_i32_i16, int16_t, int32_t)
CAST_ENTRY(cast_i32_f16, half, int32_t)
CAST_ENTRY(cast_i32_i64, int64_t, int32_t)
CAST_ENTRY(cast_i64_i32, int32_t, int64_t)
CAST_ENTRY(cast_i64_f32, float, int64_t)

template <class Out, class In, class F>
py::array_t<Out> map_array(const py::array_t<In, py::array::c_style>& a, F f) {
  py::array_t<Out> r(a.size());
  const In* s = a.data();
  Out* d = r.mutable_data();
  for (py::ssize_t i = 0; i < a.size(); ++i) d[i] = f(s[i]);
  return r;
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  m.def("half_to_float", [](py::array_t<uint16_t, py::array::c_style> a) {
    return map_array<float>(a, [](uint16_t b) { return static_cast<float>(half::FromBits(b)); });
  });
  m.def("float_to_half", [](py::array_t<float, py::array::c_style> a) {
    return map_array<uint16_t>(a, [](float f) { return half(f).bits_; });
  });
  m.def("bf16_to_float", [](py::array_t<uint16_t, py::array::c_style> a) {
    return map_array<float>(a, [](uint16_t b) { return static_cast<float>(bfloat16_t::FromBits(b)); });
  });
  m.def("float_to_bf16", [](py::array_t<float, py::array::c_style> a) {
    return map_array<uint16_t>(a, [](float f) { return bfloat16_t(f).bits_; });
  });
  OPKIT_EMU_PY_KERNEL(m, cast_f32_f16, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_f32_bf16, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_f16_f32, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_bf16_f32, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_f32_f32, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_f32_i32, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_f32_i16, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_f32_i64, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_i32_f32, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_f16_i32, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_f16_i8, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_f16_u8, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_i8_f16, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_u8_f16, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_i16_f16, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_i16_f32, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_f16_i16, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_bf16_i32, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_i32_i16, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_i32_f16, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_i32_i64, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_i64_i32, 3);
  OPKIT_EMU_PY_KERNEL(m, cast_i64_f32, 3);
}
