"""`opkit quant`: AMCT post-training quantization, ATC fusion and fp16 overflow, simulated layer by layer in the one
accuracy engine (opkit/accuracy/simulate.py), with the fix. Docs: docs/quant.md.

Modules: algorithms.py (ARQ, IFMR, HFMG arithmetic), config.py (AMCT config JSON), records.py (AMCT record
file), graph.py (Conv+BN pairs from one run), modes.py (the engine's per-layer INT8 / folded modes),
calibrate.py (calibration runs), variant.py (``QuantVariant``: a quantized deployment, picklable).
The flow (run.py): inputs.py (checks) -> builder.py (calibrate, build variants) -> scoring.py (run them through
opkit.evaluate; engine queries on a fixed batch) -> search.py -> overflow.py -> report.py (presentation only).
AMCT's other algorithms, each equal to AMCT's own result: linear_ptq.py + linear_algos.py (the current API's
Linear PTQ: min-max, SmoothQuant, GPTQ, AWQ), linear_search.py (those as per-layer search candidates), dmq.py
(the classic DMQ balancer), ada_round.py (the classic ADA, AdaRound).
"""
from .config import QuantConfig, default_config, load_config, parse_config
from .records import read_record, write_record
from .variant import LayerRecord, QuantVariant, build_variant


def quantize(model, calib, data, **kwargs):
    """AMCT PTQ + ATC simulated on the CPU, with the fix (see opkit.quant.run.quantize; docs/quant.md)."""
    from .run import quantize as _quantize
    return _quantize(model, calib, data, **kwargs)


__all__ = ["quantize", "QuantConfig", "default_config", "load_config", "parse_config", "read_record", "write_record",
           "LayerRecord", "QuantVariant", "build_variant"]
