"""The CPU-debug corpus (tests/emulator/corpus, see its README.md): every program builds unchanged with
$(opkit cflags), runs, and matches the golden data of its generator, via scripts/check_corpus.sh."""
from __future__ import annotations

import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def test_corpus_builds_unchanged_and_computes_right():
    programs = sorted(p.name for p in (HERE / "corpus").iterdir() if p.is_dir())
    r = subprocess.run(["bash", str(ROOT / "scripts" / "check_corpus.sh"), str(HERE / "corpus")],
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout + r.stderr
    n = len(programs)
    assert f"tried {n}, built unchanged {n}, ran {n}, computed right {n}" in r.stdout, r.stdout
    for p in programs:
        assert f"{p}: built, ran, RIGHT" in r.stdout, r.stdout
