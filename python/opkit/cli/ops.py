"""The op loop's commands: `opkit new / build / test / list / cflags` (docs/cli.md)."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from ..errors import BuildError, OpkitError
from . import options as O
from .app import cli, err, out


_OPTION_TARGET: dict[str, set[str]] = {}     # `opkit build` option name -> the targets that declare it


def _target_build_options(f):
    """Each target's own `opkit build` options (targets/<name>: cli_options()); an option two targets declare
    (--no-auto-sync: cpu and npu) is one option of both."""
    from .. import targets
    params = f.__dict__.setdefault("__click_params__", [])
    for name in reversed(targets.names()):
        for opt in reversed(targets.get(name).cli_options()):
            opt = O.shared_for_target(opt)      # --dtype, --soc, --no-auto-sync: the shared form (options.py)
            if opt.name not in _OPTION_TARGET:
                params.append(opt)
            _OPTION_TARGET.setdefault(opt.name, set()).add(name)
    return f


def _split_options(target: str, options: dict) -> dict:
    """The chosen target's options; an option of another target that was set is an error."""
    foreign = {k: sorted(_OPTION_TARGET[k]) for k, v in options.items()
               if v not in (None, False, ()) and target not in _OPTION_TARGET[k]}
    if foreign:
        said = ", ".join(f"--{k.replace('_', '-')} ({' / '.join(f'--target {t}' for t in ts)})"
                         for k, ts in foreign.items())
        owners = " / ".join(sorted({f"--target {t}" for ts in foreign.values() for t in ts}))
        raise OpkitError(f"{said}: these options apply to {owners} only, not --target {target}")
    return {k: v for k, v in options.items() if target in _OPTION_TARGET[k]}


@cli.command()
@click.argument("name")
@click.option("--family", "-f", default=None, help="template family (default: norm); see `opkit list --families`")
@click.option("--set", "answer", multiple=True, metavar="KEY=VALUE",
              help="a template answer, e.g. --set norm=rms (repeatable; `opkit list --families` lists them)")
@O.renamed("new", "--data", "--set", "answer", multiple=True)
@O.renamed("new", "-d", "--set", "answer", multiple=True)
@click.option("--answers", type=click.Path(dir_okay=True), default=None,
              help="replay a recorded .opkit-scaffold.yaml (its family and answers) under NAME")
@click.option("--from", "from_op", default=None, metavar="BUNDLED_OP",
              help="start from a bundled op (e.g. --from reduce_max_fp32), renamed to NAME")
@click.option("--force", is_flag=True, help="rewrite the scaffold files of an existing op (old ones kept as *.orig)")
@click.option("--from-aten", "from_aten", default=None, metavar="aten::op.overload",
              help="mirror this aten op (schema, reference, skeleton kernel); see `opkit scan --scaffold`")
@click.option("--lang", type=click.Choice(["ascendc", "tbe"]), default="ascendc", show_default=True,
              help="kernel language: AscendC kernel.cpp, or a TBE DSL kernel.py (docs/tbe.md)")
def new(name: str, family: str | None, answer: tuple[str, ...], answers: str | None, from_op: str | None,
        force: bool, from_aten: str | None, lang: str) -> None:
    """Scaffold the op NAME (CamelCase, e.g. LayerNormFP32) in the workspace's ops/ folder."""
    from ..families import parse_data
    from ..scaffold import new as scaffold_new

    if from_aten:
        from ..scanner.scaffold_aten import new_from_aten
        if family not in (None, "aten") or lang != "ascendc":
            raise OpkitError("--from-aten renders the aten family (AscendC); drop --family / --lang")
        s = new_from_aten(from_aten, name=name, force=force)
    else:
        s = scaffold_new(name, family=family, force=force, data=parse_data(answer), answers=answers,
                         from_op=from_op, lang=lang)
    if s.new_workspace:
        out.print(f"new workspace: {s.workspace} (marker opkit.yaml)", markup=False)
    kind, _, what = s.source.partition(":")
    where = {"bundled": "the bundled op ", "from": "the bundled op ", "family": "the family ",
             "answers": "the answers in "}[kind] + what
    out.print(f"created {s.op_dir} from {where}", markup=False)
    for p in s.written:
        out.print(f"  wrote {p.relative_to(s.workspace)}", markup=False)
    for p in s.kept:
        out.print(f"  kept your previous version as {p.relative_to(s.workspace)}", markup=False)
    if not s.written:
        out.print("  (all scaffold files already up to date)")
    out.print("next: opkit build && opkit test")


@cli.command()
@click.argument("ops", nargs=-1)
@O.target
@O.jobs
@click.option("-v", "--verbose", is_flag=True, help="show every compiler command and its output")
@click.option("--keep-going", is_flag=True, help="an op that fails (op.yaml or compile) does not stop the "
              "others; the failed ops are listed at the end (exit 1)")
