"""AMCT's quantization config JSON: read it against a model (with AMCT's checks and errors), fill defaults, write it.

The JSON form is the one ``amct_pytorch.create_quant_config`` writes and ``quantize_model`` reads (hicann/amct,
amct_pytorch/classic/graph_based/common/config/{config_base,field}.py; user guide "Quantization configuration
file")::

    {"version": 1, "batch_num": 1, "activation_offset": true, "do_fusion": true, "skip_fusion_layers": [],
     "<module path>": {"quant_enable": true,
                       "activation_quant_params": {"num_bits": 8, "max_percentile": 0.999999,
                           "min_percentile": 0.999999, "search_range": [0.7, 1.3], "search_step": 0.01,
                           "act_algo": "ifmr"},                  # or {"num_bits": 8, "num_of_bins": 4096, "act_algo": "hfmg"}
                       "weight_quant_params": {"num_bits": 8, "wts_algo": "arq_quantize", "channel_wise": true}}}

Reading follows AMCT: a layer is quantized when it is listed with ``quant_enable: true``; listed layers must be
module paths of quantizable modules (Conv1d/2d/3d, Linear, ConvTranspose1d/2d, AvgPool2d, LSTM, GRU; opkit
simulates each, with the limits ``unsimulated`` names); ``channel_wise: true`` on a Linear is AMCT's error "The channel_wise must be False
for layer type Linear in layer <name>". Writing uses AMCT's key order and ``indent=4, separators=(',', ':')``.
"""
from __future__ import annotations

import copy
import difflib
import json
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path

import torch.nn as nn

from ..errors import OpkitError
from .algorithms import ACT_BITS, WTS_BITS

ROOT_KEYS = ("version", "batch_num", "activation_offset", "do_fusion", "fakequant_precision_mode",
             "skip_fusion_layers")
# AMCT capacity_config.csv (PyTorch): module types it can quantize, channel-wise types, Conv+BN fusion types
QUANTIZABLE_TYPES = ("Conv2d", "Conv3d", "Linear", "ConvTranspose2d", "AvgPool2d", "Conv1d", "ConvTranspose1d",
                     "GRU", "LSTM")
CHANNEL_WISE_TYPES = ("Conv2d", "Conv3d", "ConvTranspose2d", "Conv1d", "LSTM", "GRU", "ConvTranspose1d")
FUSE_TYPES = ("Conv2d", "Conv3d", "Conv1d")
# what opkit's engine runs in INT8 (quant/modes.py QuantLayer, quant/rnn.py QuantRnn): every type AMCT's PyTorch
# classic flow lists (capacity_config.csv QUANTIZABLE_TYPES), with the limits unsimulated() names
SIMULATED_TYPES = ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "AvgPool2d", "Linear", "LSTM",
                   "GRU")
IFMR_KEYS = ("num_bits", "max_percentile", "min_percentile", "search_range", "search_step", "act_algo",
             "asymmetric")
HFMG_KEYS = ("num_bits", "num_of_bins", "act_algo", "asymmetric")
HFMG_BINS = (1024, 2048, 4096, 8192)
IFMR_DEFAULTS = {"num_bits": 8, "max_percentile": 0.999999, "min_percentile": 0.999999, "search_range": [0.7, 1.3],
                 "search_step": 0.01, "act_algo": "ifmr"}
HFMG_DEFAULTS = {"num_bits": 8, "num_of_bins": 4096, "act_algo": "hfmg"}
# AMCT's ADA defaults (proto/calibration_config_pytorch.proto:56-63; field.py NUM_ITERATION, REG_PARAM, ...)
ADA_DEFAULTS = {"num_iteration": 10000, "reg_param": 0.01, "beta_range": [20.0, 2.0], "warm_start": 0.2}


_SHARED = frozenset((int, float, str, bool, type(None)))     # immutable: shared, not copied


