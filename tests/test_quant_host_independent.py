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


# DMQ's balance factors and SmoothQuant's smoothing scales are powers (amax|x|^a / amax|W|^(1-a)). A float32 `**`
# comes from MKL's vector math (a = 0.5: sqrt), whose code MKL picks by the CPU's vendor -- MKL_CBWR forces its
# other code paths here, as an AMD host picks them -- or from SLEEF per ATen capability (other exponents).
# Measured on an Intel Sapphire Rapids before opkit.numerics.power: MKL_CBWR=COMPATIBLE and =AVX2 each gave other
# factors than the default run (and ResNet-18's int8-dmq row moved by 5 of 300 samples: docs/quant.md).
POWERS = r"""
import json, sys
import numpy as np, torch
from opkit.quant.dmq import balance_factor
from opkit.quant.linear_algos import SmoothQuant
from opkit.quant.linear_ptq import LinearPTQConfig
rng = np.random.default_rng(3)
x = torch.from_numpy((rng.standard_normal((64, 500)) * rng.uniform(0.01, 50, (64, 1))).astype(np.float32))
w = torch.from_numpy((rng.standard_normal((64, 40)) * rng.uniform(0.01, 2, (64, 1))).astype(np.float32))
out = {f"dmq {a}": [float(v).hex() for v in balance_factor(x, w, a)] for a in (0.5, 0.3, 0.8)}
cfg = LinearPTQConfig("smoothquant", 8, act_bits=8, smooth_strength=0.5)
for dtype in (torch.float32, torch.float16):             # a [40 out, 64 in] Linear on [500, 64] activations
    lin = torch.nn.Linear(64, 40, bias=False)
    with torch.no_grad():
        lin.weight.copy_(w.t())
    sq = SmoothQuant("fc", lin.to(dtype), cfg)
    sq.observe(x.t().to(dtype))
    out[f"smoothquant {dtype}"] = [float(v).hex() for v in sq.params.act_divisor.reshape(-1)]
json.dump(out, sys.stdout)
"""
OTHER_HOSTS = {"MKL_CBWR=COMPATIBLE": {"MKL_CBWR": "COMPATIBLE"}, "MKL_CBWR=AVX2": {"MKL_CBWR": "AVX2"},
               "ATEN avx2": {"ATEN_CPU_CAPABILITY": "avx2"}, "ATEN default": {"ATEN_CPU_CAPABILITY": "default"}}


def _powers(env: dict) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in ("MKL_CBWR", "ATEN_CPU_CAPABILITY")}
    p = subprocess.run([sys.executable, "-c", POWERS], env={**clean, **env}, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


@pytest.mark.parametrize("setting", list(OTHER_HOSTS))
def test_dmq_and_smoothquant_powers_same_under_other_vector_math(setting):
    if "avx2" in setting and not _host_has("avx2"):
        pytest.skip(f"this CPU has no avx2 (its torch capability: {_host_capability()}): not checked here")
    ref, got = _powers({}), _powers(OTHER_HOSTS[setting])
    assert got.keys() == ref.keys()
    for key in ref:
        assert got[key] == ref[key], f"{key} under {setting} differs from the default run"
