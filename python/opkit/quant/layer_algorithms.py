"""AMCT's per-layer algorithms on top of ARQ + IFMR/HFMG in the classic flow, as one protocol.

An algorithm is read from (and written to) one field of a layer's AMCT config entry; before calibration it
computes what it writes to the record from the first calibration batch; then it changes the weight ARQ
quantizes and, optionally, multiplies the layer's input before the activation is calibrated and quantized.
calibrate.py, variant.py (the deployed layer), run.py (the strategy row and the search action) all go through
``ALGORITHMS``: adding the next one is one class here.

    DMQ (dmq_balancer_param): factors on the first calibration forward of the BN-folded float model, W * f,
    the input times 1 / f (AMCT's quantize_preprocess + quantize_model; opkit/quant/dmq.py has the arithmetic).

Not here yet: ADA (``wts_algo: ada_quantize``): its learned weights are opkit.quant.ada_round, but what AMCT's
save_model deploys from them has not been compared with AMCT; opkit quant refuses the key (config.py).
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

    def layers(self, config: QuantConfig) -> dict[str, object]:
        """The enabled layers it is on, with their parameter."""
        raise NotImplementedError

    def enable(self, config: QuantConfig, names=None) -> QuantConfig:
        """``config`` with the algorithm on ``names`` (default: every layer it applies to), default parameters."""
        raise NotImplementedError

    def calibrate(self, model: nn.Module, graph: ModelGraph, config: QuantConfig,
                  first_batch: torch.Tensor) -> dict[str, dict]:
        """Per layer it is on, the record fields it writes (LayerRecord attributes), before ARQ + IFMR run."""
        raise NotImplementedError

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

    def calibrate(self, model, graph, config, first_batch):
        """AMCT's quantize_preprocess: BN folded, every other layer float, each balanced layer's input recorded on
        the first calibration forward (recorder.py:169-190); the factor from it and the folded weight."""
        from ..accuracy.simulate import Simulator
        from .dmq import balance_factor, channels_first
        from .variant import capture_modes
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

    def active(self, record):
        return record.balance_factor is not None


ALGORITHMS: tuple[LayerAlgorithm, ...] = (DMQ(),)


def by_name(name: str) -> LayerAlgorithm:
    return next(a for a in ALGORITHMS if a.name == name)


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
        for n, fields in a.calibrate(model, graph, config, first_batch).items():
            out.setdefault(n, {}).update(fields)
    return out