def _plain_copy(v):
    """copy.deepcopy of a config value: dicts, lists and tuples rebuilt, numbers / strings / None shared (they are
    immutable); anything else through copy.deepcopy. (A scalar inside a dict or list is taken as it is without a
    call: most of a config is scalars, and the search copies the config at every step.)"""
    if isinstance(v, dict):
        return {k: x if type(x) in _SHARED else _plain_copy(x) for k, x in v.items()} if type(v) is dict \
            else copy.deepcopy(v)
    if type(v) is list:
        return [x if type(x) in _SHARED else _plain_copy(x) for x in v]
    if type(v) is tuple:
        return tuple(_plain_copy(x) for x in v)
    if v is None or type(v) in (int, float, str, bool):
        return v
    return copy.deepcopy(v)


@dataclass
class LayerConfig:
    layer_type: str             # AMCT's layer type: the module's class name (Conv2d, Linear ...)
    quant_enable: bool
    act: dict                   # activation_quant_params, defaults filled
    wts: dict                   # weight_quant_params, defaults filled
    dmq: float | None = None    # dmq_balancer_param: DMQ's migration strength (None: no DMQ on this layer)

    @property
    def channel_wise(self) -> bool:
        return bool(self.wts["channel_wise"])

    def asymmetric(self, activation_offset: bool) -> bool:
        """A layer's ``asymmetric`` wins over the global ``activation_offset``."""
        a = self.act.get("asymmetric")
        return activation_offset if a is None else bool(a)

    def to_json(self) -> dict:
        act = {k: self.act[k] for k in (IFMR_KEYS if self.act["act_algo"] == "ifmr" else HFMG_KEYS) if k in self.act}
        if act.get("asymmetric") is None:
            act.pop("asymmetric", None)
        wts = {"num_bits": self.wts["num_bits"], "wts_algo": self.wts["wts_algo"], "channel_wise": self.wts["channel_wise"]}
        if self.wts["wts_algo"] == "ada_quantize":
            wts |= {k: self.wts[k] for k in ADA_DEFAULTS}
        out = {"quant_enable": self.quant_enable}
        if self.dmq is not None:
            out["dmq_balancer_param"] = self.dmq
        return out | {"activation_quant_params": act, "weight_quant_params": wts}


@dataclass
class QuantConfig:
    layers: dict[str, LayerConfig]                       # every quantizable layer opkit saw, in model order
    version: int = 1
    batch_num: int = 1
    activation_offset: bool = True
    do_fusion: bool = True
    skip_fusion_layers: list[str] = field(default_factory=list)
    source: str = ""                                     # the file it was read from, for messages

    @property
    def quant_layers(self) -> list[str]:
        return [n for n, c in self.layers.items() if c.quant_enable]

    def copy(self) -> "QuantConfig":
        """A deep copy (the search makes one per step and action: copy.deepcopy's generic walk was most of it)."""
        return replace(self, layers={n: replace(lc, act=_plain_copy(lc.act), wts=_plain_copy(lc.wts))
                                     for n, lc in self.layers.items()},
                       skip_fusion_layers=_plain_copy(self.skip_fusion_layers))

    def with_float(self, names) -> "QuantConfig":
        """This config with ``names`` kept in float (quant_enable false)."""
        c = self.copy()
        for n in names:
            c.layers[n].quant_enable = False
        return c

    def with_channel_wise(self, value: bool, names=None) -> "QuantConfig":
        """This config with channel_wise set on the (given, or all) layers whose type allows it."""
        c = self.copy()
        for n, lc in c.layers.items():
            if (names is None or n in names) and lc.layer_type in CHANNEL_WISE_TYPES:
                lc.wts["channel_wise"] = value
        return c

    def with_dmq(self, strength: float | None, names=None) -> "QuantConfig":
        """This config with DMQ's migration strength (dmq_balancer_param) on the (given, or all) layers;
        ``None`` turns it off."""
        from .dmq import BALANCED_TYPES
        c = self.copy()
        for n, lc in c.layers.items():
            if (names is None or n in names) and lc.layer_type in BALANCED_TYPES:
                lc.dmq = strength
        return c

    @property
    def dmq_layers(self) -> dict[str, float]:
        return {n: c.dmq for n, c in self.layers.items() if c.quant_enable and c.dmq is not None}

    def to_json(self, only_enabled: bool = False) -> dict:
        out = {"version": self.version, "batch_num": self.batch_num, "activation_offset": self.activation_offset,
               "do_fusion": self.do_fusion, "skip_fusion_layers": list(self.skip_fusion_layers)}
        for name in sorted(self.layers):                 # AMCT sorts the layer entries by name
            if only_enabled and not self.layers[name].quant_enable:
                continue
            out[name] = self.layers[name].to_json()
        return out

    def write(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(self.to_json(), indent=4, separators=(",", ":")) + "\n")
        return p


