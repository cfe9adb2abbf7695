"""Building the variants one ``opkit.quantize`` run compares: calibration (once per config, cached) and the
engine modes of each deployment. Building only -- the variants run through opkit.evaluate (quant/scoring.py)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn as nn

from ..accuracy.policy import Policy
from .calibrate import IfmrMemo, calibrate
from .config import QuantConfig, default_config
from .graph import ModelGraph, read_graph
from .records import LayerRecord
from .variant import QuantVariant, build_variant


@dataclass
class Deploy:
    """How ATC builds the model: the precision policy and the numerics-changing fusions that take effect."""
    policy: Policy
    conv_bn: bool = True            # ConvBatchnormFusionPass
    requant: bool = True            # RequantFusionPass


class VariantBuilder:
    """The model, its graph, the calibration inputs and the deployment: QuantConfig -> QuantVariant."""

    def __init__(self, model: nn.Module, calib: torch.Tensor, deploy: Deploy, log: Callable[[str], None],
                 quant_matmul: bool = False):
        self.model, self.calib, self.deploy, self.log = model, calib, deploy, log
        self.graph: ModelGraph = read_graph(model, (calib[:2],))
        self.matmuls = list(self.graph.matmuls) if quant_matmul else []
        self._records: dict[str, dict[str, LayerRecord]] = {}
        self.ifmr = IfmrMemo()          # IFMR results shared by this model's calibrations

    def records(self, config: QuantConfig, fresh: bool = False) -> dict[str, LayerRecord]:
        """The calibration record of ``config`` (cached by its enabled layers; ``fresh``: calibrate again)."""
        key = hashlib.sha256(json.dumps([config.to_json(only_enabled=True), self.matmuls],
                                        sort_keys=True).encode()).hexdigest()
        if fresh or key not in self._records:
            self.log(f"calibration: {len(config.quant_layers)} layer(s), batch_num {config.batch_num}")
            recs = calibrate(self.model, self.calib, config, self.graph, self.log, matmuls=self.matmuls,
                             memo=self.ifmr)
            if fresh:
                return recs
            self._records[key] = recs
        return self._records[key]

    def variant(self, config: QuantConfig, name: str, records: dict | None = None, conv_bn: bool | None = None,
                requant: bool | None = None) -> QuantVariant:
        recs = records if records is not None else (self.records(config) if config.quant_layers or self.matmuls
                                                    else {})
        v = build_variant(self.model, config, recs, self.graph,
                          atc_conv_bn=self.deploy.conv_bn if conv_bn is None else conv_bn,
                          requant=self.deploy.requant if requant is None else requant, name=name)
        v.policy = self.deploy.policy
        return v

    def float_variant(self, name: str = "fp16", conv_bn: bool | None = None) -> QuantVariant:
        """The model in float under the policy: no AMCT, ATC's ConvBatchnormFusionPass as deployed."""
        cfg = default_config(self.model).with_float(default_config(self.model).layers)
        cfg.do_fusion = False
        return self.variant(cfg, name, records={}, conv_bn=conv_bn)
