"""The AMCT config options the oracle checks, each as the arguments of create_quant_config plus an edit of the JSON
it writes -- what a user would set. Each scenario is a function of the model's default AMCT config (a dict) and
its Conv+BN pairs, so that layer names come from the model at hand."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable


def _layers(cfg: dict) -> list[str]:
    return [k for k, v in cfg.items() if isinstance(v, dict)]


def _each_layer(fn: Callable[[dict], None]) -> Callable[[dict], None]:
    def edit(cfg: dict) -> None:
        for name in _layers(cfg):
            fn(cfg[name])
    return edit


@dataclass
class Scenario:
    name: str
    what: str
    skip_layers: Callable[[list[str], dict], list[str]] = lambda layers, pairs: []
    batch_num: int = 1
    activation_offset: bool = True
    edit: Callable[[dict, dict], None] | None = None          # (config dict, conv -> bn pairs)
    tags: list[str] = field(default_factory=list)

    def config_kw(self, layers: list[str], pairs: dict) -> dict:
        edit = (lambda cfg: self.edit(cfg, pairs)) if self.edit else None
        return {"skip_layers": self.skip_layers(layers, pairs), "batch_num": self.batch_num,
                "activation_offset": self.activation_offset, "edit": edit}


def _per_layer(cfg, pairs):
    # an LSTM/GRU keeps channel_wise: AMCT fails on one weight scale for it ("Layer's quant factor length 1 is
    # not suitable mutiple of <layer>", weight_calibration.py:152-163); pairs["rnn"] names them
    for name in _layers(cfg):
        if name not in pairs.get("rnn", ()):
            cfg[name]["weight_quant_params"].update(channel_wise=False)


def _no_fusion(cfg, pairs):
    cfg["do_fusion"] = False


def _skip_fusion(cfg, pairs):
    cfg["skip_fusion_layers"] = sorted(k for k in pairs if k != "rnn")[:1]


def _ifmr(cfg, pairs):
    _each_layer(lambda lc: lc["activation_quant_params"].update(
        max_percentile=0.999, min_percentile=0.999, search_range=[0.8, 1.2], search_step=0.02))(cfg)


def _hfmg(cfg, pairs):
    _each_layer(lambda lc: lc.__setitem__("activation_quant_params",
                                          {"num_bits": 8, "act_algo": "hfmg", "num_of_bins": 4096}))(cfg)


SCENARIOS = {s.name: s for s in (
    Scenario("default", "create_quant_config's defaults"),
    Scenario("channel_wise_off", "channel_wise false on every layer", edit=_per_layer),
    Scenario("skip_layers", "skip_layers: the first quantizable layer", skip_layers=lambda ls, p: ls[:1]),
    Scenario("activation_offset_off", "activation_offset false (symmetric activations)", activation_offset=False),
    Scenario("batch_num_2", "batch_num 2 (two calibration forwards of 32)", batch_num=2),
    Scenario("do_fusion_off", "do_fusion false (BatchNorm kept apart)", edit=_no_fusion),
    Scenario("skip_fusion_layers", "skip_fusion_layers: the first conv with a BatchNorm", edit=_skip_fusion),
    Scenario("ifmr_params", "IFMR max/min_percentile 0.999, search_range [0.8, 1.2], search_step 0.02",
             edit=_ifmr),
    Scenario("hfmg", "HFMG (num_of_bins 4096) instead of IFMR", edit=_hfmg),
)}


def _act(layer: str, **kw):
    return lambda cfg: cfg[layer]["activation_quant_params"].update(**kw)


# Configs AMCT's quantize_model rejects (on bn_cnn's default config): opkit must reject each with AMCT's message
BAD_CONFIGS = {
    "search_step": _act("features.0", search_step=0.7),
    "search_range": _act("features.0", search_range=[1.3, 0.7]),
    "max_percentile": _act("features.0", max_percentile=0.4),
    "num_of_bins": lambda cfg: cfg["features.0"].__setitem__(
        "activation_quant_params", {"num_bits": 8, "act_algo": "hfmg", "num_of_bins": 1000}),
    "channel_wise_linear": lambda cfg: cfg["fc"]["weight_quant_params"].update(channel_wise=True),
    "batch_num": lambda cfg: cfg.update(batch_num=0),
    "layer_name": lambda cfg: cfg.__setitem__("features.9", dict(cfg["fc"])),
}



def _first(pattern: str, repl: str):
    def edit(text: str) -> str:
        out, n = re.subn(pattern, repl, text, count=1)
        assert n == 1, pattern
        return out
    return edit


def _both(*edits):
    def edit(text: str) -> str:
        for e in edits:
            text = e(text)
        return text
    return edit


def _drop_weights(text: str) -> str:
    """The first record without scale_w / offset_w."""
    head, first, rest = text.partition("}\n}")
    return re.sub(r"\n    (scale_w|offset_w): [^\n]*", "", head) + first + rest


# record files AMCT's reader refuses (parse_record_file.py), each an edit of the text of a good record of
# bn_cnn; save_model is given each (oracle.amct_record_rejections)
BAD_RECORDS: dict[str, Callable[[str], str]] = {
    "unknown_field": _first(r"(\n    offset_d: [^\n]*)", r"\1\n    scale_x: 1.0"),
    "offset_d_float": _first(r"offset_d: -?\d+", "offset_d: 1.5"),
    "missing_scale_d": _first(r"\n    scale_d: [^\n]*", ""),
    "missing_scale_w": _drop_weights,
    "offset_d_range": _first(r"offset_d: -?\d+", "offset_d: 200"),
    "offset_w_nonzero": _first(r"offset_w: 0", "offset_w: 1"),
    "scale_d_negative": _first(r"scale_d: [^\n]*", "scale_d: -0.5"),
    "scale_w_inf": _first(r"scale_w: [^\n]*", "scale_w: inf"),
    "scale_w_offset_w_lengths": _first(r"\n    offset_w: 0", ""),
    "scale_w_channels": _both(_first(r"\n    scale_w: [^\n]*", ""), _first(r"\n    offset_w: 0", "")),
    "act_type": _first(r'act_type: "INT8"', 'act_type: "INT5"'),
    "unknown_layer": _first(r'key: "([^"]*)"', r'key: "\1_nope"'),
}