def quantizable_layers(model: nn.Module) -> dict[str, str]:
    """Module path -> AMCT layer type for the modules AMCT can quantize (module-level, zero padding)."""
    out = {}
    for name, m in model.named_modules():
        t = type(m).__name__
        if t in QUANTIZABLE_TYPES and name:
            if getattr(m, "padding_mode", "zeros") != "zeros":
                continue                                  # AMCT check_padding_mode: not quantizable
            if t in ("LSTM", "GRU") and (m.num_layers != 1 or m.bidirectional or getattr(m, "proj_size", 0)):
                continue                                  # AMCT check_lstm_limit / check_gru_limit
            out[name] = t
    return out


def unsimulated(model: nn.Module) -> dict[str, str]:
    """Layers AMCT's classic flow quantizes that opkit does not simulate in INT8: module path -> why."""
    mods = dict(model.named_modules())
    out = {}
    for n, t in quantizable_layers(model).items():
        if t not in SIMULATED_TYPES:
            out[n] = f"AMCT quantizes {t} layers; opkit does not simulate {t} in INT8 yet"
        elif t in ("LSTM", "GRU"):
            m = mods[n]
            # AMCT's check_lstm_limit / check_gru_limit (configuration/check.py:859-1009): one layer, forward only
            if m.num_layers != 1 or m.bidirectional or getattr(m, "proj_size", 0):
                continue                                   # AMCT does not quantize it either
            if not m.batch_first:
                out[n] = (f"AMCT's config lists this {t}, but its calibration joins the hidden inputs batch-first "
                          "(cali_quant.py:113-115), which a sequence-first RNN does not fit; opkit simulates "
                          "batch_first=True only")
    return out


def _default_layer(layer_type: str) -> LayerConfig:
    wts = {"num_bits": 8, "wts_algo": "arq_quantize", "channel_wise": layer_type in CHANNEL_WISE_TYPES}
    return LayerConfig(layer_type, True, dict(IFMR_DEFAULTS), wts)


def default_config(model: nn.Module, skip_layers=(), batch_num: int = 1, activation_offset: bool = True) -> QuantConfig:
    """What ``create_quant_config(config_file, model, skip_layers, batch_num, activation_offset)`` writes: every
    quantizable layer (those opkit simulates) with AMCT's defaults, ``skip_layers`` disabled."""
    types = quantizable_layers(model)
    unknown = [s for s in skip_layers if s not in dict(model.named_modules())]
    if unknown:
        raise OpkitError(f"skip_layers: {_unknown_msg(unknown, list(types))}")
    skip = unsimulated(model)
    layers = {n: _default_layer(t) for n, t in types.items() if n not in skip}
    for s in skip_layers:
        if s in layers:
            layers[s].quant_enable = False
    return QuantConfig(layers, batch_num=batch_num, activation_offset=activation_offset)


def _unknown_msg(names: list[str], real: list[str]) -> str:
    parts = []
    for n in names:
        close = difflib.get_close_matches(n, real, n=3, cutoff=0.5)
        parts.append(f"{n!r}" + (f" (closest: {', '.join(close)})" if close else ""))
    return "no such layer in the model: " + "; ".join(parts)


def _err(src: str, msg: str) -> OpkitError:
    return OpkitError(f"{src}: {msg}")


def _check_bool(src, where, v):
    if not isinstance(v, bool):
        raise _err(src, f"{where} must be true or false; got {v!r}")


