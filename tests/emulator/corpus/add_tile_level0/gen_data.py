"""Inputs and golden output of add_tile_level0 (float16): z = x + y, rounded once."""
import numpy as np

n = 8 * 2 * 2 * 1040
rng = np.random.default_rng(1)
x = rng.uniform(-100, 100, n).astype(np.float16)
y = rng.uniform(-100, 100, n).astype(np.float16)
x.tofile("./input/input_x.bin")
y.tofile("./input/input_y.bin")
(x.astype(np.float64) + y.astype(np.float64)).astype(np.float16).tofile("./output/golden.bin")
