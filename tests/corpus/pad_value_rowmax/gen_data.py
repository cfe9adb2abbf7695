"""Inputs and golden of pad_value_rowmax (float32): the maximum of each row of a (16, 37) matrix of negatives,
so a pad of 0 instead of -FLT_MAX would show."""
import numpy as np

rng = np.random.default_rng(5)
x = -rng.uniform(1, 100, (16, 37)).astype(np.float32)
x.tofile("./input/input_x.bin")
x.max(axis=1).astype(np.float32).tofile("./output/golden.bin")
