"""The opkit pytest plugin (entry point ``pytest11: opkit``).

``pytest`` in a workspace collects every ``ops/<op>/op.yaml``: one test per case
(``layer_norm_fp32[fp16-64x1000-offset200]``) plus ``torch.library.opcheck`` per op and dtype
(``layer_norm_fp32[opcheck-fp16]``). Markers: ``opkit``, the dtype tag (``fp16``...), the distribution tag
(``offset200``...), ``opcheck``. ``-k`` and ``-m`` work as usual. ``opkit test`` (runner.py) runs the same
through pytest-xdist workers, so a case that crashes its process, or hangs past the timeout
(faulthandler's watchdog), fails alone with the reason and the command that reruns it.
Reports (JSON + HTML) are written by the controlling process at the end of the session.
"""
from __future__ import annotations

import faulthandler
import json
import os
import shlex
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from ..errors import OpkitError
from ..spec import DTYPES, load_spec
from .cases import DIST_DOC, build_matrix, dist_tag

RECORD_KEY = "opkit_record"
DEFAULT_TIMEOUT = 300.0


class Hooks:
    """Hooks a conftest may implement."""

    @pytest.hookspec(firstresult=True)
    def pytest_opkit_handle(self, spec, workspace, target):
        """Return an ``opkit.harness.execute.OpHandle`` for ``spec`` instead of loading the built op
        (stand-in ops in tests, other runtimes). None: the default (opkit.load of the workspace)."""


def pytest_addhooks(pluginmanager):
    pluginmanager.add_hookspecs(Hooks)


def pytest_addoption(parser):
    g = parser.getgroup("opkit", "opkit operator harness")
    g.addoption("--opkit-quick", action="store_true", help="a fast subset of the case matrix (edit loop)")
    g.addoption("--opkit-full", action="store_true", help="the full case matrix (more shapes, all sizes)")
    g.addoption("--opkit-seed", type=int, default=0, help="seed of the random shapes and values (default 0)")
    g.addoption("--opkit-report-json", default=None, help="write the per-case results to this JSON file")
    g.addoption("--opkit-report-dir", default=None,
                help="folder for report.json/report.html (default <workspace>/build/opkit/reports)")
    g.addoption("--opkit-no-html", action="store_true", help="do not write the HTML report")
    g.addoption("--opkit-target", default="cpu", help="target the ops were built for (default cpu)")
    g.addoption("--opkit-timeout", type=float, default=DEFAULT_TIMEOUT,
                help=f"seconds before a case counts as hung (default {DEFAULT_TIMEOUT:g})")
    g.addoption("--opkit-no-collect", action="store_true", help="do not collect ops/*/op.yaml files")
    g.addoption("--opkit-no-opcheck", action="store_true", help="skip the torch.library.opcheck items")
    g.addoption("--opkit-progress", action="store_true",
                help="compact progress bar and summary (used by `opkit test`, with -p no:terminal)")


def mode_of(config) -> str:
    if config.getoption("opkit_full"):
        return "full"
    return "quick" if config.getoption("opkit_quick") else "default"


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config):
    config.addinivalue_line("markers", "opkit: an opkit harness case (from ops/<op>/op.yaml)")
    config.addinivalue_line("markers", "opcheck: torch.library.opcheck of an opkit op")
    for _, _, tag in DTYPES.values():
        config.addinivalue_line("markers", f"{tag}: opkit case of this dtype")
    for d in list(DIST_DOC) + ["offset200", "offset1000", "scale1e4", "scale1e6"]:
        config.addinivalue_line("markers", f"{d}: opkit case with this value distribution")
    if _is_worker(config):
        crash_dir = config.workerinput.get("opkit_crash_dir")
        wid = config.workerinput.get("workerid", "gw")
    else:
        crash_dir = tempfile.mkdtemp(prefix="opkit-harness-")
        wid = "main"
        session = Session(config, crash_dir)
        config.pluginmanager.register(session, "opkit-session")
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(_XdistHooks(crash_dir), "opkit-xdist")
    config._opkit_crash = _CrashFiles(Path(crash_dir), wid)


