"""Transformer Linear-layer post-training quantization, as AMCT's current (non-classic) API does it.

AMCT's ``amct_pytorch.quantize(model, cfg)`` swaps every ``nn.Linear`` (not in ``skip_layers``) for a calibration
module, the user runs ``batch_num`` forwards, and the model then runs fake-quant. Four algorithms, one module
each (hicann/amct, amct_pytorch/algorithms/__init__.py:71-76): min-max, SmoothQuant, GPTQ and AWQ. This module
is opkit's own implementation, written from reading that code (the facts, with file:line, are in
docs/facts/quantization-facts.md, "AMCT's Linear PTQ"); its results equal AMCT's bit for bit on the
tests' encoder (tests/test_linear_ptq.py).

    cfg = LinearPTQConfig.preset("smoothquant")          # = AMCT's INT8_SMOOTHQUANT_CFG
    result = quantize_linears(model, cfg, calib_batches)  # model's Linear layers become FakeQuantLinear
    result.layers["blocks.0.fc1"].smooth                  # the smoothing factor AMCT computed

The arithmetic of each algorithm is in linear_algos.py; this module holds the config, the calibration protocol
(which output each calibration forward returns, which AMCT fixes per algorithm) and the fake-quant layer.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import linear_algos as algos
from .linear_algos import LinearQuantParams, WeightSpec

ALGORITHMS = ("minmax", "smoothquant", "gptq", "awq")


class LinearPTQError(ValueError):
    """A Linear PTQ config AMCT would reject, or one opkit does not model; names the field."""


@dataclass(frozen=True)
class LinearPTQConfig:
    """One AMCT Linear PTQ config (AMCT's ``quant_cfg`` + ``algorithm`` + ``batch_num`` + ``skip_layers``)."""
    algorithm: str = "minmax"
    weight_bits: int = 8
    weight_strategy: str = "channel"          # channel | tensor | group
    weight_symmetric: bool = True
    group_size: int | None = None
    act_bits: int | None = None               # None: weight-only (AMCT "NOT_QUANTIZE"); 8: INT8 per-tensor inputs
    act_symmetric: bool = True
    smooth_strength: float = 0.5              # SmoothQuant alpha
    grids_num: int = 20                       # AWQ grid points
    batch_num: int = 1
    skip_layers: tuple[str, ...] = ("lm_head",)

    def __post_init__(self):
        _check(self)

    @property
    def weight(self) -> WeightSpec:
        return WeightSpec(self.weight_bits, self.weight_strategy, self.weight_symmetric, self.group_size)

    @property
    def label(self) -> str:
        act = f"A{self.act_bits}" if self.act_bits else "A16"
        return f"{self.algorithm} W{self.weight_bits}{act}"

    @classmethod
    def preset(cls, algorithm: str) -> "LinearPTQConfig":
        """AMCT's predefined config for the algorithm (amct_pytorch/common/config/config.py:19-73)."""
        if algorithm not in PRESETS:
            raise LinearPTQError(f"algorithm {algorithm!r}: one of {', '.join(PRESETS)}")
        return PRESETS[algorithm]

    @classmethod
    def from_amct(cls, cfg: dict) -> "LinearPTQConfig":
        """Read an AMCT config dict (``{'batch_num', 'quant_cfg': {'weights', 'inputs'}, 'algorithm', ...}``)."""
        return _from_amct(cls, cfg)


def _check(c: LinearPTQConfig) -> None:
    # The combinations AMCT accepts for integer types (amct_pytorch/common/utils/vars.py:67-71).
    if c.algorithm not in ALGORITHMS:
        raise LinearPTQError(f"algorithm: {c.algorithm!r} is not one of {', '.join(ALGORITHMS)}")
    if c.weight_bits not in (4, 8):
        raise LinearPTQError(f"quant_cfg.weights.type: int{c.weight_bits} (int4 or int8)")
    if c.weight_strategy not in ("channel", "tensor", "group"):
        raise LinearPTQError(f"quant_cfg.weights.strategy: {c.weight_strategy!r} (tensor, channel or group)")
    if (c.weight_strategy == "group") != (c.group_size is not None):
        raise LinearPTQError("quant_cfg.weights.group_size: set exactly when strategy is 'group'")
    if c.act_bits not in (None, 8):
        raise LinearPTQError(f"quant_cfg.inputs.type: int{c.act_bits} (only int8 inputs are quantized)")
    if c.act_bits and c.algorithm not in ("minmax", "smoothquant"):
        raise LinearPTQError(f"quant_cfg.inputs: {c.algorithm} is weight-only in AMCT ('NOT_QUANTIZE int*')")
    if c.algorithm == "smoothquant" and not c.act_bits:
        raise LinearPTQError("quant_cfg.inputs: smoothquant needs int8 inputs (AMCT: 'int8 int8' / 'int8 int4')")
    if c.algorithm == "smoothquant" and c.weight_strategy == "group":
        raise LinearPTQError("quant_cfg.weights.strategy: smoothquant takes channel or tensor")
    if c.act_bits and not c.weight_symmetric:
        raise LinearPTQError("quant_cfg.weights.symmetric: with int8 inputs AMCT takes symmetric weights only")
    if c.act_bits and c.weight_strategy == "group":
        raise LinearPTQError("quant_cfg.weights.strategy: 'group' is for weight-only configs (vars.py:125-132)")
    if c.group_size is not None and (c.group_size < 32 or c.group_size % 32):
        raise LinearPTQError(f"quant_cfg.weights.group_size: {c.group_size} (a multiple of 32, >= 32)")
    if not 0.0 <= c.smooth_strength <= 1.0:
        raise LinearPTQError(f"algorithm.smoothquant.smooth_strength: {c.smooth_strength} not in [0, 1]")
    if c.grids_num < 1 or c.batch_num < 1:
        raise LinearPTQError("algorithm.awq.grids_num and batch_num must be >= 1")


def _int_bits(field_name: str, t) -> int:
    if t not in ("int4", "int8"):
        raise LinearPTQError(f"{field_name}: {t!r} is not modelled by opkit (int4, int8)")
    return int(t[3:])


def _from_amct(cls, cfg: dict) -> LinearPTQConfig:
    if not isinstance(cfg, dict) or "quant_cfg" not in cfg or "algorithm" not in cfg:
        raise LinearPTQError("AMCT config: needs 'quant_cfg' and 'algorithm'")
    algo = cfg["algorithm"]
    name = next(iter(algo)) if isinstance(algo, (dict, set, list, tuple)) and len(algo) == 1 else None
    if name is None:
        raise LinearPTQError(f"algorithm: exactly one algorithm, got {algo!r}")
    params = (algo.get(name) or {}) if isinstance(algo, dict) else {}
    w = cfg["quant_cfg"].get("weights") or {}
    i = cfg["quant_cfg"].get("inputs")
    if i and i.get("strategy", "tensor") != "tensor":
        raise LinearPTQError(f"quant_cfg.inputs.strategy: {i.get('strategy')!r} (opkit models 'tensor')")
    return cls(algorithm=name, weight_bits=_int_bits("quant_cfg.weights.type", w.get("type")),
               weight_strategy=w.get("strategy", "channel"), weight_symmetric=w.get("symmetric", True),
               group_size=w.get("group_size"),
               act_bits=_int_bits("quant_cfg.inputs.type", i.get("type")) if i else None,
               act_symmetric=i.get("symmetric", True) if i else True,
               smooth_strength=params.get("smooth_strength", 0.5), grids_num=params.get("grids_num", 20),
               batch_num=cfg.get("batch_num", 1), skip_layers=tuple(cfg.get("skip_layers") or ()))


PRESETS = {   # AMCT's INT8_MINMAX_WEIGHT_QUANT_CFG, INT8_SMOOTHQUANT_CFG, INT4_GPTQ_..., INT4_AWQ_WEIGHT_QUANT_CFG
    "minmax": LinearPTQConfig("minmax", 8),
    "smoothquant": LinearPTQConfig("smoothquant", 8, act_bits=8),
    "gptq": LinearPTQConfig("gptq", 4),
    "awq": LinearPTQConfig("awq", 4),
}


class FakeQuantLinear(nn.Module):
    """A Linear after PTQ: input transform (SmoothQuant divides, AWQ multiplies), INT8 input fake-quant,
    fake-quant weight, and the bias on the INT32 grid when inputs are quantized -- AMCT's fake_quant_forward."""

    def __init__(self, p: LinearQuantParams):
        super().__init__()
        self.params = p
        self.weight_dq = algos.fake_quant_weight(p)
        self.bias_q = algos.bias_on_grid(p)

    def forward(self, x):
        p = self.params
        if p.act_divisor is not None:
            x = x / p.act_divisor.to(x.dtype)
        if p.act_multiplier is not None:
            x = x * p.act_multiplier.to(x.dtype)
        if p.scale_d is not None:
            x = algos.fake_quant(x, p.act_bits, p.scale_d, p.offset_d)
        return F.linear(x, self.weight_dq, self.bias_q)


class CalibratingLinear(nn.Module):
    """Stands for one Linear during calibration; becomes fake-quant once its algorithm has its parameters.

    What a calibration forward returns is AMCT's (per algorithm, see linear_algos.Calibrator.observe): float output
    while observing, fake-quant output from the batch on which the parameters are fixed (GPTQ) or from the
    start (weight-only min-max), so a downstream layer sees what it sees in AMCT.
    """

    def __init__(self, name: str, linear: nn.Linear, config: LinearPTQConfig):
        super().__init__()
        self.name = name
        self.calibrator = algos.make_calibrator(config.algorithm, name, linear, config)
        self.quantized: FakeQuantLinear | None = None
        self._settle()

    def _settle(self):
        if self.quantized is None and self.calibrator.params is not None:
            self.quantized = FakeQuantLinear(self.calibrator.params)

    @torch.no_grad()
    def forward(self, x):
        if self.quantized is None:
            out = self.calibrator.observe(x)
            self._settle()
            if out is not None:
                return out
        return self.quantized(x)


@dataclass
class LinearPTQResult:
    config: LinearPTQConfig
    layers: dict[str, LinearQuantParams] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)   # Linear layers AMCT's rules leave in float (layer_supported)


