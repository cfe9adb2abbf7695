"""AMCT's per-layer algorithms on top of ARQ + IFMR/HFMG in the classic flow, as one protocol.

An algorithm is read from (and written to) one field of a layer's AMCT config entry; before calibration it
computes what it writes to the record from the first calibration batch; then it changes the weight ARQ
quantizes and, optionally, multiplies the layer's input before the activation is calibrated and quantized.
calibrate.py, variant.py (the deployed layer), run.py (the strategy row and the search action) all go through
``ALGORITHMS``: adding the next one is one class here.

    DMQ (dmq_balancer_param): factors on the first calibration forward of the BN-folded float model, W * f,
    the input times 1 / f (AMCT's quantize_preprocess + quantize_model; opkit/quant/dmq.py has the arithmetic).

    ADA (wts_algo: ada_quantize): AdaRound trained on the first calibration batch (AMCT: the input_data given to
    quantize_model) on the BN-folded model, the other quantized layers ARQ fake-quantized, DMQ applied first
    (opkit/quant/ada_round.py); the record's scale_w is ADA's KL scale; the activations are calibrated through the
    learned (soft-rounded) weights and the deployed codes are round(W_soft / scale_w) -- both checked against
    AMCT's own run (its record and its fake-quant ONNX model's weight initializers).
"""
from __future__ import annotations

import torch
import torch.nn as nn

from .config import QuantConfig
from .graph import ModelGraph
from .records import LayerRecord


class LayerAlgorithm:
    name = ""                    # the strategy row (int8-<name>) and the search action
    config_key = ""              # the AMCT config field of a layer entry it lives in
    what = ""                    # one line for the report: what it does to the layer
    automatic = True             # a strategy row and a search action by default (else only when asked for)

    def layers(self, config: QuantConfig) -> dict[str, object]:
        """The enabled layers it is on, with their parameter."""
        raise NotImplementedError

    def enable(self, config: QuantConfig, names=None) -> QuantConfig:
        """``config`` with the algorithm on ``names`` (default: every layer it applies to), default parameters."""
        raise NotImplementedError

    def calibrate(self, model: nn.Module, graph: ModelGraph, config: QuantConfig, first_batch: torch.Tensor,
                  earlier: dict[str, dict]) -> dict[str, dict]:
        """Per layer it is on, the record fields it writes (LayerRecord attributes), before ARQ + IFMR run;
        ``earlier``: what the algorithms before it in ALGORITHMS wrote."""
        raise NotImplementedError

    def weight_scale(self, record: LayerRecord) -> list[float] | None:
        """A weight scale that replaces ARQ's (the weight returned by ``weight`` is then used as it is)."""
        return None

    def calib_divisor(self, module: nn.Module, record: LayerRecord) -> torch.Tensor | None:
        """A factor the layer's input is divided by in the calibration forward instead (then no input_scale)."""
        return None

    def weight(self, module: nn.Module, w: torch.Tensor, record: LayerRecord) -> torch.Tensor:
        """The (BN-folded) weight ARQ quantizes."""
        return w

    def input_scale(self, module: nn.Module, record: LayerRecord) -> torch.Tensor | None:
        """A factor the layer's input is multiplied by before its activation is calibrated / quantized."""
        return None

    def active(self, record: LayerRecord) -> bool:
        raise NotImplementedError


