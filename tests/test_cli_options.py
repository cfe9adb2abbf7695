"""One option name, one meaning, form and default across every `opkit` command (docs/cli.md "Options"): a walk
of click's command tree, the option table of docs/cli.md checked against it, and the shared forms at work
(renamed spellings, --topk, --json -, errors naming the option the user gave)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
import torch
from click.testing import CliRunner

from opkit.cli import cli, main
from opkit.cli import options as O

ROOT = Path(__file__).resolve().parents[1]


def _type_sig(t: click.ParamType) -> tuple:
    return (type(t).__name__, tuple(getattr(t, "choices", ()) or ()),
            *(getattr(t, a, None) for a in ("min", "max", "exists", "file_okay", "dir_okay", "allow_dash")))


def signature(p: click.Parameter) -> dict:
    """What makes an option's meaning, form and default (not `required`: a command may require it)."""
    sig = {"name": p.name, "opts": sorted(p.opts), "secondary": sorted(p.secondary_opts), "type": _type_sig(p.type),
           "multiple": p.multiple, "nargs": p.nargs, "default": repr(p.default), "metavar": p.metavar}
    if isinstance(p, click.Option):
        sig.update(is_flag=p.is_flag, flag_value=repr(p.flag_value) if p.is_flag else None, count=p.count,
                   help=p.help, show_default=p.show_default, hidden=p.hidden)
    return sig


def conflicts(group: click.Group) -> list[str]:
    """Every way the group's commands break 'one name, one meaning/form/default'."""
    found: list[str] = []
    by_name: dict[str, list[tuple[str, click.Parameter]]] = {}
    for cname, cmd in O.commands(group).items():
        hidden = {r.old: r for r in O.DEPRECATED if r.command == cname}
        visible = {o for p in cmd.params if isinstance(p, click.Option) and not p.hidden for o in p.opts}
        for p in cmd.params:
            if isinstance(p, click.Option) and p.hidden:
                r = next((hidden[o] for o in p.opts if o in hidden), None)
                if r is None:
                    found.append(f"{cname}: hidden option {'/'.join(p.opts)} is no renamed spelling (options.renamed)")
                elif r.new not in visible:
                    found.append(f"{cname}: {r.old} is renamed {r.new}, which the command does not have")
                continue
            keys = [f"argument {p.name}"] if isinstance(p, click.Argument) else p.opts + p.secondary_opts
            for k in keys:
                by_name.setdefault(k, []).append((cname, p))
    for name, uses in sorted(by_name.items()):
        if name in ("--help", "-h"):
            continue
        sigs = {json.dumps(signature(p), sort_keys=True, default=str) for _, p in uses}
        if len(sigs) > 1:
            found.append(f"{name} differs between {', '.join(c for c, _ in uses)}")
        if name in O.SHARED:
            want = signature(O.declared(name))
            for c, p in uses:
                if signature(p) != want:
                    found.append(f"{c}: {name} is not declared by options.{O.SHARED[name].__name__}")
        elif len(uses) > 1 and name.startswith("--"):     # a short flag: checked with its long name
            found.append(f"{name} is used by {', '.join(c for c, _ in uses)} but is not a shared option "
                         "(options.SHARED)")
    return found


def test_every_option_name_has_one_meaning_form_and_default():
    assert conflicts(cli) == []


def test_the_check_catches_two_meanings():
    """A group declaring --data twice (a labelled set; KEY=VALUE answers) and --json twice (a path, a flag)."""
    g = click.Group("g")

    @g.command()
    @O.data
    @O.json_out
    def a(data, json_out):
        pass

    @g.command()
    @click.option("--data", multiple=True, metavar="KEY=VALUE", help="a template answer")
    @click.option("--json", "json_out", is_flag=True)
    @click.option("--workers", type=int, default=4)
    @click.option("--hidden", hidden=True)
    def b(data, json_out, workers, hidden):
        pass

    @g.command()
    @click.option("--workers", type=int, default=2)
    def c(workers):
        pass
    got = "\n".join(conflicts(g))
    assert "--data differs between a, b" in got and "b: --data is not declared by options.data" in got
    assert "--json differs between a, b" in got
    assert "--workers differs between b, c" in got and "b: --workers is not declared by options.workers" in got
    assert "b: hidden option --hidden is no renamed spelling" in got


def test_the_defaults_agree_with_the_library():
    from opkit.evaluate.runner import DEFAULT_BATCH
    assert O.DEFAULT_BATCH == DEFAULT_BATCH
    from opkit.quant.prefix import DEFAULT_MB
    assert O.DEFAULT_PREFIX_MB == DEFAULT_MB


def test_docs_cli_md_holds_the_option_table():
    """docs/cli.md's table is exactly what the command tree declares: regenerate it with
    `python scripts/cli_options_table.py` after changing an option."""
    text = (ROOT / "docs" / "cli.md").read_text()
    m = re.search(r"<!-- options:begin -->\n(.*?)<!-- options:end -->", text, re.S)
    assert m, "docs/cli.md: the <!-- options:begin --> ... <!-- options:end --> block is missing"
    assert m.group(1) == O.options_markdown(cli), \
        "docs/cli.md's option table is out of date: run python scripts/cli_options_table.py"
    for cname, cmd in O.commands(cli).items():         # every visible option of every command has its row
        assert f"| `opkit {cname}` |" in m.group(1)
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden and "--help" not in p.opts:
                key = "/".join(sorted(p.opts, key=len, reverse=True))
                row = next(r for r in m.group(1).splitlines() if r.startswith(f"| `{key}` |"))
                assert cname in row.split(" | ")[3].split(", "), (cname, row)


