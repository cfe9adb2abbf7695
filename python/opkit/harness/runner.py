"""``opkit test``: the harness through pytest + pytest-xdist, with a progress bar and a summary.

Always runs cases in worker processes (``-n jobs``, at least one), so a case that crashes its process
or hangs fails alone (xdist replaces the worker) and the run goes on. Exit code = verdict.
"""
from __future__ import annotations

import os
import sys
from importlib import metadata
from pathlib import Path

from ..errors import OpkitError
from ..toolchain.tools import default_jobs


def _plugin_via_entry_point() -> bool:
    try:
        eps = metadata.entry_points(group="pytest11")
    except TypeError:  # pragma: no cover - very old importlib.metadata
        eps = metadata.entry_points().get("pytest11", [])
    return any(ep.value.split(":")[0] == "opkit.harness.plugin" for ep in eps)


def pytest_args(paths: list[str], *, quick=False, full=False, k=None, seed=None, report_json=None,
                target="cpu", jobs=None, workspace: Path, progress=True, extra: list[str] | None = None,
                bundled: bool = False, report_dir: Path | None = None) -> list[str]:
    """The pytest command line `opkit test` runs (also printed by ``OPKIT_HARNESS_DEBUG=1``)."""
    args = list(paths)
    if not _plugin_via_entry_point():
        args += ["-p", "opkit.harness.plugin"]
    args += ["-p", "no:cacheprovider", "--rootdir", str(workspace), "-n", str(jobs or default_jobs()),
             "--max-worker-restart", "100000", "--opkit-target", target]
    if progress:
        args += ["-p", "no:terminal", "--opkit-progress"]
    if quick:
        args.append("--opkit-quick")
    if full:
        args.append("--opkit-full")
    if seed is not None:
        args += ["--opkit-seed", str(int(seed))]
    if k:
        args += ["-k", k]
    if report_json:
        args += ["--opkit-report-json", str(Path(report_json).resolve())]
    if bundled:
        args.append("--opkit-bundled")
    if report_dir:
        args += ["--opkit-report-dir", str(report_dir)]
    return args + list(extra or [])


def run(ops: list[str] | None = None, *, quick: bool = False, full: bool = False, k: str | None = None,
        seed: int | None = None, report_json: str | Path | None = None, target: str = "cpu",
        jobs: int | None = None, workspace: str | Path | None = None, dtypes: list[str] | None = None,
        bundled: bool = False) -> int:
    """Test the workspace's ops (all, or those named). Returns the exit code (0 = every case passed).
    dtypes: only those lead dtypes' cases (the edit loop after `opkit build --dtype`). The baseline gate
    (`opkit test --baseline`) runs this, then compares: opkit/accuracy/baseline.py run_test().
    ``bundled``: opkit's bundled ops as opkit.load() builds them (the per-user cache, built first if
    needed), from anywhere; reports go to that cache's ``reports/`` folder."""
    from .. import build as router
    from .. import targets
    from ..opspec import dtype_names
    from ..toolchain.stamps import built_dtypes
    from ..workspace import build_dir, require_workspace, workspace_specs

    if quick and full:
        raise OpkitError("opkit test: --quick and --full exclude each other")
    if bundled:
        return _run_bundled(ops, quick=quick, full=full, k=k, seed=seed, report_json=report_json, target=target,
                            jobs=jobs, dtypes=dtypes)
    t = targets.get(target)
    target = t.NAME
    t.prepare_test()     # a clear error when this machine cannot run the target, before any case runs
    ws = Path(workspace).resolve() if workspace else require_workspace()
    specs = workspace_specs(ws, list(ops or ()))
    if not specs:
        raise OpkitError(f"opkit test: workspace {ws} has no ops (ops/<op>/op.yaml); run `opkit new <OpName>`")
    out = build_dir(ws, target)
    for s in specs:
        if target != targets.HOST and not router.library(targets.HOST, build_dir(ws, targets.HOST), s).is_file():
            raise OpkitError(f"op {s.snake}: the {target} library holds only device kernels, the schema comes "
                             f"from the {targets.HOST} build: run `opkit build {s.snake}` too")
        state = router.build_state(target, s, out)
        if state == "not built":
            raise OpkitError(f"op {s.snake} is not built for target {target} (no {router.library(target, out, s)}): "
                             f"run `opkit build {s.snake} --target {target}` in {ws}")
        if state == "stale":
            print(f"opkit test: warning: {s.snake} changed since the last `opkit build`; testing the old build "
                  f"(run `opkit build` first)", file=sys.stderr)
        want = [d for d in (dtype_names(dtypes) if dtypes else s.dtypes) if d in s.dtypes]
        have = built_dtypes(s, out / s.snake)
        if set(want) - set(have):
            raise OpkitError(f"op {s.snake} was built for {', '.join(have)} only (`opkit build --dtype`): run "
                             f"`opkit test --dtype {' --dtype '.join(have)}`, or `opkit build {s.snake}` for every dtype")
    return _pytest(specs, ws, quick=quick, full=full, k=k, seed=seed, report_json=report_json, target=target,
                   jobs=jobs, dtypes=dtypes)


def _run_bundled(ops, *, target, **kw) -> int:
    from .. import targets
    from ..errors import BuildError
    from ..loader import ensure_bundled_built
    from ..toolchain.cache import bundled_cache_dir
    from ..workspace import bundled_entries, bundled_ops_dir

    if targets.get(target).NAME != targets.HOST:
        raise OpkitError(f"opkit test --bundled runs on target {targets.HOST} (the bundled-op cache), not {target}")
    entries = [e for e in bundled_entries() if e.spec]
    if ops:
        unknown = [n for n in ops if not any(n in (e.snake, e.spec.name) for e in entries)]
        if unknown:
            raise OpkitError(f"opkit test --bundled: no bundled op {', '.join(unknown)} (bundled: "
                             f"{', '.join(e.snake for e in entries)})")
        entries = [e for e in entries if e.snake in ops or e.spec.name in ops]
    specs = [e.spec for e in entries]
    missing = {s.snake for s in specs} - {s.snake for s, _ in ensure_bundled_built(specs)}
    if missing:
        raise BuildError(f"opkit test --bundled: bundled op(s) {', '.join(sorted(missing))} did not build "
                         "(see the warnings above)")
    return _pytest(specs, bundled_ops_dir().parent, target=targets.HOST, bundled=True,
                   report_dir=bundled_cache_dir() / "reports", **kw)


def _pytest(specs, ws: Path, *, quick, full, k, seed, report_json, target, jobs, dtypes, bundled: bool = False,
            report_dir: Path | None = None) -> int:
    import pytest

    from ..opspec import DTYPES, dtype_names

    extra = ["-m", " or ".join(DTYPES[d][2] for d in dtype_names(dtypes))] if dtypes else None
    args = pytest_args([str(s.dir / "op.yaml") for s in specs], quick=quick, full=full, k=k, seed=seed,
                       report_json=report_json, target=target, jobs=jobs, workspace=ws, extra=extra,
                       bundled=bundled, report_dir=report_dir)
    if os.environ.get("OPKIT_HARNESS_DEBUG"):
        print("pytest " + " ".join(args), file=sys.stderr)
    code = int(pytest.main(args))
    if code == 5:       # pytest: no tests collected (e.g. -k matched nothing) -> not a pass
        print(f"opkit test: no case matched{f' -k {k!r}' if k else ''}", file=sys.stderr)
    return code