class _XdistHooks:
    def __init__(self, crash_dir: str):
        self.crash_dir = crash_dir

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node):
        node.workerinput["opkit_crash_dir"] = self.crash_dir


class _CrashFiles:
    """Per-process files that outlive a crash: the case in flight, its stderr, the fault handler's dump."""

    def __init__(self, folder: Path, wid: str):
        self.folder, self.wid = folder, wid
        self.inflight = folder / f"{wid}.inflight"
        self.stderr = folder / f"{wid}.stderr"
        self.fault = folder / f"{wid}.fault"
        self._fault_file = None

    def arm(self) -> None:
        if self._fault_file is None:
            self._fault_file = open(self.fault, "w")
            faulthandler.enable(file=self._fault_file, all_threads=False)

    def begin(self, nodeid: str, timeout: float) -> None:
        self.arm()
        self.inflight.write_text(json.dumps({"nodeid": nodeid, "start": time.time(), "timeout": timeout}))
        # The hang watchdog: faulthandler's C thread dumps the stacks into the fault file and exits the
        # process, even while the kernel holds the GIL. (pytest-timeout's thread method needs the terminal
        # reporter, which `opkit test` replaces by its progress bar.)
        faulthandler.dump_traceback_later(timeout, exit=True, file=self._fault_file)

    def end(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        self.inflight.unlink(missing_ok=True)

    @contextmanager
    def stderr_to_file(self):
        """fd 2 -> our file for the op call, so an emulator message printed before an abort survives."""
        saved = os.dup(2)
        with open(self.stderr, "w+b") as f:
            os.dup2(f.fileno(), 2)
            try:
                yield f
            finally:
                os.dup2(saved, 2)
                os.close(saved)


def read_crash(folder: Path, wid: str) -> dict:
    cf = _CrashFiles(folder, wid)
    info = {}
    try:
        info.update(json.loads(cf.inflight.read_text()))
    except (OSError, ValueError):
        pass
    # stderr: its tail holds the last message. fault: its head holds the verdict ("Fatal Python error: ..."
    # or "Timeout (...)!"); a deep pytest stack with long site-packages paths runs past 4 KB after it.
    for name, p, cut in (("stderr", cf.stderr, slice(-4000, None)), ("fault", cf.fault, slice(0, 4000))):
        try:
            info[name] = p.read_text(errors="replace")[cut]
        except OSError:
            info[name] = ""
    return info


# -- collection ----------------------------------------------------------------------------------

def pytest_collect_file(file_path: Path, parent):
    if file_path.name != "op.yaml" or file_path.parent.parent.name != "ops":
        return None
    if parent.config.getoption("opkit_no_collect"):
        return None
    return OpYamlFile.from_parent(parent, path=file_path)


class OpYamlFile(pytest.File):
    def collect(self):
        spec = load_spec(self.path)          # SpecError names file:line: field: the collection error
        config = self.config
        if not config.getoption("opkit_no_opcheck"):
            dts = spec.dtypes[:1] if mode_of(config) == "quick" else spec.dtypes
            for dt in dts:
                yield OpcheckItem.from_parent(self, name=f"{spec.snake}[opcheck-{DTYPES[dt][2]}]", spec=spec, dtype=dt)
        for case in build_matrix(spec, mode_of(config), config.getoption("opkit_seed")):
            yield CaseItem.from_parent(self, name=case.name, spec=spec, case=case)


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
        return h if h is not None else get_handle(self.spec, ws, target)

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

        crash: _CrashFiles = self.config._opkit_crash
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

        crash: _CrashFiles = self.config._opkit_crash
        crash.begin(self.nodeid, self._timeout())
        rec = {"op": self.spec.snake, "dtype": self.dtype, "kind": "opcheck", "nodeid": self.nodeid}
        try:
            op = self._handle()
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


# -- the controlling process: collect records, report crashes, write reports ------------------------

class Session:
    def __init__(self, config, crash_dir: str):
        self.config = config
        self.crash_dir = Path(crash_dir)
        self.records: dict[str, dict] = {}
        self.opchecks: dict[str, dict] = {}
        self.collect_errors: list[str] = []
        self.total = 0
        self.done = 0
        self.failed = 0
        self.start = time.time()
        self.progress = None
        self._matrix_cache: dict[str, dict] = {}
        self.workspaces: list[Path] = []
        self.json_path: Path | None = None
        self.html_path: Path | None = None

    # progress (opkit test) -------------------------------------------------------------------
    def _start_progress(self, total: int):
        if not self.config.getoption("opkit_progress") or self.progress is not None:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True)
        self.progress = Progress(TextColumn("[bold]opkit test"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("[green]{task.fields[ok]} passed[/] [red]{task.fields[bad]} failed[/]"),
                                 TimeElapsedColumn(), console=self.console, transient=False)
        self.task = self.progress.add_task("cases", total=total, ok=0, bad=0)
        self.progress.start()

    def pytest_collection_finish(self, session):
        if not self.config.pluginmanager.hasplugin("dsession"):
            self.total = len(session.items)
            self._start_progress(self.total)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        if not self.total:
            self.total = len(ids)
            self._start_progress(self.total)

    def pytest_collectreport(self, report):
        if report.failed:
            self.collect_errors.append(f"{report.nodeid}: {report.longreprtext}")
            if self.config.getoption("opkit_progress"):
                from rich.console import Console
                Console(stderr=True).print(f"collection error {report.nodeid}:\n{report.longreprtext}",
                                           markup=False, highlight=False, soft_wrap=True)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report):
        if report.nodeid in self.records or report.nodeid in self.opchecks:
            return                       # one record per case (teardown reports repeat user_properties)
        rec = None
        if report.when == "call":
            for k, v in getattr(report, "user_properties", []) or []:
                if k == RECORD_KEY:
                    rec = json.loads(v)
        if rec is None and report.failed and report.when == "???":
            rec = self._crashed(report)
            if rec is not None:
                report.longrepr = format_failure(rec)
        if rec is None and report.failed and report.when in ("setup", "call"):
            rec = self._record_for(report.nodeid)
            if rec is not None:
                rec.update(verdict="fail", reason=_short(getattr(report, "longreprtext", "")), nodeid=report.nodeid)
        if rec is None:
            return
        if rec.get("kind") == "opcheck":
            self.opchecks[report.nodeid] = rec
        else:
            self.records[report.nodeid] = rec
        self.done += 1
        self.failed += rec.get("verdict") != "pass"
        if self.progress is not None:
            if rec.get("verdict") != "pass":
                from rich.markup import escape
                what = f"{rec.get('op')}[{rec.get('id') or 'opcheck-' + str(rec.get('dtype'))}]"
                self.progress.console.print(f"[red]✗[/] {escape(what)} {escape(rec.get('reason', '')[:300])}",
                                            markup=True, highlight=False, soft_wrap=True)
            self.progress.update(self.task, completed=self.done, ok=self.done - self.failed, bad=self.failed)

    def _record_for(self, nodeid: str) -> dict | None:
        """Rebuild a case's record from its node id (the worker that ran it is gone)."""
        path, _, name = nodeid.partition("::")
        p = Path(path)
        if not p.is_absolute():
            p = Path(self.config.rootpath) / p
        if p.name != "op.yaml":
            return None
        key = str(p)
        if key not in self._matrix_cache:
            try:
                spec = load_spec(p)
                self._matrix_cache[key] = {c.name: c for c in build_matrix(spec, mode_of(self.config),
                                                                            self.config.getoption("opkit_seed"))}
            except Exception:  # noqa: BLE001
                self._matrix_cache[key] = {}
        case = self._matrix_cache[key].get(name)
        if case is None:
            if "[opcheck-" in name:
                op = name.split("[")[0]
                return {"op": op, "kind": "opcheck", "dtype": name.split("-")[-1].rstrip("]"),
                        "rerun": f"opkit test {op} -k {shlex.quote(name.split('[')[1].rstrip(']'))}"}
            return None
        rec = case.as_dict()
        rec.update(verdict="fail", metrics={}, naive_metrics=None, device_model=None,
                   rerun=rerun_command(None, case.op, case.id))
        return rec

    def _crashed(self, report) -> dict | None:
        rec = self._record_for(report.nodeid)
        if rec is None:
            return None
        node = getattr(report, "node", None)
        wid = getattr(getattr(node, "gateway", None), "id", None) or "main"
        info = read_crash(self.crash_dir, wid)
        rec["reason"] = crash_reason(info)
        rec["nodeid"] = report.nodeid
        if info.get("fault"):
            rec["fault"] = info["fault"][:2000]
        return rec

    # reports -----------------------------------------------------------------------------------
    def pytest_sessionfinish(self, session, exitstatus):
        if self.progress is not None:
            self.progress.stop()
        if not self.records and not self.opchecks:
            return
        from . import report as R

        ws = _workspace_for(self.config, self.records, self.opchecks)
        out_dir = Path(self.config.getoption("opkit_report_dir") or (ws / "build" / "opkit" / "reports"))
        data = R.assemble(list(self.records.values()), list(self.opchecks.values()), mode=mode_of(self.config),
                          seed=self.config.getoption("opkit_seed"), seconds=time.time() - self.start)
        out_dir.mkdir(parents=True, exist_ok=True)
        self.json_path = out_dir / "report.json"
        R.write_json(data, self.json_path)
        extra = self.config.getoption("opkit_report_json")
        if extra:
            Path(extra).parent.mkdir(parents=True, exist_ok=True)
            R.write_json(data, Path(extra))
        if not self.config.getoption("opkit_no_html"):
            try:
                self.html_path = R.write_html(data, out_dir / "report.html")
            except Exception as e:  # noqa: BLE001 - the JSON and the verdict still stand
                self.html_path = None
                self.html_error = f"{type(e).__name__}: {e}"
        self.data = data
        if self.config.getoption("opkit_progress"):
            from rich.console import Console
            Console(stderr=False).print(R.summary_text(data, self.json_path, self.html_path, extra,
                                                       self.collect_errors), markup=False, highlight=False,
                                        soft_wrap=True)

    def pytest_terminal_summary(self, terminalreporter):
        if getattr(self, "data", None) is None:
            return
        from . import report as R
        terminalreporter.write_sep("=", "opkit harness")
        for line in R.summary_text(self.data, self.json_path, self.html_path,
                                   self.config.getoption("opkit_report_json"), []).splitlines():
            terminalreporter.write_line(line)

    def pytest_unconfigure(self, config):
        import shutil
        shutil.rmtree(self.crash_dir, ignore_errors=True)


