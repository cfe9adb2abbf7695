"""One model loader for every command that takes MODEL (opkit/toolchain/user_code.py load_model): each
command runs on each spelling (`pkg.mod:factory`, `mod:factory`, `file.py:factory`, `./file.py:factory`,
`path/to/file.py:factory`, an absolute path), and a wrong spelling gets the same message from each."""
from __future__ import annotations

import sys

import pytest

from opkit.cli import main

MODEL_PY = '''
import torch.nn as nn

def build():
    return nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4)).eval()

def with_inputs():
    import torch
    return build(), [torch.randn(2, 8)]

def broken():
    raise ValueError("no weights here")
'''

# Every command that takes MODEL, with arguments that need no opkit kernel and no network. (`opkit experiment`
# loads MODEL through the same ModelRef as eval.)
COMMANDS = {
    "scan": lambda m, tmp: ["scan", m, "--input", "2x8", "--op-list", str(tmp / "ops.txt")],
    "diagnose": lambda m, tmp: ["diagnose", m, "--input", "2x8", "--policy", "cann-allow-fp32-to-fp16",
                                "--no-patch", "--no-rescue"],
    "dump": lambda m, tmp: ["dump", m, "--input", "2x8", "--out", str(tmp / "dump")],
    "eval": lambda m, tmp: ["eval", m, "--data", str(tmp / "set.npz"), "--workers", "1", "--policy",
                            "cann-allow-fp32-to-fp16"],
    "quant": lambda m, tmp: ["quant", m, "--calib", str(tmp / "set.npz"), "--data", str(tmp / "set.npz"),
                             "--no-search"],
}
SPELLINGS = ["mymodels.vitm:build", "vitm:build", "vitm.py:build", "./vitm.py:build", "mymodels/vitm.py:build",
             "{abs}:build"]


@pytest.fixture()
def here(tmp_path, monkeypatch):
    (tmp_path / "mymodels").mkdir()
    (tmp_path / "mymodels" / "__init__.py").write_text("")
    (tmp_path / "mymodels" / "vitm.py").write_text(MODEL_PY)
    (tmp_path / "vitm.py").write_text(MODEL_PY)
    (tmp_path / "ops.txt").write_text("aten::addmm\naten::relu\naten::t\naten::view\naten::mm\n")
    import numpy as np
    np.savez(tmp_path / "set.npz", x=np.random.default_rng(0).standard_normal((6, 8)).astype("float32"),
             y=np.array([0, 1, 2, 3, 0, 1]))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("vitm", "mymodels", "mymodels.vitm"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return tmp_path


def _run(args, capsys) -> tuple[int, str, str]:
    try:
        main(args)
        code = 0                # a command that does not sys.exit() succeeded
    except SystemExit as e:
        code = e.code
    got = capsys.readouterr()
    return code, got.out, got.err


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_model_command_takes_every_spelling(here, capsys, command, spelling):
    model = spelling.format(abs=here / "vitm.py")
    code, out, err = _run(COMMANDS[command](model, here), capsys)
    assert code == 0, out + err
    assert "Traceback" not in err


@pytest.mark.parametrize("spelling, message", [
    ("vitm.py", "model 'vitm.py': expected pkg.module:factory, path/to/file.py:factory or ./file.py:factory"),
    ("./missing.py:build", "model './missing.py:build': no file "),
    ("vitm:nothing", "model 'vitm:nothing': vitm has no attribute nothing"),
    ("nosuchmodule:build", "model 'nosuchmodule:build': cannot import nosuchmodule: No module named 'nosuchmodule'"),
    ("./vitm.py:broken", "model './vitm.py:broken': broken() raised ValueError: no weights here (at "),
])
def test_a_wrong_model_gets_one_message_from_every_command(here, capsys, spelling, message):
    said = {}
    for command, args in COMMANDS.items():
        code, out, err = _run(args(spelling, here), capsys)
        assert code == 1 and "Traceback" not in err, err
        said[command] = next(line for line in err.splitlines() if line.startswith("opkit: error:"))
        assert said[command].startswith(f"opkit: error: {message}"), said[command]
    assert len(set(said.values())) == 1, said


def test_factory_inputs_stand_in_for_input(here, capsys):
    """A factory returning (model, inputs) needs no --input, for scan and diagnose alike."""
    code, out, err = _run(["scan", "vitm.py:with_inputs", "--op-list", str(here / "ops.txt")], capsys)
    assert code == 0 and "0 op(s) fall back" in out, out + err
    code, out, err = _run(["diagnose", "vitm.py:with_inputs", "--policy", "cann-allow-fp32-to-fp16", "--no-patch",
                           "--no-rescue"], capsys)
    assert code == 0 and "(input [[2, 8]]," in out, out + err