class DMQ(LayerAlgorithm):
    name = "dmq"
    config_key = "dmq_balancer_param"
    what = "DMQ balancer (activation outliers moved into the weights per input channel)"
    default_strength = 0.5       # AMCT's simple config DMQBalancer.migration_strength default (proto :65-67)

    def layers(self, config):
        return config.dmq_layers

    def enable(self, config, names=None):
        """Strength 0.5 on ``names`` (default all) where DMQ is off; a strength the config already has stays."""
        names = [n for n, lc in config.layers.items() if (names is None or n in names) and lc.dmq is None]
        return config.with_dmq(self.default_strength, names)

    def calibrate(self, model, graph, config, first_batch, earlier):
        """AMCT's quantize_preprocess: BN folded, every other layer float, each balanced layer's input recorded on
        the first calibration forward (recorder.py:169-190); the factor from it and the folded weight."""
        from ..accuracy.simulate import Simulator
        from .dmq import balance_factor, channels_first
        from .capture import capture_modes
        strengths = self.layers(config)
        if not strengths:
            return {}
        mods = dict(model.named_modules())
        modes = capture_modes(model, graph, config, list(strengths))     # float (folded) weights
        sim = Simulator(None, layers=modes)
        for j in range(0, first_batch.shape[0], 64):                      # calibrate.py's chunks
            sim.run(model, (first_batch[j:j + 64],), record=False)
        out = {}
        for n, a in strengths.items():
            x = torch.cat(modes[n].inputs)
            f = balance_factor(*channels_first(x, modes[n].weight, mods[n]), a)
            out[n] = {"balance_factor": [float(v) for v in f]}
        return out

    def _factor(self, record):
        return torch.tensor(record.balance_factor, dtype=torch.float32)

    def weight(self, module, w, record):
        from .dmq import scale_weight
        return scale_weight(module, self._factor(record), w) if self.active(record) else w

    def input_scale(self, module, record):
        from .dmq import inverse_factor
        return inverse_factor(module, self._factor(record)) if self.active(record) else None

    def calib_divisor(self, module, record):
        """AMCT's calibration divides the input by the factor (CaliQuant, cali_quant.py:101-107); the deployed and
        fake-quant models multiply by 1 / f (the Mul node). Checked under the portable arithmetic: with the Mul in
        calibration, pw's scale_d of the DMQ test net moves by one float32 ulp."""
        if not self.active(record):
            return None
        from .dmq import inverse_factor
        shape = inverse_factor(module, self._factor(record)).shape
        return self._factor(record).reshape(shape)

    def active(self, record):
        return record.balance_factor is not None


class ADA(LayerAlgorithm):
    name = "ada"
    config_key = "weight_quant_params.wts_algo: ada_quantize"
    what = "ADA (AdaRound: each weight's rounding learned on the calibration data)"
    seed = 0                     # torch's generator before training (AMCT uses the caller's generator state)
    automatic = False            # AMCT's default 10,000 Adam steps per layer: a row / search action when asked

    def layers(self, config):
        return {n: c.wts for n, c in config.layers.items() if c.quant_enable and c.wts["wts_algo"] == "ada_quantize"}

    def enable(self, config, names=None):
        """AMCT's default ADA parameters on ``names`` (default all) of the types its AdaRoundQuant takes."""
        from .ada_round import SUPPORTED
        from .config import ADA_DEFAULTS
        c = config.copy()
        for n, lc in c.layers.items():
            if (names is None or n in names) and lc.layer_type in SUPPORTED and lc.wts["wts_algo"] != "ada_quantize" \
                    and lc.wts["num_bits"] == 8:
                lc.wts.update({"wts_algo": "ada_quantize", **{k: list(v) if isinstance(v, list) else v
                                                              for k, v in ADA_DEFAULTS.items()}})
        return c

    def calibrate(self, model, graph, config, first_batch, earlier):
        from .ada_round import AdaParams, ada_round
        ada = self.layers(config)
        if not ada:
            return {}
        params = {n: AdaParams(num_iteration=w["num_iteration"], reg_param=w["reg_param"],
                               beta_range=tuple(w["beta_range"]), warm_start=w["warm_start"],
                               channel_wise=w["channel_wise"]) for n, w in ada.items()}
        res = ada_round(_training_model(model, graph, config, earlier, set(ada)), first_batch, params,
                        seed=self.seed)
        return {n: {"ada_weight": res.weights[n].to(torch.float32),
                    "ada_scale": [float(v) for v in res.scales[n].reshape(-1)]} for n in ada}

    def weight(self, module, w, record):
        return record.ada_weight if self.active(record) else w

    def weight_scale(self, record):
        return getattr(record, "ada_scale", None) if self.active(record) else None

    def calib_divisor(self, module, record):
        """With DMQ on too, AMCT's AdaRound module divides the input by the factor itself (ada_round_quant.py:61-70)
        and stays in the calibration model: x / f there, not the Mul by 1 / f (checked: with the Mul one
        float32 ulp of scale_d moves on the layers after). The deployed model has the Mul again."""
        if self.active(record) and record.balance_factor is not None:
            from .dmq import inverse_factor
            shape = inverse_factor(module, torch.tensor(record.balance_factor)).shape
            return torch.tensor(record.balance_factor, dtype=torch.float32).reshape(shape)
        return None

    def active(self, record):
        return record.ada_weight is not None


