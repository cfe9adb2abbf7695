"""Inputs and golden of gather_reverse (float32): each 256-element tile reversed; offsets are byte offsets."""
import numpy as np

rng = np.random.default_rng(7)
x = rng.normal(size=4 * 256).astype(np.float32)
x.tofile("./input/input_x.bin")
(np.arange(255, -1, -1, dtype=np.uint32) * 4).tofile("./input/input_offsets.bin")
x.reshape(4, 256)[:, ::-1].astype(np.float32).tofile("./output/golden.bin")
