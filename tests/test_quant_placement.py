"""Where `opkit quant`'s labelled evaluations run when --workers is not given (q13, issue 37): in this process
when a search runs -- so prefix reuse serves the search -- else one worker process per core, as before."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

from opkit.quant.scoring import placed_workers

FACTORY = """import sys
sys.path.insert(0, {tests!r})
from quantdata import encoder as E

def model():
    return E.encoder().float().eval()
"""


def test_the_rule():
    assert placed_workers(None, None, True) == 1             # the default with a search: this process
    assert placed_workers(None, None, False) is None         # without: evaluate's default (one per core)
    assert placed_workers(2, None, True) == 2                # given: as given
    assert placed_workers(1, None, False) == 1
    assert placed_workers(None, "auto", True) is None        # Ray: as given


def test_the_command_without_workers_serves_the_search(tmp_path, monkeypatch):
    """The real command, no --workers, on a 4-core machine as evaluate sees it: the search's evaluations run in
    this process and start from the base variant's kept outputs (before q13: a pool of 4, reuse off)."""
    from click.testing import CliRunner
    from opkit.cli import cli
    from opkit.evaluate import runner
    tests = Path(__file__).parent
    sys.path.insert(0, str(tests))
    from quantdata import encoder as E
    monkeypatch.setattr(runner.os, "cpu_count", lambda: 4)   # not this host's cores: the same on every CI host
    (tmp_path / "enc.py").write_text(FACTORY.format(tests=str(tests)))
    m = E.encoder().float().eval()
    x = E.patches(96, 1).float()
    with torch.no_grad():
        y = m(x).argmax(-1)
    torch.save({"x": E.patches(16, 2).float()}, tmp_path / "calib.pt")
    torch.save({"x": x, "y": y}, tmp_path / "val.pt")
    out = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["quant", f"{tmp_path / 'enc.py'}:model", "--calib", str(tmp_path / "calib.pt"),
                                   "--data", str(tmp_path / "val.pt"), "--policy", "amct-fake-quant",
                                   "--target-drop", "3", "--batch-size", "32", "--json", str(out)])
    assert res.exit_code == 0, res.output
    rep = json.loads(out.read_text())
    backends = rep["eval_backends"]
    assert backends[0] == "in-process", backends
    assert backends[-1].startswith("prefix reuse: served "), backends
    assert rep["searches"] and rep["searches"][0]["steps"], "the search ran (the case this default is for)"
