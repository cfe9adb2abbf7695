// pybind11 glue for emulator test modules and tools: run a kernel on numpy buffers and turn a rule
// violation into opkit.errors.EmulatorError (rule, call, file, line, block, detail).
//   #include "opkit_emu/pybind.h"
//   extern "C" __global__ __aicore__ void my_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) { ... }
//   PYBIND11_MODULE(mod, m) { opkit_emu::pybind::register_translator(); OPKIT_EMU_PY_KERNEL(m, my_kernel, 3); }
// Python: stats = mod.my_kernel([x, y, tiling_bytes], block_dim=8)
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "kernel_operator.h"

namespace opkit_emu {
namespace pybind {
namespace py = pybind11;

inline void register_translator() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Violation& v) {
      py::object cls = py::module_::import("opkit.errors").attr("EmulatorError");
      py::object e = cls(v.rule, v.call, v.file, v.line, v.block, v.detail);
      PyErr_SetObject(cls.ptr(), e.ptr());
    }
  });
}

inline py::dict stats_dict(const LaunchStats& s) {
  py::dict d;
  d["gm_read_bytes"] = s.total.gm_read_bytes;
  d["gm_write_bytes"] = s.total.gm_write_bytes;
  d["vector_elems"] = s.total.vector_elems;
  d["vector_repeats"] = s.total.vector_repeats;
  d["ub_high_water"] = s.ub_high_water;
  d["max_block_gm_bytes"] = s.max_block_gm_bytes;
  d["max_block_vector_repeats"] = s.max_block_vector_repeats;
  d["blocks"] = s.blocks;
  py::dict ops;
  for (int k = 0; k < static_cast<int>(VecOp::Count_); ++k)
    if (s.total.op_calls[k]) ops[vec_op_name(k)] = s.total.op_elems[k];
  d["op_elems"] = ops;
  py::list per_block;
  for (const BlockStats& b : s.per_block) {
    py::dict x;
    x["gm_read_bytes"] = b.gm_read_bytes;
    x["gm_write_bytes"] = b.gm_write_bytes;
    x["vector_elems"] = b.vector_elems;
    x["vector_repeats"] = b.vector_repeats;
    x["ub_high_water"] = b.ub_high_water;
    per_block.append(x);
  }
  d["per_block"] = per_block;
  return d;
}

// Runs kernel(buffers...) on block_dim blocks. Each buffer is a C-contiguous numpy array or None.
template <size_t N, class F>
py::dict launch(F kernel, const py::list& buffers, uint32_t block_dim, uint64_t tiling_key, uint32_t threads) {
  if (buffers.size() != N)
    throw std::invalid_argument(strf("kernel takes %zu GM arguments, got %zu buffers", N, (size_t)buffers.size()));
  void* args[N > 0 ? N : 1] = {};
  std::vector<GmRegion> gm;
  for (size_t i = 0; i < N; ++i) {
    py::handle h = buffers[i];
    if (h.is_none()) continue;
    auto a = py::reinterpret_borrow<py::array>(h);
    if (!(a.flags() & py::array::c_style)) throw std::invalid_argument(strf("buffer %zu is not C-contiguous", i));
    args[i] = a.mutable_data();
    if (a.nbytes() > 0) gm.push_back({static_cast<const uint8_t*>(args[i]), static_cast<uint64_t>(a.nbytes()), static_cast<int>(i)});
  }
  LaunchOutcome o;
  {
    py::gil_scoped_release nogil;
    o = run_blocks(block_dim, tiling_key, threads, gm, [&]() { invoke_gm(kernel, args, std::make_index_sequence<N>{}); });
  }
  if (o.status == 1) throw Violation(*o.violation);
  if (o.status == 2) throw std::runtime_error("opkit emulator: kernel failed: " + o.error);
  return stats_dict(o.stats);
}

}  // namespace pybind
}  // namespace opkit_emu

#define OPKIT_EMU_PY_KERNEL(m, kernel, num_gm_args)                                                          \
  (m).def(                                                                                                  \
      #kernel,                                                                                              \
      [](const pybind11::list& buffers, uint32_t block_dim, uint64_t tiling_key, uint32_t threads) {        \
        return ::opkit_emu::pybind::launch<(num_gm_args)>(kernel, buffers, block_dim, tiling_key, threads); \
      },                                                                                                    \
      pybind11::arg("buffers"), pybind11::arg("block_dim") = 1, pybind11::arg("tiling_key") = 0,            \
      pybind11::arg("threads") = 0)
