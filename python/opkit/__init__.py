"""opkit: a custom-operator development kit for Ascend NPUs.

``opkit.load()`` registers the bundled ops and the current workspace's built ops as
``torch.ops.opkit.<op>``; ``opkit.patch(model)`` swaps precision-sensitive modules for them.
"""
from __future__ import annotations

from .errors import BuildError, EmulatorError, OpkitError, SpecError
from .toolchain.version import __version__


def load(path=None, **kwargs):
    """Register bundled ops and the workspace's built ops (see opkit.loader.load)."""
    from .loader import load as _load
    return _load(path, **kwargs)


def scan(model, inputs, **kwargs):
    """Which of the model's ops torch_npu would run on the CPU (see opkit.scanner.scan; docs/scan.md)."""
    from .scanner import scan as _scan
    return _scan(model, inputs, **kwargs)


def patch(model, ops=None, dry_run=False, **kwargs):
    """Swap matching modules of ``model`` for opkit-backed ones (see opkit.patching)."""
    from .patching import patch as _patch
    return _patch(model, ops=ops, dry_run=dry_run, **kwargs)


def unpatch(model, **kwargs):
    from .patching import unpatch as _unpatch
    return _unpatch(model, **kwargs)


def register_mapping(module_type, factory):
    """Teach opkit.patch a new module -> op mapping (see opkit.patching.register_mapping)."""
    from .patching import register_mapping as _register
    return _register(module_type, factory)


def diagnose(model, inputs, **kwargs):
    """Per-layer accuracy of ``model`` under a device precision policy vs FP32 (see opkit.accuracy.diagnose)."""
    from .accuracy.diagnose import diagnose as _diagnose
    return _diagnose(model, inputs, **kwargs)


def quantize(model, calib, data=None, **kwargs):
    """AMCT post-training quantization + ATC conversion simulated on the CPU, with the fix (see opkit.quant)."""
    from .quant import quantize as _quantize
    return _quantize(model, calib, data, **kwargs)


__all__ = ["load", "scan", "patch", "diagnose", "quantize", "unpatch", "register_mapping", "EmulatorError", "OpkitError",
           "SpecError", "BuildError", "__version__"]
