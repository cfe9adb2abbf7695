"""Modelled Ascend 910B device time from the emulator's launch counters (a model, not a measurement).

Inputs: ``opkit_launch_stats`` (python/opkit/include/opkit/launch_abi.h) of one launch, as
``opkit.registration.last_launch()`` returns them — GM bytes read and
written, 256-byte vector repeats, and the busiest block's share of both.

Model (all figures are ESTIMATES; docs/facts/ascendc-facts.md §4 found no official number):
- HBM bandwidth 1.6 TB/s (an unattributed public hardware model for 910B1-B3), shared equally by the
  48 vector cores (AIV) — so a launch using few blocks cannot reach the full bandwidth;
- vector rate: one 256-byte repeat per AIV per cycle at 1.8 GHz (npu-smi reports 1800 MHz on 910B1);
- blocks beyond 48 run in waves.
  memory time = busiest block's GM bytes / (BW / 48) * waves   (= total / BW when blocks are balanced)
  vector time = busiest block's repeats / (1.8e9 /s) * waves
  modelled time = max(memory time, vector time)      (perfect overlap of copy and compute: a lower bound)
  HBM floor = the op's unavoidable bytes (inputs read once + outputs written once) / BW.
"""
from __future__ import annotations

import math

HBM_BYTES_PER_S = 1.6e12      # estimate
AIV_CORES = 48                # 910B1/B2 vector_core_cnt (platform_config ini)
CLOCK_HZ = 1.8e9              # estimate (npu-smi, 910B1)
REPEATS_PER_CYCLE = 1.0       # estimate: one 256 B repeat per AIV per cycle


def model(stats: dict, ideal_bytes: int) -> dict:
    """Modelled 910B time (seconds) of one launch; see the module docstring. Keys marked estimates."""
    blocks = max(1, int(stats.get("blocks", 1)))
    waves = math.ceil(blocks / AIV_CORES)
    gm = int(stats.get("gm_read_bytes", 0)) + int(stats.get("gm_write_bytes", 0))
    busiest_gm = int(stats.get("max_block_gm_bytes", 0)) or gm / blocks
    busiest_rep = int(stats.get("max_block_vector_repeats", 0))
    t_mem = max(gm / HBM_BYTES_PER_S, busiest_gm / (HBM_BYTES_PER_S / AIV_CORES) * waves)
    t_vec = busiest_rep / (CLOCK_HZ * REPEATS_PER_CYCLE) * waves
    t = max(t_mem, t_vec)
    floor = ideal_bytes / HBM_BYTES_PER_S
    return {
        "estimate": True,
        "gm_bytes": gm,
        "ideal_bytes": int(ideal_bytes),
        "vector_repeats": int(stats.get("vector_repeats", 0)),
        "blocks": blocks,
        "memory_s": t_mem,
        "vector_s": t_vec,
        "modelled_s": t,
        "hbm_floor_s": floor,
        "vs_floor": (t / floor) if floor > 0 else None,
        "bound": "memory" if t_mem >= t_vec else "vector",
        "assumptions": f"HBM {HBM_BYTES_PER_S / 1e12:g} TB/s shared by {AIV_CORES} AIV, "
                       f"{REPEATS_PER_CYCLE:g} repeat/cycle at {CLOCK_HZ / 1e9:g} GHz (estimates)",
    }


# -- whole-model estimate from per-layer work (opkit quant's strategy table) ---------------------------------
# Each op as its own launch: time = max(cube work / cube rate, bytes / HBM bandwidth); a model's time is the sum
# (no overlap between ops, no launch overhead: a rough lower bound of a deployment, labelled as an estimate).
# The one cost model of the model-level tools: opkit quant's latency column and opkit experiment's FPS.

CHIPS = {
    # 910B: FP16 cube 320 TFLOPS (docs/facts/ascendc-facts.md §4, a public data sheet); INT8 at twice the FP16
    # MAC rate (Da Vinci cube: 4096 fp16 / 8192 int8 MACs per cycle, Hot Chips 2019) -- a fixed number of operand
    # bytes per cycle, so FP32 at half the fp16 rate (derived, not a published figure); HBM as above.
    "ascend910b": {"cube_flops": {"float16": 320e12, "int8": 640e12, "float32": 320e12 / 2},
                   "hbm_bytes_per_s": HBM_BYTES_PER_S},
    # 310P (Atlas 300I Duo carries two: 280 TOPS INT8, 408 GB/s LPDDR4X in total, vendor data): one chip
    # 140 TOPS INT8, FP16 at half the INT8 rate, 204 GB/s.
    "ascend310p": {"cube_flops": {"float16": 70e12, "int8": 140e12, "float32": 35e12},
                   "hbm_bytes_per_s": 204e9},
}


def op_time(flops: float, nbytes: float, dtype: str = "float16", chip: str = "ascend910b") -> dict:
    """Modelled time of one op: cube work at the chip's rate for ``dtype`` (int8 | float16 | float32; 0 flops
    for vector ops) against its bytes at the memory bandwidth. An estimate."""
    c = CHIPS[chip]
    rate = c["cube_flops"].get(dtype, c["cube_flops"]["float16"])
    t_cube = flops / rate if flops else 0.0
    t_mem = nbytes / c["hbm_bytes_per_s"]
    return {"seconds": max(t_cube, t_mem), "cube_s": t_cube, "memory_s": t_mem,
            "bound": "cube" if t_cube >= t_mem else "memory"}