def _training_model(model: nn.Module, graph: ModelGraph, config: QuantConfig, earlier: dict, ada: set) -> nn.Module:
    """The model ADA trains in, as AMCT's quantize_model has it: Conv+BN folded (torch's fuse_modules, the
    BatchNorm an Identity), DMQ's factors applied, every other quantized layer's weight ARQ fake-quantized."""
    import copy

    from .algorithms import arq
    from .dmq import apply_balance
    from .capture import layer_weights
    m = copy.deepcopy(model).eval()
    mods = dict(m.named_modules())
    pairs = [[c, bn] for c, bn in graph.pairs.items() if layer_weights(model, c, graph, config)[2]]
    if pairs:
        m = torch.ao.quantization.fuse_modules(m, pairs)
        mods = dict(m.named_modules())
    factors = {n: torch.tensor(f["balance_factor"], dtype=torch.float32) for n, f in earlier.items()
               if f.get("balance_factor") is not None}
    if factors:
        m = apply_balance(m, factors)
        mods = dict(m.named_modules())
    for n in config.quant_layers:
        if n in ada:
            continue
        w = mods[n].weight.detach()
        q = arq(w, config.layers[n].wts["num_bits"], config.layers[n].channel_wise)
        with torch.no_grad():
            mods[n].weight.copy_(q.codes * (q.scale.reshape([-1] + [1] * (w.dim() - 1)) if q.scale.numel() > 1
                                            else q.scale.reshape([])))
    return m


ALGORITHMS: tuple[LayerAlgorithm, ...] = (DMQ(), ADA())      # in this order: ADA rounds DMQ's balanced weight


def by_name(name: str) -> LayerAlgorithm:
    return next(a for a in ALGORITHMS if a.name == name)


def chosen(names=None) -> tuple[LayerAlgorithm, ...]:
    """The algorithms tried as strategy rows and search actions: ``names`` (e.g. ("dmq", "ada")), default the
    automatic ones (DMQ). A config that already uses an algorithm is simulated whatever this says."""
    if names is None:
        return tuple(a for a in ALGORITHMS if a.automatic)
    known = {a.name for a in ALGORITHMS}
    bad = [n for n in names if n not in known]
    if bad:
        from ..errors import OpkitError
        raise OpkitError(f"--algorithms: {', '.join(bad)} (known: {', '.join(sorted(known))})")
    return tuple(a for a in ALGORITHMS if a.name in names)


def prepare(module: nn.Module, w: torch.Tensor, record: LayerRecord) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The weight ARQ quantizes and the input factor, every algorithm applied (calibration and deployment)."""
    scale = None
    for a in ALGORITHMS:
        w = a.weight(module, w, record)
        s = a.input_scale(module, record)
        if s is not None:
            scale = s if scale is None else scale * s
    return w, scale


def calibrate_all(model: nn.Module, graph: ModelGraph, config: QuantConfig, first_batch: torch.Tensor) -> dict:
    """Layer -> record fields written by every algorithm (merged)."""
    out: dict[str, dict] = {}
    for a in ALGORITHMS:
        for n, fields in a.calibrate(model, graph, config, first_batch, out).items():
            out.setdefault(n, {}).update(fields)
    return out


def calib_divisor(module: nn.Module, record: LayerRecord) -> torch.Tensor | None:
    for a in ALGORITHMS:
        d = a.calib_divisor(module, record)
        if d is not None:
            return d
    return None


def weight_scale(record: LayerRecord) -> list[float] | None:
    """The weight scale an algorithm fixes (ADA's KL scale), else None (ARQ's)."""
    for a in ALGORITHMS:
        s = a.weight_scale(record)
        if s is not None:
            return s
    return None
