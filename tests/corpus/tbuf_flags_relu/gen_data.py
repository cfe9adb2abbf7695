"""Inputs and golden of tbuf_flags_relu (float16 I/O): y = 2 * relu(x) in float32, rounded once to float16."""
import numpy as np

rng = np.random.default_rng(3)
x = rng.uniform(-10, 10, 4 * 2048).astype(np.float16)
x.tofile("./input/input_x.bin")
(2 * np.maximum(x.astype(np.float32), 0)).astype(np.float16).tofile("./output/golden.bin")
