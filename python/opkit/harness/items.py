"""The harness's pytest items: one CaseItem per case of the matrix, one OpcheckItem per op and dtype.

Each item runs inside the watchdog (watchdog.py), records its result as a JSON user property (the
controlling process builds the report from them, session.py) and fails with a message naming the case and
the command that reruns it alone.
"""
from __future__ import annotations

import json
import shlex
from contextlib import contextmanager

import pytest

from ..errors import OpkitError
from ..opspec import DTYPES
from .cases import DIST_DOC, build_matrix, dist_tag
from .watchdog import CrashFiles

RECORD_KEY = "opkit_record"


def mode_of(config) -> str:
    if config.getoption("opkit_full"):
        return "full"
    return "quick" if config.getoption("opkit_quick") else "default"


def rerun_command(item_or_nodeid, op: str, case_id: str) -> str:
    return f"opkit test {op} -k {shlex.quote(case_id)}"


class CaseFailed(Exception):
    pass


@contextmanager
def _one_thread():
    """Cases are small and run one per worker: torch's intra-op thread pool only adds contention
    (10x slower metrics on a busy 2-core machine)."""
    import torch
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


class _OpItem(pytest.Item):
    def _timeout(self) -> float:
        return float(self.config.getoption("opkit_timeout"))

    def _handle(self):
        from .binding import get_handle, workspace_of
        ws, target = workspace_of(self.path), self.config.getoption("opkit_target")
        h = self.config.hook.pytest_opkit_handle(spec=self.spec, workspace=ws, target=target)
        return h if h is not None else get_handle(self.spec, ws, target,
                                                  bundled=self.config.getoption("opkit_bundled"))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (CaseFailed, OpkitError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, self.name


class CaseItem(_OpItem):
    def __init__(self, *, spec, case, **kw):
        super().__init__(**kw)
        self.spec, self.case = spec, case
        self.add_marker("opkit")
        self.add_marker(DTYPES[case.dtype][2])
        self.add_marker(dist_tag(case.distribution, case.dtype))

    def runtest(self):
        from .binding import reference_of
        from .execute import run_case

        crash: CrashFiles = self.config._opkit_crash
        crash.begin(self.nodeid, self._timeout())
        try:
            try:
                op = self._handle()
                ref = reference_of(str(self.spec.reference_file))
            except Exception as e:  # noqa: BLE001 - not built / broken reference: this case fails, run goes on
                rec = self.case.as_dict()
                rec.update(verdict="fail", reason=str(e), metrics={}, naive_metrics=None, device_model=None)
            else:
                with crash.stderr_to_file() as err, _one_thread():
                    rec = run_case(self.spec, self.case, op, ref)
                    err.seek(0)
                    printed = err.read().decode(errors="replace").strip()
                if printed:
                    rec["stderr"] = printed[-2000:]
        finally:
            crash.end()
        rec["nodeid"] = self.nodeid
        rec["rerun"] = rerun_command(self, self.spec.snake, self.case.id)
        self.user_properties.append((RECORD_KEY, json.dumps(rec, default=str)))
        if rec["verdict"] != "pass":
            raise CaseFailed(format_failure(rec))


class OpcheckItem(_OpItem):
    def __init__(self, *, spec, dtype, **kw):
        super().__init__(**kw)
        self.spec, self.dtype = spec, dtype
        self.add_marker("opkit")
        self.add_marker("opcheck")
        self.add_marker(DTYPES[dtype][2])

    def runtest(self):
        import torch

        from .cases import make_inputs

        crash: CrashFiles = self.config._opkit_crash
        crash.begin(self.nodeid, self._timeout())
        rec = {"op": self.spec.snake, "dtype": self.dtype, "kind": "opcheck", "nodeid": self.nodeid}
        try:
            op = self._handle()
            if op.missing:      # opcheck runs autograd, which calls the backward op
                raise CaseFailed("; ".join(op.missing.values()))
            small = [c for c in build_matrix(self.spec, "default", 0) if c.dtype == self.dtype]
            small.sort(key=lambda c: (c.distribution != "normal", _numel(c.lead_shape) > 4096,
                                      -_numel(c.lead_shape) if _numel(c.lead_shape) <= 4096 else _numel(c.lead_shape)))
            case = small[0]
            inputs = make_inputs(self.spec, case)
            if self.spec.backward is not None:
                inputs = [x.requires_grad_(True) if x.is_floating_point() else x for x in inputs]
            rec["shapes"] = {k: list(v) for k, v in case.shapes.items()}
            if op.device is not None:      # a device target: opcheck the op itself on the device
                inputs = [x.to(op.device) for x in inputs]
            torch.library.opcheck(op.op or op.fn, tuple(inputs), dict(case.attrs))
            rec.update(verdict="pass", reason="")
        except CaseFailed as e:
            rec.update(verdict="fail", reason=f"opcheck: {e}"[:800])
        except Exception as e:  # noqa: BLE001
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            rec.update(verdict="fail", reason=f"opcheck: {type(e).__name__}: {first}"[:800])
        finally:
            crash.end()
        rec["rerun"] = f"opkit test {self.spec.snake} -k {shlex.quote('opcheck-' + DTYPES[self.dtype][2])}"
        self.user_properties.append((RECORD_KEY, json.dumps(rec, default=str)))
        if rec["verdict"] != "pass":
            raise CaseFailed(f"{self.name}: {rec['reason']}\n  rerun alone: {rec['rerun']}")


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def format_failure(rec: dict) -> str:
    shapes = ", ".join(f"{k}={'x'.join(map(str, v))}" for k, v in (rec.get("shapes") or {}).items())
    dist = rec.get("distribution", "")
    lines = [f"FAIL {rec.get('op')}[{rec.get('id', '')}]: {rec.get('reason')}",
             f"  case: dtype {rec.get('dtype')}, {shapes}, distribution {rec.get('distribution_tag', dist)} "
             f"({DIST_DOC.get(dist, '')}), seed {rec.get('seed')}",
             f"  rerun alone: {rec.get('rerun')}"]
    return "\n".join(lines)