def _parse_act(src: str, name: str, node, activation_offset: bool) -> dict:
    where = f"{name}.activation_quant_params"
    if not isinstance(node, dict):
        raise _err(src, f"{where}: expected an object")
    ifmr_only = [k for k in node if k in ("max_percentile", "min_percentile", "search_range", "search_step")]
    hfmg_only = [k for k in node if k == "num_of_bins"]
    algo = node.get("act_algo")
    if algo == "ifmr":
        ifmr_only.append("act_algo")
    elif algo == "hfmg":
        hfmg_only.append("act_algo")
    elif algo is not None:
        raise _err(src, f"{where}.act_algo: act_algo must be ifmr or hfmg; got {algo!r}")
    if ifmr_only and hfmg_only:                         # AMCT: the two algorithms' parameters exclude each other
        raise _err(src, f"{where}: {ifmr_only} and {hfmg_only} can not appear at same time")
    algo = "hfmg" if hfmg_only else "ifmr"
    allowed = IFMR_KEYS if algo == "ifmr" else HFMG_KEYS
    extra = [k for k in node if k not in allowed]
    if extra:
        raise _err(src, f"{where}: Unknown parameter {extra[0]} in activation_quant_params "
                        f"(allowed for {algo}: {', '.join(allowed)})")
    act = dict(IFMR_DEFAULTS if algo == "ifmr" else HFMG_DEFAULTS)
    act.update(node)
    act["act_algo"] = algo
    if act["num_bits"] not in ACT_BITS or isinstance(act["num_bits"], bool):
        raise _err(src, f"{where}.num_bits: activation num_bits is not in {list(ACT_BITS)}")
    if "asymmetric" in act and act["asymmetric"] is not None:
        _check_bool(src, f"{where}.asymmetric", act["asymmetric"])
    if algo == "ifmr":
        for k in ("max_percentile", "min_percentile"):
            v = act[k]
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0.5 < float(v) <= 1.0:
                raise _err(src, f"{where}.{k}: The {k} must be greater than 0.5 and less than or equal to 1.0")
        sr = act["search_range"]
        if not isinstance(sr, list) or len(sr) != 2 or not all(isinstance(v, (int, float)) for v in sr):
            raise _err(src, f"{where}.search_range: The search_range must have two floating-point number")
        if sr[0] <= 0:
            raise _err(src, f"{where}.search_range: search_range[0] must be greater than zero")
        if sr[0] >= sr[1]:
            raise _err(src, f"{where}.search_range: search_range[0] must be less than search_range[1]")
        step = act["search_step"]
        if not isinstance(step, (int, float)) or step <= 0:
            raise _err(src, f"{where}.search_step: The search_step must be greater than zero")
        if Decimal(str(step)) > Decimal(str(sr[1])) - Decimal(str(sr[0])):
            raise _err(src, f"{where}.search_step: The search_step must be less than or equal to "
                            "(search_range[1] - search_range[0])")
    elif act["num_of_bins"] not in HFMG_BINS:
        raise _err(src, f"{where}.num_of_bins: num_of_bins {act['num_of_bins']} must be in {list(HFMG_BINS)}")
    return act


def _parse_dmq(src: str, name: str, v) -> float | None:
    """dmq_balancer_param, checked as AMCT's DMQBalancerParamField (common/config/field.py:509-523): a float
    (an int such as 1 is refused, as AMCT's isinstance check does) in [0.2, 0.8]."""
    if v is None:
        return None
    where = f"{name}.dmq_balancer_param"
    if not isinstance(v, float):
        raise _err(src, f"{where}: Type of dmq_balancer_param should be <class 'float'>, but is {type(v)}")
    if not 0.2 <= v <= 0.8:
        raise _err(src, f"{where}: The dmq_balancer_param must be in range [0.2, 0.8]; got {v}")
    return v


