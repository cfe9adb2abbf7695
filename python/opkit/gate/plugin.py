"""The CI accuracy gate: a pytest plugin (entry point ``pytest11: opkit_accuracy``).

A test records top-1 results through the ``opkit_accuracy`` fixture::

    def test_convnext_on_device(opkit_accuracy):
        opkit_accuracy.evaluate("examples/convnext/labelled.py:classifier", "golden/", policy="cann-force-fp16")

    def test_my_own_eval(opkit_accuracy):
        opkit_accuracy.record("mynet/int8", 78.1, data_hash="3f2a...")   # top-1 in percent

A result more than ``--opkit-threshold`` points (``0.5%`` or ``0.5``; default 0.5) below the best stored in
``--opkit-baseline`` (default ``.npu-accuracy-baseline`` in the rootdir) for the same model/variant key and
data hash fails that test; ``--opkit-update-baseline`` stores the run (best raised, never lowered);
``--opkit-report`` (default ``accuracy_report.html`` in the rootdir) gets every entry with its history,
written when a test recorded something. Under pytest-xdist the workers judge, the controller writes.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from . import baseline as B

_RESULTS = pytest.StashKey[list]()


def pytest_addoption(parser):
    g = parser.getgroup("opkit-accuracy", "opkit accuracy gate (top-1 against a stored best)")
    g.addoption("--opkit-threshold", default="0.5", metavar="POINTS",
                help="allowed top-1 drop below the stored best, in points (0.5 and 0.5%% both mean half a point)")
    g.addoption("--opkit-baseline", default=None, metavar="PATH",
                help="the baseline file (default .npu-accuracy-baseline in the rootdir)")
    g.addoption("--opkit-update-baseline", action="store_true",
                help="store this run's results in the baseline (the best only rises)")
    g.addoption("--opkit-report", default=None, metavar="PATH",
                help="HTML report with every entry's history (default accuracy_report.html in the rootdir)")


def _path(config, opt: str, default: str) -> Path:
    v = config.getoption(opt)
    p = Path(v) if v else Path(config.rootpath) / default
    return p if p.is_absolute() else Path(config.invocation_params.dir) / p


def pytest_configure(config):
    config.stash[_RESULTS] = []


class AccuracyGate:
    """What the ``opkit_accuracy`` fixture gives a test."""

    def __init__(self, config, nodeid: str):
        from ..errors import OpkitError
        self.config, self.nodeid = config, nodeid
        try:
            self.threshold = B.parse_threshold(config.getoption("--opkit-threshold"))
        except OpkitError as e:
            raise pytest.UsageError(str(e)) from None
        self.path = _path(config, "--opkit-baseline", ".npu-accuracy-baseline")

    def record(self, key: str, top1: float, data_hash: str = "", **extra) -> B.Verdict:
        """Judge top-1 (percent) of model/variant ``key`` on data ``data_hash`` against the stored best; a drop
        beyond the threshold fails the calling test."""
        v = B.judge(B.read(self.path), self.path, key, float(top1), data_hash, self.threshold)
        self.config.stash[_RESULTS].append({"key": key, "data_hash": data_hash, "top1": float(top1), "ok": v.ok,
                                            "best": v.best, "message": v.message, "test": self.nodeid, **extra})
        if not v.ok:
            pytest.fail(v.message, pytrace=False)
        return v

    def evaluate(self, model, data, *, policy=None, patch: bool = False, variant=None, key: str | None = None,
                 **kw):
        """``opkit.evaluate`` of one variant (a policy, opkit.patch, or any variant object; FP32 when none) on
        labelled ``data``, recorded under ``key`` (default ``<model>/<variant>``); returns the EvalResult."""
        from ..evaluate import SimVariant, evaluate
        if variant is None and (policy or patch):
            pol = policy or "cann-force-fp16"
            variant = SimVariant(f"{Path(pol).stem}{'+patch' if patch else ''}", policy=pol, patch=patch)
        res = evaluate(model, data, [variant] if variant is not None else [], **kw)
        name = res.names[-1]
        self.record(key or f"{res.model}/{name}", res.topk(name, 1), res.data["hash"],
                    fp32=res.topk("fp32", 1), n=res.n)
        return res


@pytest.fixture
def opkit_accuracy(request) -> AccuracyGate:
    return AccuracyGate(request.config, request.node.nodeid)


def pytest_testnodedown(node, error):
    """xdist controller: collect the results a worker judged."""
    node.config.stash[_RESULTS].extend(getattr(node, "workeroutput", {}).get("opkit_accuracy", []))


_LINES = pytest.StashKey[list]()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    config = session.config
    results = config.stash[_RESULTS]
    if hasattr(config, "workerinput"):
        config.workeroutput["opkit_accuracy"] = results       # the controller writes
        return
    if not results:
        return
    path = _path(config, "--opkit-baseline", ".npu-accuracy-baseline")
    lines = [("PASS " if r["ok"] else "FAIL ") + r["message"] for r in results]
    if config.getoption("--opkit-update-baseline"):
        lines += [f"baseline {path}: {n}" for n in B.update(path, results)]
    from .report import write_report
    report = write_report(_path(config, "--opkit-report", "accuracy_report.html"), B.read(path), results, path,
                          B.parse_threshold(config.getoption("--opkit-threshold")))
    config.stash[_LINES] = lines + [f"accuracy report: {report}"]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    lines = config.stash.get(_LINES, None)
    if lines:
        terminalreporter.write_sep("-", "opkit accuracy gate")
        for line in lines:
            terminalreporter.write_line(line)
