"""Inputs and golden of atomic_block_sums (float32): out[0] = sum of all, out[1 + b] = sum of block b."""
import numpy as np

rng = np.random.default_rng(4)
x = rng.uniform(0, 1, 8 * 2048).astype(np.float32)
x.tofile("./input/input_x.bin")
blocks = x.astype(np.float64).reshape(8, 2048).sum(axis=1)
np.concatenate([[blocks.sum()], blocks]).astype(np.float32).tofile("./output/golden.bin")
