"""Every option that more than one `opkit` command takes, declared once (docs/cli.md "Options").

One option name, one meaning, one form, one default: a command takes `--data` by applying `options.data`,
never by declaring its own `--data`. tests/test_cli_options.py walks click's command tree and fails when two
commands declare one name differently; docs/cli.md's option table is checked against the same tree.

Renamed options: the old spelling keeps working for one release (opkit 0.2 removes it) as a hidden alias that
prints a deprecation warning naming the new spelling (`renamed`); DEPRECATED lists them. An option whose old
form cannot be kept without a second form (`opkit eval --json` with no PATH, `--topk 1 5`) is not kept.
"""
from __future__ import annotations

import contextlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from ..errors import OpkitError

MODEL_HELP = "pkg.module:factory, path/to/file.py:factory or ./file.py:factory (a function returning the model)"
DEFAULT_POLICY = "cann-force-fp16"
DEFAULT_BATCH = 16          # = opkit.evaluate.runner.DEFAULT_BATCH (a test checks they agree)
DEFAULT_PREFIX_MB = 256.0      # quant.prefix.DEFAULT_MB (not imported: the CLI loads torch only when a command runs)


# -- renamed options ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Renamed:
    command: str        # the command it was declared in
    old: str            # the old spelling, e.g. "--data"
    new: str            # the spelling that replaces it, e.g. "--set"
    param: str          # the parameter of the new option the value goes to


DEPRECATED: list[Renamed] = []      # filled by `renamed` as the command modules load


def renamed(command: str, old: str, new: str, param: str, *, is_flag: bool = False, multiple: bool = False):
    """A hidden ``old`` spelling of ``new`` that still works for a release: it warns on stderr, naming ``new``,
    and gives its value to ``param`` (merged by `Command.parse_args`)."""
    DEPRECATED.append(Renamed(command, old, new, param))

    def store(ctx: click.Context, _p: click.Parameter, value):
        if value in (None, False, ()):
            return
        click.echo(f"opkit: warning: {old} is deprecated and will be removed in opkit 0.2; use {new}", err=True)
        ctx.meta.setdefault("opkit.renamed", []).append((param, value))

    decls = [old] if old.startswith("--") or len(old) == 2 else [old]
    return click.option(*decls, f"_renamed_{param}_{old.strip('-').replace('-', '_')}", hidden=True,
                        is_flag=is_flag, multiple=multiple, expose_value=False, callback=store,
                        default=None if not (is_flag or multiple) else (False if is_flag else ()))


