"""How the harness gets an op: ``opkit.load()`` of the workspace, then ``torch.ops.opkit.<op>``,
``torch.ops.opkit_naive.<op>`` and the emulator's counters of the last launch (opkit.registration). Cached per
process."""
from __future__ import annotations

import functools
from pathlib import Path

from ..errors import OpkitError
from ..opspec import OpSpec
from .execute import OpHandle
from .golden import load_reference

_handles: dict[tuple[str, str], OpHandle] = {}


def workspace_of(op_yaml: Path) -> Path:
    """``<ws>/ops/<op>/op.yaml`` -> ``<ws>``."""
    return Path(op_yaml).resolve().parent.parent.parent


def get_handle(spec: OpSpec, workspace: Path, target: str = "cpu", bundled: bool = False) -> OpHandle:
    """``bundled``: the bundled op as opkit.load() builds it (the per-user cache), wherever the run is."""
    key = ("<bundled>" if bundled else str(workspace), spec.snake)
    if key in _handles:
        return _handles[key]
    import torch

    from .. import build as router
    from .. import loader, targets
    from ..workspace import build_dir

    t = targets.get(target)
    if bundled:
        if t.NAME != targets.HOST:
            raise OpkitError(f"opkit test --bundled runs on target {targets.HOST} (the bundled-op cache), "
                             f"not {target}")
        device = None
        loader.load(ops=[spec.snake], quiet=True, outside_workspace=True)
        missing: dict[str, str] = {}
    else:
        # Load only the op under test (other ops of the workspace may be unbuilt or broken); opkit.load()
        # brings its backward op along (workspace or bundled), which opcheck's autograd tests call.
        lib = router.library(target, build_dir(workspace, target), spec)
        if not Path(lib).is_file():
            how = "" if target == targets.HOST else f" --target {target}"
            raise OpkitError(f"op {spec.snake} is not built for target {target} (no {lib}): run "
                             f"`opkit build {spec.snake}{how}` in {workspace}")
        device = t.prepare_test()       # None: the host (emulator), in this process
        # A backward op that is not built fails only the cases that call it (opcheck), not every case.
        loader.load(workspace, ops=[spec.snake], bundled=False, quiet=True, unbuilt_needs_ok=True)
        missing = _missing_needs(spec, loader.unbuilt_needs())
    fn = getattr(torch.ops.opkit, spec.snake)
    try:
        naive = getattr(torch.ops.opkit_naive, spec.snake)   # the host's: the emulator's naive variant
    except (AttributeError, RuntimeError):
        naive = None
    if device is not None:
        # On a device: inputs made on the CPU go there, outputs come back for the CPU golden; the naive
        # column still comes from the emulator (CPU inputs); the emulator's counters do not apply.
        _handles[key] = OpHandle(fn=_on_device(fn, device), naive_fn=naive, last_launch=None, device=device, op=fn,
                                 missing=missing)
        return _handles[key]
    last = None
    if spec.lang != "tbe":      # an emulator op: the torch-side library keeps this thread's last launch
        from ..registration import last_launch as last
    _handles[key] = OpHandle(fn=fn, naive_fn=naive, last_launch=last, missing=missing, fast_proof=last is not None)
    return _handles[key]


def _missing_needs(spec: OpSpec, unbuilt: dict[str, str]) -> dict[str, str]:
    """The ops ``spec`` needs (deps.py) that the loader skipped as not built: snake -> one-line reason."""
    from .. import deps
    return {n.op: f"needs {n.op}, {n.why}, which is not built: run `opkit build {spec.snake}` (builds what it "
                  "needs too)" for n in deps.direct(spec) if n.op in unbuilt}


def _on_device(fn, device):
    def call(*args, **kwargs):
        out = fn(*[a.to(device) if hasattr(a, "to") else a for a in args], **kwargs)
        return tuple(o.cpu() for o in out) if isinstance(out, (tuple, list)) else out.cpu()
    return call


@functools.lru_cache(maxsize=None)
def reference_of(path: str):
    return load_reference(Path(path))
