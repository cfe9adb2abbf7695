"""Inputs and golden of compare_select_tail (float32): z = max(x, y) elementwise over 1000 elements."""
import numpy as np

rng = np.random.default_rng(6)
x = rng.normal(size=1000).astype(np.float32)
y = rng.normal(size=1000).astype(np.float32)
x.tofile("./input/input_x.bin")
y.tofile("./input/input_y.bin")
np.maximum(x, y).tofile("./output/golden.bin")
