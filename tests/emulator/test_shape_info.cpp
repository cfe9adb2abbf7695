// DataFormat, ShapeInfo, GetShapeSize and the tensors' SetShapeInfo / GetShapeInfo (opkit_emu/shape_info.h).
// Doc pages (asc-devkit docs/zh/api/SIMD-API/基础API/ at mirror-cann/asc-devkit 82b89a15): 数据结构/ShapeInfo.md,
// 数据结构/LocalTensor/{SetShapeInfo,GetShapeInfo}.md, 数据结构/GlobalTensor/{SetShapeInfo,GetShapeInfo}.md.
#include "opkit_emu/pybind.h"

using namespace AscendC;

// out[0..] = {shapeDim, shape..., originalShapeDim, originalShape..., dataFormat, GetShapeSize} for: a
// LocalTensor's shape (read back from a copy), a GlobalTensor's, a fresh tensor's (no shape); dims 9 asserts.
extern "C" __global__ __aicore__ void shapes(GM_ADDR mode, GM_ADDR out) {
  GlobalTensor<int32_t> gm;
  gm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
  GlobalTensor<uint32_t> go;
  go.SetGlobalBuffer((__gm__ uint32_t*)out, 48);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 256);
  LocalTensor<float> t = buf.Get<float>();
  uint32_t shape[3] = {2, 4, 8};
  uint32_t orig[2] = {8, 7};
  if (gm.GetValue(0) == 1) {
    uint32_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    t.SetShapeInfo(ShapeInfo(9, nine));
  }
  t.SetShapeInfo(ShapeInfo(3, shape, 2, orig, DataFormat::NZ));
  LocalTensor<float> copy = t;
  go.SetShapeInfo(ShapeInfo(2, orig, DataFormat::ND));
  const ShapeInfo infos[3] = {copy.GetShapeInfo(), go.GetShapeInfo(), buf.Get<float>().GetShapeInfo()};
  uint32_t k = 0;
  for (const ShapeInfo& s : infos) {
    go.SetValue(k++, s.shapeDim);
    for (int i = 0; i < s.shapeDim; ++i) go.SetValue(k++, s.shape[i]);
    go.SetValue(k++, s.originalShapeDim);
    for (int i = 0; i < s.originalShapeDim; ++i) go.SetValue(k++, s.originalShape[i]);
    go.SetValue(k++, static_cast<uint32_t>(s.dataFormat));
    go.SetValue(k++, static_cast<uint32_t>(GetShapeSize(s)));
  }
}

PYBIND11_MODULE(OPKIT_TEST_MODULE, m) {
  opkit_emu::pybind::register_translator();
  OPKIT_EMU_PY_KERNEL(m, shapes, 2);
}
