"""Inputs and golden of scatter_sub_rows (float32): out = var; out[idx[i]] -= updates[i] (distinct indices)."""
import numpy as np

rng = np.random.default_rng(9)
var = rng.uniform(-4, 4, (16, 40)).astype(np.float32)
idx = rng.permutation(16)[:8].astype(np.int32)
upd = rng.uniform(-4, 4, (8, 40)).astype(np.float32)
var.tofile("./input/input_var.bin")
idx.tofile("./input/input_idx.bin")
upd.tofile("./input/input_upd.bin")
out = var.copy()
out[idx] -= upd
out.astype(np.float32).tofile("./output/golden.bin")
