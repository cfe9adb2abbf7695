"""The in-house corpus (tests/corpus, see its README.md): CPU-debug programs written here in the styles public
AscendC kernels use; every one builds unchanged with $(opkit cflags), runs, and matches its generator's golden
data, via scripts/check_corpus.sh."""
from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


def test_corpus_builds_unchanged_and_computes_right():
    programs = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
    assert len(programs) >= 6
    r = subprocess.run(["bash", str(ROOT / "scripts" / "check_corpus.sh"), str(CORPUS)],
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr
    n = len(programs)
    assert f"tried {n}, built unchanged {n}, ran {n}, computed right {n}" in r.stdout, r.stdout
    for p in programs:
        assert f"{p}: built, ran, RIGHT" in r.stdout, r.stdout