class Command(click.Command):
    """A command whose deprecated spellings (`renamed`) fill the new option's parameter."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        rest = super().parse_args(ctx, args)
        for param, value in ctx.meta.get("opkit.renamed", []):
            now = ctx.params.get(param)
            if isinstance(value, tuple):
                ctx.params[param] = tuple(now or ()) + value
            elif now in (None, False) or now == _default_of(self, param):
                ctx.params[param] = value
            else:
                raise click.UsageError(f"give the option once: {_spelling(self, param)} (its old spelling too)", ctx)
        return rest


class Group(click.Group):
    """The `opkit` group: its subcommands are `Command`s."""
    command_class = Command


def _default_of(cmd: click.Command, param: str):
    p = next((p for p in cmd.params if p.name == param), None)
    return None if p is None else p.default


def _spelling(cmd: click.Command, param: str) -> str:
    p = next((p for p in cmd.params if p.name == param), None)
    return "/".join(p.opts) if p is not None else param


# -- the shared options: one decorator per option name ----------------------------------------------------------

def model_argument(f):
    """MODEL: the model a model-level command works on (one loader: opkit/toolchain/user_code.py)."""
    return click.argument("model", metavar="MODEL")(f)


def data(f):
    return click.option("--data", "data", required=True, metavar="PATH",
                        help="labelled set: a .pt/.npz file with x and y, or a folder ROOT/<class>/<file>")(f)


def transform(f):
    return click.option("--transform", default=None, metavar="PKG.MOD:FN",
                        help="sample transform of a folder --data (default: opkit.data.transforms:default, "
                             "docs/eval.md)")(f)


def inputs(f):
    return click.option("--input", "inputs", multiple=True, metavar="SPEC",
                        help="an example input: a shape such as 1x3x224x224 (seeded normal values) or a .pt/.npy "
                             "file; a,b for a model of several arguments; repeat for several example inputs")(f)


def policy(f):
    return click.option("--policy", default=DEFAULT_POLICY, show_default=True, metavar="NAME|FILE",
                        help="device precision policy: a built-in name (fp16-compute, torch-npu-autocast, "
                             "cann-force-fp16, cann-allow-fp32-to-fp16, cann-allow-mix-precision) or a policy "
                             ".yaml")(f)


def mixlist(f):
    return click.option("--mixlist", type=click.Path(exists=True, dir_okay=False), default=None, metavar="FILE",
                        help="CANN modify_mixlist JSON applied to --policy cann-allow-mix-precision")(f)


def batch_size(f):
    return click.option("--batch-size", type=click.IntRange(min=1), default=DEFAULT_BATCH, show_default=True,
                        metavar="N", help="samples per evaluation batch")(f)


def workers(f):
    return click.option("--workers", type=click.IntRange(min=1), default=None, metavar="N",
                        help="local worker processes (default: the machine's cores; opkit quant: its --help says "
                             "its own)")(f)


def ray(f):
    return click.option("--ray", "ray_address", default=None, metavar="auto|ADDRESS",
                        help="shard over a Ray cluster (auto: the running one, else a local instance); "
                             "pip install 'opkit[ray]'")(f)


def json_out(f):
    return click.option("--json", "json_out", type=click.Path(dir_okay=False, allow_dash=True), default=None,
                        metavar="PATH", help="write the report as JSON to PATH (- : to stdout, the text report "
                                             "then goes to stderr)")(f)


def html_out(f):
    return click.option("--html", "html_out", type=click.Path(dir_okay=False), default=None, metavar="PATH",
                        help="write the report as HTML to PATH")(f)


def target_drop(f):
    return click.option("--target-drop", type=click.FloatRange(min=0), default=0.5, show_default=True,
                        metavar="POINTS", help="allowed top-1 drop from FP32, in percentage points")(f)


def seed(f):
    return click.option("--seed", type=int, default=0, show_default=True, metavar="N",
                        help="seed of the random draws (--input values, test cases, golden-set samples)")(f)


def threshold(f):
    return click.option("--threshold", type=float, default=0.999, show_default=True, metavar="COS",
                        help="per-layer cosine similarity below which a layer diverges")(f)


def fail_on_divergence(f):
    return click.option("--fail-on-divergence", is_flag=True,
                        help="exit 1 when any layer is below --threshold")(f)


def scan_report(f):
    return click.option("--scan", "scan_json", type=click.Path(exists=True, dir_okay=False), default=None,
                        metavar="FILE", help="an `opkit scan --json` report: the ops that fall back to the CPU")(f)


def baseline(f):
    return click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path), default=None,
                        metavar="FILE", help="fail when this run got worse than the stored baseline FILE "
                                             "(test: per-case metrics; diagnose: per-layer cosines)")(f)


def update_baseline(f):
    return click.option("--update-baseline", type=click.Path(dir_okay=False, path_type=Path), default=None,
                        metavar="FILE", help="store this run as the baseline FILE")(f)


def target(f):
    from ..targets import names
    return click.option("--target", type=click.Choice(list(names())), default=None,
                        help="build target (default: cpu, or $OPKIT_TARGET)")(f)


def jobs(f):
    return click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
                        help="parallel jobs: compiles (build) or test workers (test); default: all cores")(f)


DTYPE_HELP = ("only this lead dtype (float32/fp32, float16/fp16, bfloat16/bf16; repeatable): build its kernels, "
              "test its cases")


def dtype(f):
    return click.option("--dtype", "dtype", multiple=True, metavar="DTYPE", help=DTYPE_HELP)(f)


SOC_HELP = "SoC version, e.g. Ascend910B3 (default: the NPU's, by `npu-smi info`, else Ascend910B3)"


def soc(f):
    return click.option("--soc", default=None, metavar="SOC", help=SOC_HELP)(f)


def no_auto_sync(f):
    return click.option("--no-auto-sync", "no_auto_sync", is_flag=True, default=False,
                        help="build every kernel as CANN's --cce-auto-sync=off would: the kernel must sync the "
                             "scalar unit itself (on the emulator a missing V->S sync before GetValue is "
                             "pipe-race; the NPU build passes --cce-auto-sync=off); one op: `auto_sync: false` "
                             "in its op.yaml")(f)


def op_type(f):
    return click.option("--op", "op_type", default=None, metavar="OPTYPE",
                        help="the OpType, when the source holds several")(f)


def reference(f):
    return click.option("--reference", default=None, metavar="EXPR",
                        help="golden: a torch function (torch.exp), an expression over the inputs and attrs "
                             "(\"x + alpha * y\") or a reference.py; default: a reference.py to fill in")(f)


def no_check(f):
    return click.option("--no-check", is_flag=True, help="only write the op folder; skip running the op once")(f)


def opbase(f):
    return click.option("--opbase", type=click.Path(exists=True, file_okay=False), default=None, metavar="DIR",
                        help="the hicann/opbase checkout whose libraries an ops-math / ops-nn op uses (else "
                        "OPKIT_CANN_OPBASE, or a sibling folder of the op's repository)")(f)


# Options a target adds to `opkit build` (targets/<name>: cli_options()) that are shared options: the target says
# which name it wants, the command line form is the one above.
FOR_TARGETS = {"--dtype": dtype, "--soc": soc, "--no-auto-sync": no_auto_sync}


def shared_for_target(opt: click.Option) -> click.Option:
    """The shared declaration of a target's build option of the same name (else the target's own)."""
    deco = next((FOR_TARGETS[o] for o in opt.opts if o in FOR_TARGETS), None)
    if deco is None:
        return opt
    return deco(lambda: None).__click_params__[0]


# -- the one way to parse --input, write JSON, and print ---------------------------------------------------------

def example_inputs(spec: str, seed: int = 0, dtype=None) -> tuple:
    """One --input SPEC -> the positional arguments: ``1x3x8x8`` or ``a.npy``; ``2x16,2x16`` for two arguments.
    Shapes get seeded N(0, 1) values (argument i: seed + i); files are read as they are."""
    from ..accuracy.dump import make_inputs
    parts = [p.strip() for p in spec.split(",")]
    if not all(parts):
        raise click.BadParameter(f"{spec!r}: an empty argument (SPEC is SHAPE|FILE[,SHAPE|FILE...])",
                                 param_hint="'--input'")
    args = []
    for i, part in enumerate(parts):
        try:
            (t,) = make_inputs([part.lower() if "x" in part.lower() and not Path(part).exists() else part], seed + i)
        except OpkitError as e:
            raise click.BadParameter(f"{spec!r}: {str(e).split(': ', 1)[-1]}", param_hint="'--input'") from None
        args.append(t if dtype is None or not t.is_floating_point() else t.to(dtype))
    return tuple(args)


def one_input(inputs: tuple[str, ...], seed: int, command: str, dtype=None) -> tuple | None:
    """diagnose / dump: the one example input (None: none given). Several --input were several positional
    arguments before opkit 0.1.1: still read so, with a warning naming the new form."""
    if not inputs:
        return None
    if len(inputs) > 1:
        click.echo(f"opkit: warning: opkit {command}: several --input as several arguments is deprecated; write "
                   f"--input {','.join(inputs)}", err=True)
        return tuple(t for s in inputs for t in example_inputs(s, seed, dtype))
    return example_inputs(inputs[0], seed, dtype)


def _jsonable(o):
    if hasattr(o, "tolist"):            # tensors, numpy values
        return o.tolist()
    if hasattr(o, "as_dict"):
        return o.as_dict()
    return str(o)


def write_json(path: str | Path, data, say=None) -> None:
    """The JSON of every command: ``path`` ``-`` is stdout, else the file through the one JSON writer
    (toolchain.files.write_json, atomic), then ``json: PATH`` on the console ``say``."""
    from ..toolchain.files import write_json as write
    if str(path) == "-":
        click.echo(json.dumps(data, indent=1, default=_jsonable))
        return
    (say or _console()[0]).print(f"json: {write(path, data, default=_jsonable)}", markup=False)


def _console():
    from .console import err, out
    return out, err


def text_console(json_path):
    """Where a command prints its text report: stdout, or stderr when --json - has stdout."""
    out, err = _console()
    return err if str(json_path) == "-" else out


@contextlib.contextmanager
def stdout_for_json(json_path):
    """With --json -, whatever the run prints meanwhile (Ray prints worker deaths on stdout) goes to stderr."""
    with contextlib.redirect_stdout(sys.stderr) if str(json_path) == "-" else contextlib.nullcontext():
        yield


def refuse_overwrite(outputs: dict[str, str | None], inputs: dict[str, str | None]) -> None:
    """An output option naming the same file as an input option: a usage error naming both."""
    for what, path in outputs.items():
        for name, other in inputs.items():
            if path and other and str(path) != "-" and Path(path).resolve() == Path(other).resolve():
                raise click.UsageError(f"{what} {path} would overwrite {name}: give another path")


# -- the option table of docs/cli.md (tests/test_cli_options.py checks the docs hold exactly this) ------------

SHARED = {"--data": data, "--transform": transform, "--input": inputs, "--policy": policy, "--mixlist": mixlist,
          "--batch-size": batch_size, "--workers": workers, "--ray": ray, "--json": json_out, "--html": html_out,
          "--target-drop": target_drop, "--seed": seed, "--threshold": threshold,
          "--fail-on-divergence": fail_on_divergence, "--scan": scan_report, "--baseline": baseline,
          "--update-baseline": update_baseline, "--target": target, "--jobs": jobs, "--dtype": dtype, "--soc": soc,
          "--op": op_type, "--reference": reference, "--no-check": no_check, "--opbase": opbase}


def declared(name: str) -> click.Option:
    """The click.Option the shared decorator of ``name`` declares."""
    return SHARED[name](lambda: None).__click_params__[0]


def commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    """Every command under ``group`` by its full name ("eval", "a b" for a nested group)."""
    out: dict[str, click.Command] = {}
    for name, cmd in sorted(group.commands.items()):
        full = f"{prefix}{name}"
        if isinstance(cmd, click.Group):
            out.update(commands(cmd, full + " "))
        else:
            out[full] = cmd
    return out


def _default_text(p: click.Option) -> str:
    d = p.default
    if p.is_flag or d is None or d == () or not isinstance(d, (str, int, float, list, tuple)):
        return ""
    return ",".join(map(str, d)) if isinstance(d, (list, tuple)) else str(d)


def _metavar(p: click.Option, group: click.Group) -> str:
    try:                                     # click >= 8.2 passes the context
        got = p.type.get_metavar(p, click.Context(group))
    except TypeError:
        got = p.type.get_metavar(p)
    return got or p.type.name.upper()


def options_markdown(group: click.Group) -> str:
    """The table of every visible option of every command: one row per option name."""
    rows: dict[str, tuple[click.Option, list[str]]] = {}
    for cname, cmd in commands(group).items():
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden and "--help" not in p.opts:
                key = "/".join(sorted(p.opts, key=len, reverse=True))
                rows.setdefault(key, (p, []))[1].append(cname)
    lines = ["| command | arguments | what it does |", "|---|---|---|"]
    for cname, cmd in commands(group).items():
        args = " ".join((p.metavar or p.name.upper()) + ("..." if p.nargs == -1 else "")
                        for p in cmd.params if isinstance(p, click.Argument))
        what = " ".join((cmd.help or "").split("\n\n")[0].split())
        what = what.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
        lines.append(f"| `opkit {cname}` | {args and f'`{args}`'} | {what} |")
    lines += ["", "| option | value | default | commands | meaning |", "|---|---|---|---|---|"]
    for key, (p, cmds) in sorted(rows.items(), key=lambda kv: kv[0].lstrip("-").lower()):
        value = "(flag)" if p.is_flag else (p.metavar or _metavar(p, group))
        if p.multiple:
            value += " (repeatable)"
        value = value.replace("|", "\\|")         # GitHub tables split cells at | even inside code
        meaning = (p.help or "").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
        lines.append(f"| `{key}` | `{value}` | {_default_text(p) and f'`{_default_text(p)}`'} | "
                     f"{', '.join(cmds)} | {meaning} |")
    lines += ["", "Renamed options: the old spelling still works in this release, with a warning naming the new one; "
              "opkit 0.2 removes it.", "", "| command | old | new |", "|---|---|---|"]
    lines += [f"| {r.command} | `{r.old}` | `{r.new}` |" for r in DEPRECATED]
    return "\n".join(lines) + "\n"