@O.renamed("build", "-k", "--keep-going", "keep_going", is_flag=True)
@_target_build_options
def build(ops: tuple[str, ...], target: str | None, jobs: int | None, verbose: bool, keep_going: bool,
          **options) -> None:
    """Build the workspace's ops (all, or the OPS named and the ops they need: backward, reference calls)."""
    from .. import build as router
    from ..build import build as run_build
    from ..targets import HOST, default_target

    target = target or default_target()
    options = _split_options(target, options)
    t0 = time.monotonic()
    from ..toolchain.tools import BuildProgress
    with BuildProgress(err, verbose) as log:
        try:
            specs = run_build(ops, target=target, jobs=jobs, verbose=verbose, log=log, keep_going=keep_going,
                              **options)
        except BuildError as e:
            built = getattr(e, "built", None)
            if built:
                out.print(f"built {_built(built, ops)} for {target}; failed: {', '.join(sorted(e.failed_ops))}",
                          markup=False)
            raise
        if target == HOST:     # bundled ops the built ops need: into the bundled-op cache, where load() looks
            from ..loader import ensure_bundled_built
            from ..workspace import require_workspace
            _, bundled = router.with_needs(require_workspace(), specs)
            if bundled:
                log(f"building {', '.join(s.snake for s in bundled)} (bundled) into the cache")
                got = {s.snake for s, _ in ensure_bundled_built(bundled, quiet=True)}
                lost = [s.snake for s in bundled if s.snake not in got]
                if lost:
                    raise BuildError(f"opkit build: bundled op(s) {', '.join(lost)} that the built ops need did "
                                     "not build (see the warnings above)")
                specs = specs + bundled
    out.print(f"built {_built(specs, ops)} for {target} in {time.monotonic() - t0:.1f} s", markup=False)


def _built(specs, named: tuple[str, ...]) -> str:
    """'a, b' -- with the ops built because a named op needs them marked as such."""
    if not named:
        return ", ".join(s.snake for s in specs)
    asked = [s for s in specs if s.snake in named or s.name in named or s.dir.name in named]
    needs = [s.snake for s in specs if s not in asked]
    return ", ".join(s.snake for s in asked) + (f" and the ops they need: {', '.join(needs)}" if needs else "")


@cli.command()
@click.argument("ops", nargs=-1)
@click.option("--quick", "depth", flag_value="quick", help="a fast subset of the cases (edit loop)")
@click.option("--full", "depth", flag_value="full", help="the full case matrix")
@click.option("-k", "k", default=None, metavar="EXPR", help="only cases matching this pytest -k expression")
@O.seed
@O.json_out
@O.renamed("test", "--report-json", "--json", "json_out")
@O.dtype
@O.target
@O.jobs
@click.option("--compare-langs", is_flag=True, help="ops holding kernel.py (TBE) and kernel.cpp (AscendC): run both "
              "on every case, against the golden and each other (docs/tbe.md)")
@O.baseline
@O.update_baseline
@click.option("--bundled", is_flag=True, help="test opkit's bundled ops as opkit.load() builds them (the per-user "
              "cache, built first if needed), from any folder")
@click.option("--ttk", "ttk_csv", type=click.Path(exists=True, dir_okay=False), default=None, metavar="FILE.csv",
              help="run a CANN TTK kernel-mode CSV (ops-math / ops-nn tests/st/**/ttk_kernel_*.csv, or your own) "
              "against the imported CANN op it names, judged by TTK's comparison (docs/cann.md)")
@click.option("--ttk-compare", "ttk_compare", type=click.Choice(["stat_rel_err", "isclose", "binary_equal"]),
              default=None, help="with --ttk: TTK's comparison for float outputs (default: TTK's, stat_rel_err)")
def test(ops: tuple[str, ...], depth: str | None, k: str | None, seed: int, json_out: str | None,
         dtype: tuple[str, ...], target: str | None, jobs: int | None, compare_langs: bool,
         baseline: Path | None, update_baseline: Path | None, bundled: bool, ttk_csv: str | None,
         ttk_compare: str | None) -> None:
    """Test the workspace's ops against their reference.py; exit code = verdict."""
    if ttk_csv:
        from ..cannproject import ttk_run
        sys.exit(ttk_run.run(ttk_csv, list(ops) or None, ttk_compare, seed,
                             log=lambda m: out.print(m, markup=False, soft_wrap=True)))
    if ttk_compare:
        raise click.BadParameter("--ttk-compare goes with --ttk FILE.csv", param_hint="'--ttk-compare'")
    if json_out == "-":
        raise click.BadParameter("opkit test prints its progress on stdout: give a file, e.g. --json report.json",
                                 param_hint="'--json'")
    report_json = Path(json_out) if json_out else None
    if compare_langs:
        from ..harness.compare_langs import run as compare_run
        sys.exit(compare_run(list(ops) or None, mode=depth or "default", seed=seed, report_json=report_json,
                             log=lambda m: out.print(m, markup=False, soft_wrap=True)))
    from ..accuracy.baseline import run_test     # the harness run, then the baseline gate if asked
    from ..targets import default_target

    target = target or default_target()

    code = run_test(list(ops) or None, quick=depth == "quick", full=depth == "full", k=k, seed=seed,
                    report_json=report_json, target=target, jobs=jobs, dtypes=list(dtype) or None,
                    baseline=baseline, update_baseline=update_baseline, bundled=bundled)
    sys.exit(int(code))


