"""Inputs and golden of level0_reduce_rows (float32): per row of (32, 200) the sum, then per row the max.
Integer-valued inputs, so every partial sum of the level-0 ReduceSum's tree is exact."""
import numpy as np

x = np.random.default_rng(6).integers(-50, 50, (32, 200)).astype(np.float32)
x.tofile("./input/input_x.bin")
np.concatenate([x.sum(axis=1), x.max(axis=1)]).astype(np.float32).tofile("./output/golden.bin")
