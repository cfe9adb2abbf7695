"""IFMR gives the same answer on every host: the same small IFMR cases run in subprocesses under each CPU
capability ATen can be forced down to (ATEN_CPU_CAPABILITY=default|avx2|avx512) and at 1 and 2 threads, and
their losses and results must agree to the bit with the default-capability, one-thread run.

Before opkit.quant.algorithms took the candidates' mean with opkit.numerics (float64, NumPy's fixed order), its
float32 torch.mean gave other bits under default / avx2 / avx512 and at 1 vs 2 threads, and this test failed
(the losses differed). A capability the host's CPU lacks cannot be forced: that case is skipped and says so --
it is not a pass; on an AVX-512 host all six run. See docs/testing.md."""
import functools
import json
import os
import subprocess
import sys

import pytest
import torch

CAPS = ["default", "avx2", "avx512"]
CASE = r"""
import json, sys
import numpy as np, torch
from opkit.quant import algorithms as A
rng = np.random.default_rng(7)              # NumPy's generator: the same data on every CPU (torch.randn is not)
out = {"capability": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads(), "cases": []}
for n in (3000, 40000):                     # 3000: candidates side by side; 40000: one at a time
    x = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
    for offset, data in ((True, x.relu() * 2), (False, x)):
        r = A.ifmr(data, 8, offset)
        cands = torch.arange(0.7, 1.3, 0.01, dtype=torch.float32) * float(data.abs().max())
        lows = [-4.0] * len(cands)
        losses = A._mse_losses(data, lows, cands, (cands + 4) / 255)
        out["cases"].append({"n": n, "offset": offset, "scale": r.scale.hex(), "offset_d": r.offset,
                             "losses": [v.hex() for v in losses]})
json.dump(out, sys.stdout)
"""


@functools.cache
def _host_capability() -> str:
    """The CPU's own capability: asked of a fresh process without ATEN_CPU_CAPABILITY (this process may run
    forced down, and then reports the forced one)."""
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    p = subprocess.run([sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout.strip().lower()


def _host_has(cap: str) -> bool:
    host = _host_capability()                 # "avx512", "avx2", "default", or a non-x86 name
    order = {"default": 0, "avx2": 1, "avx512": 2}
    return cap == "default" or (host in order and order[host] >= order[cap])


def _run(cap: str, threads: int) -> dict:
    env = {**os.environ, "ATEN_CPU_CAPABILITY": cap, "OMP_NUM_THREADS": str(threads)}
    p = subprocess.run([sys.executable, "-c", CASE], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def reference():
    return _run("default", 1)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("cap", CAPS)
def test_ifmr_same_answer_under_every_capability_and_thread_count(reference, cap, threads):
    if not _host_has(cap):
        pytest.skip(f"this CPU has no {cap} (its torch capability: {_host_capability()}): "
                    f"not checked here")
    got = _run(cap, threads)
    assert got["capability"].lower() == cap and got["threads"] == threads, got["capability"]
    assert reference["capability"].lower() == "default"
    for ref, case in zip(reference["cases"], got["cases"], strict=True):
        where = f"n={case['n']} offset={case['offset']} under {cap}, {threads} thread(s)"
        assert case["losses"] == ref["losses"], f"{where}: the losses differ from default, 1 thread"
        assert (case["scale"], case["offset_d"]) == (ref["scale"], ref["offset_d"]), where


def test_this_host_runs_at_least_default_and_avx2():
    """The check above means something only where it crosses capabilities: CI's x86 hosts all have AVX2."""
    import platform
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("not x86-64: ATen has no avx2/avx512 kernels to force here")
    assert _host_has("avx2"), f"x86-64 host without AVX2 (its torch capability: {_host_capability()})"
