"""Inputs and golden of templated_queue_fma (float32): z = x * y + x, each step rounded to float32."""
import numpy as np

rng = np.random.default_rng(2)
x = rng.uniform(-4, 4, 8 * 4096).astype(np.float32)
y = rng.uniform(-4, 4, 8 * 4096).astype(np.float32)
x.tofile("./input/input_x.bin")
y.tofile("./input/input_y.bin")
((x * y).astype(np.float32) + x).astype(np.float32).tofile("./output/golden.bin")
