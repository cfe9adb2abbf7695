"""The CI accuracy gate (pytest plugin `opkit_accuracy`): a 1-point drop against the stored best fails, a
0.2-point drop passes; the best rises only with --opkit-update-baseline and is never lowered; another data
hash is an error naming the cause; the report holds every entry's history; the fixture's evaluate()."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from evaldata.models import known_set
from opkit.errors import OpkitError
from opkit.gate import baseline as B

HERE = Path(__file__).resolve().parent


def _baseline(path: Path, best: float, data_hash: str = "d1", key: str = "net/fp16") -> None:
    path.write_text(json.dumps({"opkit_accuracy_baseline": 1, "entries": {
        f"{key}@{data_hash}": {"key": key, "data_hash": data_hash, "best": best,
                               "history": [{"top1": best, "time": "2026-12-01T00:00:00Z", "commit": "abc"}]}}}))


def _pytest(folder: Path, body: str, *args: str) -> subprocess.CompletedProcess:
    (folder / "test_accuracy.py").write_text(body)
    (folder / "pytest.ini").write_text("[pytest]\n")          # rootdir = folder
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_accuracy.py", *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)


RECORD = """
def test_net(opkit_accuracy):
    opkit_accuracy.record("net/fp16", {top1}, data_hash="d1")
"""


def test_gate_fails_on_one_point_and_passes_on_a_fifth(tmp_path):
    _baseline(tmp_path / ".npu-accuracy-baseline", 78.0)
    r = _pytest(tmp_path, RECORD.format(top1=77.0), "--opkit-threshold", "0.5%")
    assert r.returncode == 1, r.stdout
    assert "net/fp16: top-1 77.00% is 1.00 points below the best 78.00% recorded in" in r.stdout
    r = _pytest(tmp_path, RECORD.format(top1=77.8), "--opkit-threshold", "0.5")
    assert r.returncode == 0, r.stdout
    assert "PASS net/fp16: top-1 77.80% within 0.5 points of the best 78.00%" in r.stdout
    report = (tmp_path / "accuracy_report.html").read_text()
    assert "net/fp16" in report and "77.80%" in report and "2026-12-01T00:00:00Z" in report   # history kept
    # neither run asked to update: the baseline is untouched
    assert json.loads((tmp_path / ".npu-accuracy-baseline").read_text())["entries"]["net/fp16@d1"]["best"] == 78.0


def test_best_rises_only_on_request_and_is_never_lowered(tmp_path):
    base = tmp_path / ".npu-accuracy-baseline"
    _baseline(base, 78.0)
    r = _pytest(tmp_path, RECORD.format(top1=79.0))
    assert r.returncode == 0 and "above the best 78.00% (--opkit-update-baseline stores it)" in r.stdout
    assert json.loads(base.read_text())["entries"]["net/fp16@d1"]["best"] == 78.0
    r = _pytest(tmp_path, RECORD.format(top1=79.0), "--opkit-update-baseline")
    assert r.returncode == 0 and "best raised 78.00% -> 79.00%" in r.stdout
    r = _pytest(tmp_path, RECORD.format(top1=78.7), "--opkit-update-baseline")
    assert r.returncode == 0 and "best kept at 79.00%" in r.stdout
    e = json.loads(base.read_text())["entries"]["net/fp16@d1"]
    assert e["best"] == 79.0 and [h["top1"] for h in e["history"]] == [78.0, 79.0, 78.7]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".npu-accuracy-baseline.")]   # no temp file left


def test_another_data_hash_is_an_error_naming_the_cause(tmp_path):
    _baseline(tmp_path / ".npu-accuracy-baseline", 78.0, data_hash="d0")
    r = _pytest(tmp_path, RECORD.format(top1=78.0), "--opkit-baseline", ".npu-accuracy-baseline")
    assert r.returncode == 1
    assert "net/fp16 is recorded for data hash d0, but this run used data hash d1: the data changed" in r.stdout


def test_fixture_evaluates_in_one_line(tmp_path):
    x, y = known_set(n=40, right=28, top5_extra=4, overflow=2)
    torch.save({"x": x, "y": y}, tmp_path / "val.pt")
    policy = HERE / "evaldata" / "fp16-io.yaml"
    body = (f"def test_scaled(opkit_accuracy):\n"
            f"    res = opkit_accuracy.evaluate('evaldata.models:scaled', 'val.pt', policy={str(policy)!r}, workers=1)\n"
            f"    assert res.topk('fp16-io') == 65.0\n")
    r = _pytest(tmp_path, body, "--opkit-update-baseline", "--opkit-report", "out/report.html")
    assert r.returncode == 0, r.stdout + r.stderr
    (entry,) = json.loads((tmp_path / ".npu-accuracy-baseline").read_text())["entries"].values()
    assert entry["key"] == "evaldata.models:scaled/fp16-io" and entry["best"] == 65.0 and len(entry["data_hash"]) == 16
    assert (tmp_path / "out" / "report.html").is_file()


@pytest.mark.parametrize("text, value", [("0.5%", 0.5), ("0.5", 0.5), (" 1 ", 1.0), ("0%", 0.0)])
def test_threshold_spellings(text, value):
    assert B.parse_threshold(text) == value


def test_bad_threshold_and_baseline(tmp_path):
    with pytest.raises(OpkitError, match="expected points of top-1"):
        B.parse_threshold("half")
    bad = tmp_path / "b"
    bad.write_text('{"entries": {}}')
    with pytest.raises(OpkitError, match="not an opkit accuracy baseline"):
        B.read(bad)
    with pytest.raises(OpkitError, match="top-1 is in percent"):
        B.judge(B.read(tmp_path / "none"), tmp_path / "none", "k", 178.0, "", 0.5)


def test_xdist_workers_judge_and_the_controller_writes(tmp_path):
    body = ("def test_a(opkit_accuracy):\n    opkit_accuracy.record('net/a', 70.0, data_hash='d1')\n"
            "def test_b(opkit_accuracy):\n    opkit_accuracy.record('net/b', 71.0, data_hash='d1')\n")
    r = _pytest(tmp_path, body, "-n", "2", "--opkit-update-baseline")
    assert r.returncode == 0, r.stdout
    entries = json.loads((tmp_path / ".npu-accuracy-baseline").read_text())["entries"]
    assert {k: e["best"] for k, e in entries.items()} == {"net/a@d1": 70.0, "net/b@d1": 71.0}
    assert "net/a" in (tmp_path / "accuracy_report.html").read_text()
