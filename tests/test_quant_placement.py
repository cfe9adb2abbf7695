"""Where `opkit quant`'s labelled evaluations run when --workers is not given (q13, issue 37): in this process
when a search runs and prefix reuse can serve it (a budget, a base that can be recorded) -- else one worker
process per core, as before."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from opkit.quant.scoring import placed_workers, servable

FACTORY = """import sys
sys.path.insert(0, {tests!r})
from quantdata import encoder as E

def model():
    return E.encoder().float().eval()
"""


def test_placed_workers_default_by_search_and_servable():
    assert placed_workers(None, None, True, True) == 1             # the default, a search reuse serves: in process
    assert placed_workers(None, None, True, False) is None         # nothing to serve: evaluate's default
    assert placed_workers(None, None, False, True) is None         # --no-search: evaluate's default (per core)
    assert placed_workers(2, None, True, True) == 2                # given: as given
    assert placed_workers(1, None, False, False) == 1
    assert placed_workers(None, "auto", True, True) is None        # Ray: as given


def test_servable_needs_a_budget_and_a_recordable_base():
    from opkit.evaluate import SimVariant
    from quantdata.models import mixed_scale
    m, v = mixed_scale(), SimVariant("fp16", policy="cann-force-fp16")
    assert servable(m, v, 256)
    assert not servable(m, v, 0)                                      # --prefix-mb 0
    h = m.register_forward_hook(lambda *a: None)                      # a hook could change a kept output
    assert not servable(m, v, 256)
    h.remove()


def test_quantize_places_by_servable(monkeypatch):
    """quantize(workers=None) hands the Scorer 1 (this process) when the base can be served, None when
    --prefix-mb 0 leaves nothing to serve."""
    from opkit.quant import run
    from quantdata.models import inputs, labelled, mixed_scale
    seen = []

    class Stop(Exception):
        pass

    def scorer(model, data, table_x, r, log):
        seen.append(r.workers)
        raise Stop

    monkeypatch.setattr(run, "Scorer", scorer)
    m = mixed_scale()
    for mb in (256, 0):
        with pytest.raises(Stop):
            run.quantize(m, inputs(16, seed=2), labelled(m, 32, seed=1), workers=None, prefix_mb=mb)
    assert seen == [1, None]


def test_the_command_without_workers_serves_the_search(tmp_path, monkeypatch):
    """The real command, no --workers, on a 4-core machine as evaluate sees it: the search's evaluations run in
    this process and start from the base variant's kept outputs (before q13: a pool of 4, reuse off)."""
    from click.testing import CliRunner
    from opkit.cli import cli
    from opkit.evaluate import runner
    tests = Path(__file__).parent
    monkeypatch.syspath_prepend(str(tests))
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
    assert backends[:-1] == ["in-process"], backends
    assert backends[-1].startswith("prefix reuse: served "), backends
    assert rep["searches"] and rep["searches"][0]["steps"], "the search ran (the case this default is for)"