# -- the shared forms at work ---------------------------------------------------------------------------------

def test_a_renamed_spelling_works_with_a_warning(tmp_path, monkeypatch):
    """`opkit new --data k=v` (now --set) scaffolds as `--set` does, saying which spelling replaces it."""
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["new", "MyRms", "--data", "norm=rms"])
    assert r.exit_code == 0, r.output
    assert "--data is deprecated and will be removed in opkit 0.2; use --set" in r.output
    assert "norm: rms" in (tmp_path / "ops" / "my_rms" / ".opkit-scaffold.yaml").read_text()
    r = CliRunner().invoke(cli, ["new", "MyRms2", "--set", "norm=nonsense"])
    assert r.exit_code != 0 and "deprecated" not in r.output


def test_given_twice_under_old_and_new_spelling_is_an_error():
    g = O.Group("g")

    @g.command()
    @click.option("--keep-going", is_flag=True)
    @click.option("--cast", default=None)
    @O.renamed("t", "--dtype", "--cast", "cast")
    def t(keep_going, cast):
        click.echo(f"cast={cast}")
    r = CliRunner().invoke(g, ["t", "--dtype", "float16"])
    assert r.exit_code == 0 and "cast=float16" in r.output and "use --cast" in r.output
    r = CliRunner().invoke(g, ["t", "--dtype", "float16", "--cast", "bfloat16"])
    assert r.exit_code == 2 and "give the option once: --cast" in r.output
    O.DEPRECATED.pop()          # the test's own entry


def test_topk_takes_a_list_without_click_internals():
    from opkit.cli.evaluate import IntList
    p = click.Option(["--topk"], type=IntList(), multiple=True)
    ctx = click.Context(click.Command("x"))
    assert p.type.convert("1,5", p, ctx) == (1, 5)
    with pytest.raises(click.BadParameter, match="positive integers, comma-separated"):
        p.type.convert("0", p, ctx)
    with pytest.raises(click.BadParameter, match="comma-separated"):
        p.type.convert("a", p, ctx)


def test_one_input_parser(tmp_path):
    a, b = O.example_inputs("2x3,4", seed=0)
    assert a.shape == (2, 3) and b.shape == (4,)
    assert torch.equal(O.example_inputs("2X3", seed=0)[0], a)           # one parser, any case of x
    torch.save(torch.ones(3), tmp_path / "t.pt")
    (t,) = O.example_inputs(str(tmp_path / "t.pt"))
    assert torch.equal(t, torch.ones(3))
    with pytest.raises(click.BadParameter, match="neither a shape") as e:
        O.example_inputs("2x3,nofile.npy")
    assert "Invalid value for '--input': '2x3,nofile.npy'" in e.value.format_message()
    with pytest.raises(click.BadParameter, match="an empty argument"):
        O.example_inputs("2x3,")


def test_compare_json_to_stdout(tmp_path, capsys):
    """--json - puts the JSON alone on stdout (the text report goes to stderr): one writer for every command."""
    from opkit.accuracy.dump import dump

    net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    dump(net, (torch.ones(2, 4),), tmp_path / "a")
    dump(net, (torch.ones(2, 4),), tmp_path / "b")
    with pytest.raises(SystemExit) as e:
        main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json", "-"])
    out = capsys.readouterr()
    assert e.value.code == 0
    assert json.loads(out.out)["first_divergence"] is None and "first divergence" in out.err.lower()


def test_errors_name_the_option_the_user_gave(tmp_path, capsys):
    """--calib and --data read the same formats; a bad --calib is an error about --calib."""
    x = torch.randn(8, 10)
    torch.save({"x": x, "y": torch.zeros(8, dtype=torch.long)}, tmp_path / "val.pt")
    with pytest.raises(SystemExit) as e:
        main(["quant", "evaldata.models:scaled", "--data", str(tmp_path / "val.pt"), "--calib",
              str(tmp_path / "nope.npz")])
    assert e.value.code == 1 and "--calib " in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["quant", "evaldata.models:scaled", "--data", str(tmp_path / "val.pt"), "--calib",
              str(tmp_path / "val.pt"), "--calib-transform", "evaldata.models:kill_once"])
    err = capsys.readouterr().err
    assert e.value.code == 1 and "--calib " in err and "--calib-transform applies to folders" in err


def test_an_input_the_model_does_not_take_is_an_error_naming_input(tmp_path, capsys):
    (tmp_path / "m.py").write_text("import torch\ndef net():\n    return torch.nn.Linear(8, 4)\n")
    for cmd in (["diagnose", f"{tmp_path / 'm.py'}:net", "--input", "2x7", "--no-rescue", "--no-patch"],
                ["dump", f"{tmp_path / 'm.py'}:net", "--input", "2x8,2x8", "--out", str(tmp_path / "d")]):
        with pytest.raises(SystemExit) as e:
            main(cmd)
        err = capsys.readouterr().err
        assert e.value.code == 1 and f"the model does not take --input {cmd[3]}" in err and "Traceback" not in err
    assert not (tmp_path / "d").exists()
