// The row sums the A2 normalization APIs (LayerNorm, LayerNormGrad, DeepNorm) build from level-0 reductions,
// in the order CANN's code adds them (cited on each); shared by lib/normalization/*.h.
#pragma once
#include <vector>

#include "opkit_emu/reduce.h"

namespace opkit_emu {
// CANN's LayerNormReduceSumImpl (layernorm_common_basic_impl.h:37-118), DeepNorm's basic-block sum
// (deepnorm_common_impl.h:180-208) on one row of n floats: repeats of 64 added lane-wise in order onto the first,
// the tail onto its first lanes, then a WholeReduceSum tree of the 64 lanes (lanes past n add 0)
inline float ln_row_sum(const float* v, uint32_t n) {
  constexpr uint32_t R = 64;
  float lanes[R] = {};
  if (n <= R) {
    for (uint32_t j = 0; j < n; ++j) lanes[j] = v[j];
  } else {
    for (uint32_t j = 0; j < R; ++j) lanes[j] = v[j];
    const uint32_t full = n / R, tail = n % R;
    for (uint32_t r = 1; r < full; ++r)
      for (uint32_t j = 0; j < R; ++j) lanes[j] = fadd(v[r * R + j], lanes[j]);
    for (uint32_t j = 0; j < tail; ++j) lanes[j] = fadd(v[full * R + j], lanes[j]);
  }
  return tree_repeat_f32(lanes);
}

// CANN's ReduceSumImpl of one row (layernormgrad_common_impl.h:181-238), DeepNormReduceSumImpl
// (deepnorm_common_impl.h:212-244: RepeatReduceSum levels): each 64-float repeat summed by one
// WholeReduceSum tree (lanes past the row add 0), then the partial sums the same way, until one is left
inline float lng_row_sum(const float* v, uint32_t n) {
  std::vector<float> cur(v, v + n), next;
  do {
    next.assign((cur.size() + 63) / 64, 0.0f);
    for (size_t k = 0; k < next.size(); ++k) {
      float lanes[64] = {};
      for (size_t j = 0; j < 64 && k * 64 + j < cur.size(); ++j) lanes[j] = cur[k * 64 + j];
      next[k] = tree_repeat_f32(lanes);
    }
    cur.swap(next);
  } while (cur.size() > 1);
  return cur[0];
}

}  // namespace opkit_emu
