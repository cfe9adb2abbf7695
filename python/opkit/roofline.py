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