def _check_ada(src: str, where: str, name: str, node: dict, layer_type: str) -> None:
    """ADA's parameters, checked as AMCT's AdaAlgField subclasses (common/config/field.py:582-640), with its
    messages; and what opkit models of ADA (ada_round.py: AMCT's AdaRoundQuant layer types, 8-bit codes)."""
    from .ada_round import SUPPORTED
    if layer_type not in SUPPORTED:
        raise _err(src, f"{where}.wts_algo: ada_quantize on a {layer_type}: AMCT's AdaRoundQuant takes "
                        f"{'/'.join(SUPPORTED)} (custom_op/ada_round_quant.py:77-99)")
    if node.get("num_bits", 8) != 8:
        raise _err(src, f"{where}.num_bits: opkit models ada_quantize with 8-bit weights (AMCT's AdaRoundQuant "
                        "clamps the codes to [-128, 127])")
    if "beta_range" in node:
        v = node["beta_range"]
        if not isinstance(v, list):
            raise _err(src, f"{where}.beta_range: Type of beta_range should be <class 'list'>, but is {type(v)}")
        if len(v) != 2 or not all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in v):
            raise _err(src, f"{where}.beta_range: The beta_range must have two floating-point number")
        if v[0] <= v[1]:
            raise _err(src, f"{where}.beta_range: beta_range beta_range_start must large than beta_range_end")
        if v[1] <= 0:
            raise _err(src, f"{where}.beta_range: beta_range beta_range_end must large than 0")
    for k, rule in (("warm_start", "must be less than 1 and larger than 0"),
                    ("reg_param", "must be less than 1 and larger than 0"),
                    ("num_iteration", "must be larger or equal to 0")):
        if k not in node:
            continue
        v = node[k]
        if not isinstance(v, (int, float)) or isinstance(v, bool) or (k == "num_iteration" and not isinstance(v, int)):
            raise _err(src, f"{where}.{k}: {k} must be a {'integer' if k == 'num_iteration' else 'number'}; got {v!r}")
        bad = v < 0 if k == "num_iteration" else not 0 < v < 1
        if bad:
            raise _err(src, f"{where}.{k}: {k} {rule}")


def _parse_wts(src: str, name: str, node, layer_type: str) -> dict:
    where = f"{name}.weight_quant_params"
    if not isinstance(node, dict):
        raise _err(src, f"{where}: expected an object")
    algo = node.get("wts_algo", "arq_quantize")
    if algo not in ("arq_quantize", "ada_quantize"):
        raise _err(src, f"{where}.wts_algo: wts_algo must be arq_quantize or ada_quantize; got {algo!r}")
    allowed = ("num_bits", "wts_algo", "channel_wise") + (tuple(ADA_DEFAULTS) if algo == "ada_quantize" else ())
    for k in node:
        if k not in allowed:
            raise _err(src, f"{where}: {k} is not valid param of quantize {algo}")
    if algo == "ada_quantize":
        _check_ada(src, where, name, node, layer_type)
    wts = {"num_bits": 8, "wts_algo": algo, "channel_wise": layer_type in CHANNEL_WISE_TYPES}
    if algo == "ada_quantize":
        wts.update(copy.deepcopy(ADA_DEFAULTS))
    wts.update(node)
    if wts["num_bits"] not in WTS_BITS or isinstance(wts["num_bits"], bool):
        raise _err(src, f"{where}.num_bits: weight num_bits is not in {list(WTS_BITS)}")
    _check_bool(src, f"{where}.channel_wise", wts["channel_wise"])
    if layer_type in ("LSTM", "GRU") and not wts["channel_wise"]:
        # AMCT splits the weight scales into gate blocks and fails on one (weight_calibration.py:152-163)
        raise _err(src, f"{where}.channel_wise: Layer's quant factor length 1 is not suitable mutiple of {name} "
                        f"(AMCT quantizes {layer_type} weights with channel_wise true only)")
    if wts["channel_wise"] and layer_type not in CHANNEL_WISE_TYPES:
        # AMCT ChannelWiseField.check, wrapped by LayerPlhField with " in layer <name>"
        raise _err(src, f"The channel_wise must be False for layer type {layer_type} in layer {name}")
    return wts


