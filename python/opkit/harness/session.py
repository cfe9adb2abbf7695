"""The controlling process of a harness run: progress bar, one record per case (rebuilt from the node id
when the worker that ran it crashed), and the reports at the end (JSON, HTML, console summary).
"""
from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

import pytest

from ..opspec import load_spec
from .cases import build_matrix
from .items import RECORD_KEY, format_failure, mode_of, rerun_command
from .watchdog import crash_reason, read_crash


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
        self._said: dict[tuple, str] = {}     # (op, failure reason) -> the first case that printed it
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
                reason = rec.get("reason", "")[:300]
                first = self._said.setdefault((rec.get("op"), reason), what)
                if first != what:       # the same reason again (e.g. a missing backward op): said once
                    reason = f"(same reason as {first})"
                self.progress.console.print(f"[red]✗[/] {escape(what)} {escape(reason)}",
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
        mode = mode_of(self.config)          # one report per mode: a --full run keeps the default run's report
        self.json_path = out_dir / f"report-{mode}.json"
        R.write_json(data, self.json_path)
        extra = self.config.getoption("opkit_report_json")
        if extra:
            Path(extra).parent.mkdir(parents=True, exist_ok=True)
            R.write_json(data, Path(extra))
        if not self.config.getoption("opkit_no_html"):
            try:
                self.html_path = R.write_html(data, out_dir / f"report-{mode}.html")
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
