"""CANN's own `.asc` examples through scripts/asc_examples.py (docs/emulator.md, "CANN `.asc` programs"). Needs the
public asc-devkit sources: OPKIT_ASC_DEVKIT=<checkout> (CI cannot fetch them; tests/emulator/test_asc_program.py
carries the checks that need nothing external). A few examples whose path to "right" crosses each part of the
runtime: a plain add over several blocks with a verify script, host tiling with SoftMax-style shape queries
(Sigmoid), a scenario chosen by a compile definition (compare, SCENARIO_NUM), program arguments from the README
(broadcast, `./demo $TESTCASE`), blocks that wait on each other's GM flags (gm_by_dcache)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEVKIT = os.environ.get("OPKIT_ASC_DEVKIT")
pytestmark = pytest.mark.skipif(not DEVKIT, reason="OPKIT_ASC_DEVKIT is not set (no asc-devkit checkout)")

RIGHT = ["00_introduction/01_add/add_tpipe_tque", "04_advanced_api/01_activation/sigmoid",
         "03_basic_api/01_memory_vector_compute/compare", "04_advanced_api/08_transpose/broadcast",
         "03_basic_api/09_utils/gm_by_dcache", "04_advanced_api/01_activation/gelu",
         "04_advanced_api/01_activation/geglu", "04_advanced_api/01_activation/swiglu",
         "04_advanced_api/01_activation/swish",  # an option the README leaves OFF adds no definition
         "04_advanced_api/10_math/clampmin", "04_advanced_api/10_math/fmod", "04_advanced_api/10_math/xor",
         "03_basic_api/01_memory_vector_compute/reduce_repeat", "04_advanced_api/02_normalization/rmsnorm",
         # 05_sort/sort runs right too, but its host code reads minTmpSize after GetSortMaxMinTmpSize, which
         # CANN's A2 code leaves unwritten (docs/emulator.md, Sort row): an uninitialised value, so not pinned here
         "04_advanced_api/07_filter/dropout", "04_advanced_api/05_sort/topk",
         "04_advanced_api/08_transpose/pad", "04_advanced_api/08_transpose/unpad",
         "04_advanced_api/08_transpose/transpose", "04_advanced_api/08_transpose/transdata",
         "04_advanced_api/03_quantization/antiquant", "04_advanced_api/02_normalization/layernorm_v2",
         "03_basic_api/01_memory_vector_compute/cast"]


def test_asc_examples_run_right(tmp_path):
    only = "|".join(f"^{p}$" for p in RIGHT)
    out = tmp_path / "r.json"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "asc_examples.py"), DEVKIT, "--only", only,
                        "--json", str(out)], capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout + r.stderr
    recs = {x["example"]: x for x in json.loads(out.read_text())}
    assert sorted(recs) == sorted(RIGHT)
    for p in RIGHT:
        assert recs[p]["right"] is True, (p, recs[p])
    assert f"of {len(RIGHT)}: compiled {len(RIGHT)}, ran {len(RIGHT)}, right {len(RIGHT)}" in r.stdout, r.stdout


def test_asc_examples_count_the_cube_apart(tmp_path):
    out = tmp_path / "r.json"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "asc_examples.py"), DEVKIT, "--only",
                        "^00_introduction/02_matrix/", "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    recs = json.loads(out.read_text())
    assert recs and all(x.get("skipped", "").startswith("cube") for x in recs), recs