def parse_config(data: dict, model: nn.Module, src: str = "config") -> QuantConfig:
    """An AMCT config (the JSON's dict) checked against ``model``; errors name the file, layer and field."""
    if not isinstance(data, dict):
        raise _err(src, "an AMCT quantization config is a JSON object")
    all_names = [n for n, _ in model.named_modules() if n]
    types = {n: type(m).__name__ for n, m in model.named_modules() if n}
    quantizable = quantizable_layers(model)
    unknown = [k for k in data if k not in ROOT_KEYS and k not in types]
    if unknown:
        msg = _unknown_msg(unknown, all_names)
        raise _err(src, f"{msg} (AMCT: \"{unknown[0]} is an invalid layer name or parameter.\")")
    root = {k: data[k] for k in ROOT_KEYS if k in data}
    if root.get("version", 1) != 1:
        raise _err(src, "The version must be 1.")
    bn = root.get("batch_num", 1)
    if not isinstance(bn, int) or isinstance(bn, bool) or bn <= 0:
        raise _err(src, "The batch_num must be greater than zero.")
    for k in ("activation_offset", "do_fusion"):
        if k in root:
            _check_bool(src, k, root[k])
    fpm = root.get("fakequant_precision_mode", "DEFAULT")
    if fpm not in ("DEFAULT", "FORCE_FP16_QUANT"):
        raise _err(src, f"Type of fakequant_precision_mode should be ['DEFAULT', 'FORCE_FP16_QUANT'], but is {fpm}")
    sfl = root.get("skip_fusion_layers", [])
    if not isinstance(sfl, list) or not all(isinstance(s, str) for s in sfl):
        raise _err(src, "skip_fusion_layers must be a list of layer names")
    missing = [s for s in sfl if s not in types]
    if missing:
        raise _err(src, f"skip_fusion_layers: {_unknown_msg(missing, all_names)}")
    bad = [s for s in sfl if types[s] not in FUSE_TYPES]
    if bad:
        raise _err(src, f"Skip fusion layer \"{bad[0]}\"'s type not in supported list {list(FUSE_TYPES)}")
    offset = root.get("activation_offset", True)
    skip = unsimulated(model)
    layers = {n: _default_layer(t) for n, t in quantizable.items() if n not in skip}
    for n in layers:
        layers[n].quant_enable = False                  # AMCT: only listed layers with quant_enable are quantized
    for name in data:
        if name in ROOT_KEYS:
            continue
        node = data[name]
        if not isinstance(node, dict):
            raise _err(src, f"{name}: expected an object with quant_enable, activation_quant_params, "
                            "weight_quant_params")
        if name not in quantizable:
            raise _err(src, f"layer {name} does not support quant. (type {types[name]}; quantizable layers: "
                            f"{', '.join(quantizable) or 'none'})")
        if name in skip:
            raise _err(src, f"layer {name}: {skip[name]} ({', '.join(SIMULATED_TYPES)}); set quant_enable false "
                            "or drop the entry")
        extra = [k for k in node if k not in ("quant_enable", "dmq_balancer_param", "activation_quant_params",
                                              "weight_quant_params")]
        if extra:
            raise _err(src, f"{name}: Unknown parameter {extra[0]} in layer {name}")
        dmq = _parse_dmq(src, name, node.get("dmq_balancer_param"))
        qe = node.get("quant_enable", False)
        _check_bool(src, f"{name}.quant_enable", qe)
        act = _parse_act(src, name, node.get("activation_quant_params", {}), offset)
        wts = _parse_wts(src, name, node.get("weight_quant_params", {}), quantizable[name])
        layers[name] = LayerConfig(quantizable[name], qe, act, wts, dmq)
    if not any(c.quant_enable for c in layers.values()):
        raise _err(src, "No quant enable layer in quant config file, please check the quant config file.")
    return QuantConfig(layers, version=1, batch_num=bn, activation_offset=offset,
                       do_fusion=root.get("do_fusion", True), skip_fusion_layers=list(sfl), source=src)


def load_config(path: str | Path, model: nn.Module) -> QuantConfig:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise OpkitError(f"--config {p}: cannot read the AMCT config: {e}") from None

    def no_repeats(pairs):
        keys = [k for k, _ in pairs]
        rep = sorted({k for k in keys if keys.count(k) > 1})
        if rep:
            raise OpkitError(f"{p}: repeated key(s) {', '.join(rep)}")
        return dict(pairs)
    try:
        data = json.loads(text, object_pairs_hook=no_repeats)
    except ValueError as e:
        raise OpkitError(f"{p}: not JSON ({e}); give the JSON config AMCT's create_quant_config writes") from None
    return parse_config(data, model, str(p))
