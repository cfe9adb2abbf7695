"""Inputs and golden of static_tiles_sigmoid (float32): y = 1 / (1 + exp(-x)), each step rounded to float32."""
import numpy as np

x = np.random.default_rng(4).uniform(-8, 8, 8 * 2048).astype(np.float32)
x.tofile("./input/input_x.bin")
e = np.exp((-x).astype(np.float32)).astype(np.float32)
(np.float32(1) / (e + np.float32(1)).astype(np.float32)).astype(np.float32).tofile("./output/golden.bin")
