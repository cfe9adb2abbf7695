"""The opkit pytest plugin (entry point ``pytest11: opkit``).

``pytest`` in a workspace collects every ``ops/<op>/op.yaml``: one test per case
(``layer_norm_fp32[fp16-64x1000-offset200]``) plus ``torch.library.opcheck`` per op and dtype
(``layer_norm_fp32[opcheck-fp16]``). Markers: ``opkit``, the dtype tag (``fp16``...), the distribution tag
(``offset200``...), ``opcheck``. ``-k`` and ``-m`` work as usual. ``opkit test`` (runner.py) runs the same
through pytest-xdist workers, so a case that crashes its process, or hangs past the timeout
(faulthandler's watchdog), fails alone with the reason and the command that reruns it.
Reports (JSON + HTML) are written by the controlling process at the end of the session.

This module holds the options, the configuration and the collection; the items are in items.py, the
crash/hang watchdog in watchdog.py, the controlling process (progress, records, reports) in session.py.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from ..opspec import DTYPES, load_spec
from .cases import build_matrix
from ..opspec.distributions import all_tags
# Re-exported: the names tests and conftests used before the plugin was split.
from .items import RECORD_KEY, CaseFailed, CaseItem, OpcheckItem, format_failure, mode_of, rerun_command  # noqa: F401
from .session import Session
from .watchdog import CrashFiles, crash_reason, read_crash  # noqa: F401

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
                help="folder for report-<mode>.json/.html (default <workspace>/build/opkit/reports)")
    g.addoption("--opkit-no-html", action="store_true", help="do not write the HTML report")
    g.addoption("--opkit-target", default="cpu", help="target the ops were built for (default cpu)")
    g.addoption("--opkit-timeout", type=float, default=DEFAULT_TIMEOUT,
                help=f"seconds before a case counts as hung (default {DEFAULT_TIMEOUT:g})")
    g.addoption("--opkit-bundled", action="store_true",
                help="test the bundled ops as opkit.load() builds them (the per-user cache), not a workspace build")
    g.addoption("--opkit-no-collect", action="store_true", help="do not collect ops/*/op.yaml files")
    g.addoption("--opkit-no-opcheck", action="store_true", help="skip the torch.library.opcheck items")
    g.addoption("--opkit-progress", action="store_true",
                help="compact progress bar and summary (used by `opkit test`, with -p no:terminal)")


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config):
    config.addinivalue_line("markers", "opkit: an opkit harness case (from ops/<op>/op.yaml)")
    config.addinivalue_line("markers", "opcheck: torch.library.opcheck of an opkit op")
    for _, _, tag in DTYPES.values():
        config.addinivalue_line("markers", f"{tag}: opkit case of this dtype")
    for tag in all_tags(DTYPES):
        config.addinivalue_line("markers", f"{tag}: opkit case with this value distribution")
    # outputs start as a sentinel, not recycled memory (csrc/kernels.cpp): unwritten elements always fail
    os.environ["OPKIT_POISON_OUTPUTS"] = "1"
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
    config._opkit_crash = CrashFiles(Path(crash_dir), wid)


class _XdistHooks:
    def __init__(self, crash_dir: str):
        self.crash_dir = crash_dir

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node):
        node.workerinput["opkit_crash_dir"] = self.crash_dir


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


