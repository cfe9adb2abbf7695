// Host-side tiling context: what an op's tiling function sees. Plain C++17, no torch, no CANN,
// so the same <Op>Tiling() runs in the emulator build, in the torch_npu binding and (through a
// generated adapter from gert::TilingContext) in the graph-mode op package.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "opkit/constants.h"
#include "opkit/platform.h"

namespace opkit {

enum class DType : int { Float16 = 0, BFloat16 = 1, Float32 = 2, Int32 = 3, Int64 = 4, Bool = 5, Int8 = 6, UInt8 = 7 };

inline size_t dtype_size(DType d) {
  switch (d) {
    case DType::Float16: case DType::BFloat16: return 2;
    case DType::Float32: case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Bool: case DType::Int8: case DType::UInt8: return 1;
  }
  return 0;
}

struct TensorInfo {
  std::vector<int64_t> shape;
  DType dtype = DType::Float32;
  int64_t numel() const { int64_t n = 1; for (auto s : shape) n *= s; return n; }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  // dim(-1) is the last dimension, as in PyTorch.
  int64_t dim(int64_t i) const {
    if (i < 0) i += rank();
    if (i < 0 || i >= rank()) throw std::out_of_range("TensorInfo::dim: index out of range");
    return shape[static_cast<size_t>(i)];
  }
  size_t elem_size() const { return dtype_size(dtype); }
};

struct TilingContext {
  std::vector<TensorInfo> inputs;   // after the binding's casts: what the kernel will read
  std::vector<TensorInfo> outputs;  // what the kernel will write
  std::map<std::string, double> float_attrs;
  std::map<std::string, int64_t> int_attrs;   // int and bool attrs
  std::map<std::string, std::string> str_attrs;
  Platform platform = kPlatform;

  // Set by the tiling function.
  uint32_t block_dim = 1;          // blocks to launch (1 .. platform.vector_cores)
  uint64_t workspace_bytes = 0;    // GM scratch handed to the kernel (zero-filled by opkit)
  uint64_t tiling_key = 0;         // TILING_KEY_IS branch, if the kernel uses one

  double attr_float(const std::string& n) const { return at(float_attrs, n); }
  int64_t attr_int(const std::string& n) const { return at(int_attrs, n); }
  bool attr_bool(const std::string& n) const { return at(int_attrs, n) != 0; }
  const std::string& attr_str(const std::string& n) const { return at(str_attrs, n); }

 private:
  template <class M>
  static const typename M::mapped_type& at(const M& m, const std::string& n) {
    auto it = m.find(n);
    if (it == m.end()) throw std::out_of_range("TilingContext: no attr named '" + n + "'");
    return it->second;
  }
};

inline constexpr uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
inline constexpr uint64_t align_up(uint64_t a, uint64_t b) { return ceil_div(a, b) * b; }

}  // namespace opkit
