"""The inputs of one ``opkit.quantize`` run, checked before any work: the model, the calibration inputs, the
labelled evaluation set and the fixed batch the per-layer table runs on."""
from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
import torch.nn as nn

from ..data import LabelledSet, TensorSet, load_dataset
from ..errors import OpkitError


@dataclass
class Inputs:
    model: nn.Module            # a deep copy in eval mode: nothing the user gave is modified
    calib: torch.Tensor         # calibration inputs (N, ...)
    data: LabelledSet           # the labelled evaluation set (the drop in top-1 is the headline figure)
    table_x: torch.Tensor       # the fixed batch of ``data`` the per-layer table, fusions and overflow run on
    classes: int                # the model's output classes


def as_inputs(calib, what: str, transform=None) -> torch.Tensor:
    """Calibration inputs: a tensor (N, ...), a labelled set, or what opkit.data.load_inputs reads."""
    if isinstance(calib, torch.Tensor):
        x = calib
    else:
        from ..data import load_inputs
        x = load_inputs(calib, transform)
    if x.dim() < 1 or x.shape[0] == 0:
        raise OpkitError(f"{what}: no samples (shape {list(x.shape)})")
    if not x.is_floating_point():       # token ids of a text model: its Linear layers still quantize
        if x.is_complex() or x.dtype == torch.bool:
            raise OpkitError(f"{what}: inputs must be real numbers or integer ids; got {x.dtype}")
        return x
    if not torch.isfinite(x).all():
        raise OpkitError(f"{what}: inputs hold inf or NaN (AMCT refuses such calibration data)")
    return x.float()


def labelled(data, transform=None) -> LabelledSet:
    """The labelled set: a ``(x, y)`` pair, a LabelledSet, or what opkit.data.load_dataset reads."""
    if data is None:
        raise OpkitError("opkit quant: --data (a labelled set: .pt/.npz with x and y, or a folder "
                         "ROOT/<class>/<file>) is required: the drop in top-1 is the headline figure")
    if isinstance(data, (tuple, list)) and len(data) == 2:
        ds = TensorSet(torch.as_tensor(data[0]), torch.as_tensor(data[1]), source="data=(x, y)")
    else:
        ds = data if isinstance(data, LabelledSet) else load_dataset(data, transform)
    if len(ds) == 0:
        raise OpkitError(f"--data {ds.source}: the labelled set is empty")
    return ds


def check_fits(model: nn.Module, x: torch.Tensor, what: str) -> torch.Tensor:
    try:
        with torch.no_grad():
            out = model(x[:2])
    except Exception as e:  # noqa: BLE001 - the model's own error names the mismatch
        raise OpkitError(f"{what}: inputs of shape {list(x.shape[1:])} (per sample) do not fit the model: "
                         f"{type(e).__name__}: {e}") from None
    t = out if isinstance(out, torch.Tensor) else next((o for o in out if isinstance(o, torch.Tensor)), None)
    if t is None or t.dim() != 2:
        raise OpkitError(f"{what}: the model's output is not [batch, classes] (got "
                         f"{list(t.shape) if t is not None else type(out).__name__}); opkit quant scores classifiers")
    return t


def read_inputs(model: nn.Module, calib, data, *, transform=None, calib_transform=None,
                table_samples: int = 32) -> Inputs:
    """Everything checked: the model fits both sets, the labels fit the model's classes."""
    if not isinstance(model, nn.Module):
        raise OpkitError(f"opkit.quantize: expected an nn.Module; got {type(model).__name__}")
    ds = labelled(data, transform)
    x_calib = as_inputs(calib, "--calib", calib_transform if calib_transform is not None else transform)
    model = copy.deepcopy(model).eval()
    out = check_fits(model, x_calib, "--calib")
    table_x, _ = ds.batch(list(range(min(len(ds), table_samples))))
    check_fits(model, table_x, f"--data {ds.source}")
    ds.check_labels(out.shape[1], "the model")
    return Inputs(model, x_calib, ds, table_x, int(out.shape[1]))
