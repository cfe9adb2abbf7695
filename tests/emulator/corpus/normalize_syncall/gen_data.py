"""Input and golden output of normalize_syncall (float32): y = x / sum(x), in float64."""
import numpy as np

rng = np.random.default_rng(3)
x = rng.uniform(0.5, 2.0, 8 * 1000).astype(np.float32)
x.tofile("./input/input_x.bin")
(x.astype(np.float64) / x.astype(np.float64).sum()).astype(np.float32).tofile("./output/golden.bin")