def _allowed_dtypes(c: LinearPTQConfig) -> tuple[torch.dtype, ...]:
    # AMCT's ALLOWED_WEIGHT_DTYPES (amct_pytorch/common/utils/vars.py:84-88): INT8 weights need a 16-bit model
    if c.weight_bits == 4 and not c.act_bits:
        return (torch.float32, torch.bfloat16, torch.float16)
    return (torch.float16,) if c.act_bits and c.weight_bits == 4 else (torch.bfloat16, torch.float16)


def layer_supported(m: nn.Module, c: LinearPTQConfig) -> bool:
    """AMCT's per-layer rules (parser.py:325-380, 183-284): the weight's dtype; INT4 wants Cin and Cout
    multiples of 8; a group must be smaller than Cin. A layer failing one is left in float, as AMCT does."""
    cout, cin = m.weight.shape
    if m.weight.dtype not in _allowed_dtypes(c):
        return False
    if c.weight_bits == 4 and (cout % 8 or cin % 8):
        return False
    return c.group_size is None or c.group_size < cin


def linear_layers(model: nn.Module, config: LinearPTQConfig, only: list[str] | None = None) -> list[str]:
    """The Linear layers AMCT quantizes: exactly nn.Linear (AMCT matches the type name, so subclasses such as
    MultiheadAttention's out_proj are not), whose name contains no ``skip_layers`` entry (a substring match,
    amct_pytorch/common/config/parser.py:42-57) and that pass :func:`layer_supported`."""
    names = [n for n, m in model.named_modules() if type(m).__name__ == "Linear"
             and not any(s in n for s in config.skip_layers) and layer_supported(m, config)]
    if only is not None:
        unknown = sorted(set(only) - {n for n, m in model.named_modules() if isinstance(m, nn.Linear)})
        if unknown:
            raise LinearPTQError(f"layers: {', '.join(unknown)} are not nn.Linear layers of the model")
        names = [n for n in names if n in set(only)]
    return names