@cli.command("list")
@click.option("--families", is_flag=True, help="list the template families instead of ops")
def list_(families: bool) -> None:
    """Ops of the workspace and bundled ops, their family, build state, and the targets available."""
    from .. import build as router
    from .. import targets
    from ..toolchain.cache import bundled_cache_dir
    from ..workspace import all_ops, build_dir, find_workspace

    if families:
        from ..families import families as fams
        from ..families import meta
        def show(v):
            return str(v).lower() if isinstance(v, bool) else str(v)

        def answers(f):
            # Choices (first = default) for answers that select a variant; the key alone for structured ones
            # (the aten family's are filled by `opkit scan`).
            out = []
            for k, d in (meta(f).get("data") or {}).items():
                vals = d.get("choices") or [d.get("default")]
                out.append(k if any(isinstance(v, (list, dict)) for v in vals) else f"{k}={'|'.join(map(show, vals))}")
            return ", ".join(out) or "-"
        rows = [(f, answers(f), summary) for f, summary in fams().items()]
        _columns([("family", "answers (--data, first = default)", "summary"), *rows])
        return
    ws = find_workspace()
    ws_entries, bundled, shadowed = all_ops(ws)
    rows: list[tuple[str, ...]] = []
    cache = bundled_cache_dir()
    for e in ws_entries:
        if e.error:
            rows.append((e.dir.name, "?", "workspace", "invalid op.yaml", str(e.error).splitlines()[0]))
            continue
        state = router.build_state(targets.HOST, e.spec, build_dir(ws, targets.HOST))
        where = "workspace (shadows bundled)" if e.snake in shadowed else "workspace"
        rows.append((e.snake, e.spec.family, where, state, e.spec.summary))
    for e in bundled:
        if e.error:
            rows.append((e.dir.name, "?", "bundled", "invalid op.yaml", str(e.error).splitlines()[0]))
        else:
            where = "bundled (shadowed)" if e.snake in shadowed else "bundled"
            state = router.build_state(targets.HOST, e.spec, cache)
            state = {"built": "built (cache)", "stale": "stale (rebuilt on load)"}.get(state, "on first load()")
            rows.append((e.snake, e.spec.family, where, state, e.spec.summary))
    out.print(f"workspace: {ws or '(none: run `opkit new <OpName>` to start one)'}", markup=False)
    _columns([("op", "family", "where", f"{targets.HOST} build", "summary"), *rows])
    for name in targets.names():
        try:
            ok, why = targets.get(name).available()
        except OpkitError as e:
            ok, why = False, str(e)
        out.print(f"target {name}: {'available' if ok else 'unavailable'} -- {why}", markup=False)


def _columns(rows: list[tuple[str, ...]]) -> None:
    """Plain aligned columns (whole names, whatever the terminal width; the last column runs on)."""
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        out.print("  ".join(f"{str(c):<{w}}" for c, w in zip(r, widths)) + "  " + str(r[-1]),
                  markup=False, soft_wrap=True)


@cli.command()
@click.option("--libs", is_flag=True, help="print the link flags instead")
@click.option("--cann", "cann", is_flag=True, help="also what CANN's build gives an ops-math / ops-nn kernel compiled in "
              "place: the kernel view of the host headers its op_host tiling header includes (log/log.h, "
              "register/op_impl_registry.h, ...) and, with --opbase, opbase's kernel library (atvoss/, op_kernel/)")
@O.opbase
def cflags(libs: bool, cann: bool, opbase: str | None) -> None:
    """Compiler flags for building a standalone program against opkit's AscendC CPU emulator."""
    from .. import emulator
    flags = emulator.cflags(libs=libs)
    if cann and not libs:
        from ..cannproject.libs import kernel_flags
        flags = [*flags, *kernel_flags(opbase)]
    elif opbase:
        raise click.BadParameter("--opbase goes with --cann", param_hint="'--opbase'")
    # Plain echo, not rich: the line is meant for $(opkit cflags) and must never wrap at the terminal width.
    click.echo(flags if isinstance(flags, str) else " ".join(flags))
