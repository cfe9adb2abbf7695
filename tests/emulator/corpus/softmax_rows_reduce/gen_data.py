"""Input and golden output of softmax_rows (float32): softmax over each row of 64, in float64."""
import numpy as np

rng = np.random.default_rng(2)
x = (rng.standard_normal((6 * 48, 64)) * 3).astype(np.float32)
x.tofile("./input/input_x.bin")
e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
(e / e.sum(axis=1, keepdims=True)).astype(np.float32).tofile("./output/golden.bin")
