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


def get_handle(spec: OpSpec, workspace: Path, target: str = "cpu") -> OpHandle:
    key = (str(workspace), spec.snake)
    if key in _handles:
        return _handles[key]
    import torch

    from .. import build as router
    from .. import loader, targets
    from ..workspace import build_dir

    # Load only the op under test (other ops of the workspace may be unbuilt or broken); opkit.load()
    # brings its backward op along (workspace or bundled), which opcheck's autograd tests call.
    t = targets.get(target)
    lib = router.library(target, build_dir(workspace, target), spec)
    if not Path(lib).is_file():
        how = "" if target == targets.HOST else f" --target {target}"
        raise OpkitError(f"op {spec.snake} is not built for target {target} (no {lib}): run "
                         f"`opkit build {spec.snake}{how}` in {workspace}")
    device = t.prepare_test()       # None: the host (emulator), in this process
    loader.load(workspace, ops=[spec.snake], bundled=False, quiet=True)
    fn = getattr(torch.ops.opkit, spec.snake)
    try:
        naive = getattr(torch.ops.opkit_naive, spec.snake)   # the host's: the emulator's naive variant
    except (AttributeError, RuntimeError):
        naive = None
    if device is not None:
        # On a device: inputs made on the CPU go there, outputs come back for the CPU golden; the naive
        # column still comes from the emulator (CPU inputs); the emulator's counters do not apply.
        _handles[key] = OpHandle(fn=_on_device(fn, device), naive_fn=naive, last_launch=None, device=device, op=fn)
        return _handles[key]
    last = None
    if spec.lang != "tbe":      # an emulator op: the torch-side library keeps this thread's last launch
        from ..registration import last_launch as last
    _handles[key] = OpHandle(fn=fn, naive_fn=naive, last_launch=last)
    return _handles[key]


def _on_device(fn, device):
    def call(*args, **kwargs):
        out = fn(*[a.to(device) if hasattr(a, "to") else a for a in args], **kwargs)
        return tuple(o.cpu() for o in out) if isinstance(out, (tuple, list)) else out.cpu()
    return call


@functools.lru_cache(maxsize=None)
def reference_of(path: str):
    return load_reference(Path(path))