def _set(model: nn.Module, name: str, module: nn.Module) -> None:
    parent, _, leaf = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, leaf, module)


def finish(model: nn.Module, config: LinearPTQConfig, names: list[str]) -> LinearPTQResult:
    """After the calibration forwards: swap each calibration module for its fake-quant layer.
    ``config`` decides which other Linear layers are reported as left in float by AMCT's rules."""
    result = LinearPTQResult(config)
    result.skipped = [n for n, m in model.named_modules() if type(m).__name__ == "Linear"
                      and not any(s in n for s in config.skip_layers) and not layer_supported(m, config)]
    for n in names:
        mod = model.get_submodule(n)
        if mod.quantized is None:
            raise LinearPTQError(f"layer {n}: saw {mod.calibrator.seen} of batch_num={mod.calibrator.config.batch_num} "
                                 "calibration batches (the layer was not reached, or too few batches)")
        result.layers[n] = mod.quantized.params
        _set(model, n, mod.quantized)
    return result


def quantize_linears(model: nn.Module, config: LinearPTQConfig, batches, layers: list[str] | None = None,
                     forward=None) -> LinearPTQResult:
    """Quantize ``model``'s Linear layers in place with ``config`` on the first ``batch_num`` of ``batches``.

    ``forward(model, batch)`` runs one batch (default ``model(batch)``); ``layers`` restricts the layers.
    """
    names = linear_layers(model, config, layers)
    return quantize_plan(model, {n: config for n in names}, batches, forward, config)


def quantize_plan(model: nn.Module, plan: dict[str, LinearPTQConfig], batches, forward=None,
                  config: LinearPTQConfig | None = None) -> LinearPTQResult:
    """Each layer of ``plan`` with its own config, calibrated together in one set of forwards (as many as the
    largest ``batch_num``; a layer calibrated earlier answers in fake-quant for the rest, as in AMCT)."""
    batches = list(batches)
    need = max((c.batch_num for c in plan.values()), default=0)
    if len(batches) < need:
        raise LinearPTQError(f"batch_num={need} but {len(batches)} calibration batches were given")
    for n, c in plan.items():
        mod = model.get_submodule(n)
        if type(mod).__name__ != "Linear":
            raise LinearPTQError(f"layers: {n} is not an nn.Linear layer of the model")
        _set(model, n, CalibratingLinear(n, mod, c))
    with torch.no_grad():
        for b in batches[:need]:
            forward(model, b) if forward else model(b)
    return finish(model, config or next(iter(plan.values()), PRESETS["minmax"]), list(plan))


def with_algorithm(config: LinearPTQConfig, algorithm: str) -> LinearPTQConfig:
    """The preset of another algorithm with this config's batch_num and skip_layers."""
    return replace(LinearPTQConfig.preset(algorithm), batch_num=config.batch_num, skip_layers=config.skip_layers)