def crash_reason(info: dict) -> str:
    from ..errors import EmulatorError

    start, timeout = info.get("start"), info.get("timeout")
    elapsed = time.time() - start if start else None
    emu = EmulatorError.from_message(info.get("stderr", ""))
    if emu is not None:
        return (f"process aborted on emulator rule [{emu.rule}] by {emu.call} at {emu.file}:{emu.line} "
                f"(block {emu.block}): {emu.detail}")
    fault = info.get("fault", "")
    if "Timeout (" in fault or (elapsed is not None and timeout and elapsed >= 0.9 * timeout):
        return f"timed out after {timeout:g} s (the kernel hangs or is far too slow)"
    for line in fault.splitlines():
        if line.startswith("Fatal Python error:"):
            return f"process crashed: {line.split(':', 1)[1].strip()}"
    return "process crashed (no message; the worker died)"


def _short(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:600] if lines else "failed"


def _workspace_for(config, records: dict, opchecks: dict) -> Path:
    for rec in list(records.values()) + list(opchecks.values()):
        nodeid = rec.get("nodeid", "")
        path = nodeid.partition("::")[0]
        if path.endswith("op.yaml"):
            p = Path(path)
            if not p.is_absolute():
                p = Path(config.rootpath) / p
            return p.resolve().parent.parent.parent
    return Path(config.rootpath)
