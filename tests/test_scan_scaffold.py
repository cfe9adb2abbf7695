"""opkit scan --scaffold / opkit new --from-aten (the aten family) and opkit.load(override_aten=True).

One module-scoped workspace holds the three ops scaffolded from the fallback model's scan; they are built
once (that build is itself a check: a scaffold must build before anyone edits it)."""
from __future__ import annotations

import contextlib
import importlib.util
import subprocess
import sys
import textwrap

import pytest
import torch
import yaml
from torch._C import DispatchKey

from opkit.errors import OpkitError
from opkit import aten_override as override
from opkit.scanner import oplist, scan
from opkit.scanner.scaffold_aten import answers, new_from_aten, scaffold_report
from opkit.opspec import load_spec

from test_scan import FallbackModel

INPUTS = [torch.randn(1, 3, 8, 8), torch.randn(2, 3, 6, 10)]


@pytest.fixture(scope="module")
def npu_ops():
    return oplist.for_version("2.13.0")


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory, npu_ops):
    ws = tmp_path_factory.mktemp("scan-ws")
    report = scan(FallbackModel(), INPUTS, torch_npu=npu_ops)
    made = scaffold_report(report, cwd=ws)
    return ws, report, {s.op_dir.name: s for s in made}


def _reference(op_dir):
    spec = importlib.util.spec_from_file_location(f"ref_{op_dir.name}", op_dir / "reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.reference


def test_scaffold_mirrors_the_aten_schemas_and_traced_shapes(scaffolded):
    ws, _, made = scaffolded
    assert set(made) == {"lgamma_fp32", "logcumsumexp_fp32", "hypot_fp32"}
    hy = load_spec(ws / "ops" / "hypot_fp32")
    assert [i.name for i in hy.inputs] == ["x", "other"] and [o.name for o in hy.outputs] == ["y"]
    assert hy.tests.shapes == ((1, 8, 8, 8), (2, 6, 10, 8))
    lc = load_spec(ws / "ops" / "logcumsumexp_fp32")
    assert [(a.name, a.type, a.default, a.role) for a in lc.attrs] == [("dim", "int", -1, "dim")]
    assert lc.lead.shape == ("...", "C") and lc.tests.dims["C"] == (1, 8)
    rec = yaml.safe_load((ws / "ops" / "lgamma_fp32" / ".opkit-scaffold.yaml").read_text())
    assert rec["family"] == "aten" and rec["data"]["aten"] == "aten::lgamma"
    kernel = (ws / "ops" / "lgamma_fp32" / "kernel.cpp").read_text()
    assert "SKELETON" in kernel and "TODO(aten::lgamma)" in kernel


@pytest.mark.parametrize("op,fn,args", [
    ("lgamma_fp32", torch.lgamma, ()),
    ("hypot_fp32", torch.hypot, ("other",)),
    ("logcumsumexp_fp32", lambda x, dim: torch.logcumsumexp(x, dim), ()),
])
def test_reference_is_the_aten_op(scaffolded, op, fn, args):
    ws, _, _ = scaffolded
    ref = _reference(ws / "ops" / op)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 7, generator=g, dtype=torch.float64) * 3
    if op == "hypot_fp32":
        o = torch.randn(4, 7, generator=g, dtype=torch.float64)
        assert torch.equal(ref(x, o), torch.hypot(x, o))
    elif op == "logcumsumexp_fp32":
        assert torch.equal(ref(x, dim=-1), torch.logcumsumexp(x, -1))
        assert torch.equal(ref(x, dim=0), torch.logcumsumexp(x, 0))
    else:
        assert torch.equal(ref(x), torch.lgamma(x)) and ref(x).dtype == torch.float64


def test_from_aten_refuses_what_op_yaml_cannot_express(tmp_path):
    with pytest.raises(OpkitError, match="writes into its arguments"):
        answers("aten::add_.Tensor")
    with pytest.raises(OpkitError, match="has no aten op"):
        answers("aten::no_such_op")
    with pytest.raises(OpkitError, match="no overload 'bogus'"):
        answers("aten::add.bogus")
    with pytest.raises(OpkitError, match="dim of type"):
        answers("aten::sum.dim_IntList", [{"self": {"shape": [4, 8]}, "dim": [1], "keepdim": False}])
    name, data = answers("aten::add.Tensor")              # a Scalar argument becomes a float attr
    assert name == "AddFP32" and [a["name"] for a in data["attrs"]] == ["alpha"]
    s = new_from_aten("aten::add.Tensor", cwd=tmp_path)
    assert load_spec(s.op_dir).attrs[0].default == 1.0
    with pytest.raises(OpkitError, match="already exists"):
        new_from_aten("aten::add.Tensor", cwd=tmp_path)


def _opkit(*args, cwd):
    return subprocess.run([sys.executable, "-m", "opkit", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=3600)


@pytest.fixture(scope="module")
def built(scaffolded):
    """The three scaffolds, built (slow: ~20 kernel compiles)."""
    ws = scaffolded[0]
    r = _opkit("build", cwd=ws)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "built" in r.stdout and all(n in r.stdout for n in ("lgamma_fp32", "logcumsumexp_fp32", "hypot_fp32"))
    return ws


@pytest.mark.slow
def test_scaffolds_build_and_their_harness_runs(built):
    r = _opkit("test", "hypot_fp32", "--quick", cwd=built)
    # the skeleton copies x: the harness runs every case and fails them on numbers, not on a crash or rule
    assert r.returncode != 0 and "hypot_fp32" in r.stdout, r.stdout + r.stderr
    assert "MERE" in r.stdout and "opkit emulator:" not in r.stdout + r.stderr


@pytest.mark.slow
def test_override_aten_registers_the_opkit_kernel_for_private_use1(built, npu_ops):
    import opkit

    override.clear()
    try:
        opkit.load(built, ops=["hypot_fp32"], bundled=False, override_aten=True)
        assert override.active() == {"aten::hypot": "hypot_fp32"}
        a, b = torch.randn(3, 40), torch.randn(3, 40)
        got = torch.ops.aten.hypot.default._op_dk(DispatchKey.PrivateUse1, a, b)
        assert torch.equal(got, torch.ops.opkit.hypot_fp32(a, b))     # the emulator kernel ran
        assert torch.equal(got, a)                                       # (the skeleton copies x)
        report = scan(FallbackModel(), INPUTS, torch_npu=npu_ops)
        assert {r.entry for r in report.fallbacks} == {"aten::lgamma", "aten::logcumsumexp"}
        hy = next(r for r in report.records if r.entry == "aten::hypot" or r.op == "aten::hypot")
        assert hy.status == "supported" and "override_aten" in hy.reason
    finally:
        override.clear()
    assert torch.ops.aten.hypot.default(a, b).equal(torch.hypot(a, b))  # CPU untouched


@pytest.mark.slow
def test_override_replaces_an_earlier_private_use1_kernel_and_clear_restores_it(built):
    """torch_npu registers at import, opkit later: the later registration wins; dropping it restores."""
    import warnings

    import opkit

    npu_like = torch.library.Library("aten", "IMPL")        # stands in for torch_npu's kernel
    npu_like.impl("hypot", lambda a, b: torch.full_like(a, 7.0), "PrivateUse1")
    a, b = torch.randn(2, 64), torch.randn(2, 64)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")                   # "Overriding a previously registered kernel"
            opkit.load(built, ops=["hypot_fp32"], bundled=False, override_aten=True)
        assert torch.equal(torch.ops.aten.hypot.default._op_dk(DispatchKey.PrivateUse1, a, b), a)
        override.clear()
        assert torch.equal(torch.ops.aten.hypot.default._op_dk(DispatchKey.PrivateUse1, a, b),
                           torch.full_like(a, 7.0))
    finally:
        override.clear()
        npu_like._destroy()


def test_cli_exit_codes_json_and_scaffold(tmp_path):
    (tmp_path / "mymodels.py").write_text(textwrap.dedent("""
        import torch
        def fallback():
            return lambda x: torch.lgamma(x) + 1
        def clean():
            return (torch.nn.Linear(4, 4), [torch.randn(2, 4)])
        def broken():
            return torch.nn.Linear(4, 4)
    """))
    r = _opkit("scan", "mymodels:fallback", "--input", "2x8", "--input", "3x5", "--json", "s.json", cwd=tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "aten::lgamma.out" in r.stdout and "1 op(s) fall back" in r.stdout
    d = yaml.safe_load((tmp_path / "s.json").read_text())
    assert d["inputs"] == ["2x8", "3x5"] and d["ops"][0]["shapes"] == {"2x8": [[[2, 8]]], "3x5": [[[3, 5]]]}
    r = _opkit("scan", "mymodels:clean", "--amp", "npu-o1", "--html", "s.html", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 op(s) fall back" in r.stdout and (tmp_path / "s.html").is_file()
    r = _opkit("scan", "mymodels:fallback", "--input", "2x8", "--scaffold", cwd=tmp_path)
    assert r.returncode == 3 and (tmp_path / "ops" / "lgamma_fp32" / "op.yaml").is_file(), r.stdout + r.stderr
    r = _opkit("new", "MyHypot", "--from-aten", "aten::hypot", cwd=tmp_path)
    assert r.returncode == 0 and load_spec(tmp_path / "ops" / "my_hypot").name == "MyHypot", r.stderr
    r = _opkit("scan", "mymodels:broken", "--input", "2x5", cwd=tmp_path)
    assert r.returncode == 1 and "failed while being traced" in r.stderr and "2x4" not in r.stdout, r.stderr
    r = _opkit("scan", "mymodels:nothing", "--input", "2", cwd=tmp_path)
    assert r.returncode == 1 and "has no attribute nothing" in r.stderr


@pytest.mark.slow
def test_example_kernel_makes_the_model_stop_falling_back(built, npu_ops):
    """examples/scan_fallback: the written hypot kernel passes the harness and, as aten::hypot's PrivateUse1
    kernel, matches torch.hypot; the scan then lists only lgamma and logcumsumexp. (Runs last: it replaces
    the skeleton the tests above rely on.)"""
    import shutil
    from pathlib import Path

    import opkit

    example = Path(__file__).resolve().parents[1] / "examples" / "scan_fallback" / "hypot_fp32.kernel.cpp"
    shutil.copy(example, built / "ops" / "hypot_fp32" / "kernel.cpp")
    r = _opkit("build", "hypot_fp32", cwd=built)
    assert r.returncode == 0, r.stdout + r.stderr
    r = _opkit("test", "hypot_fp32", "--quick", cwd=built)
    assert r.returncode == 0 and "verdict: PASS" in r.stdout, r.stdout + r.stderr
    # This process loaded the skeleton's library earlier; a process registers a library once, so the
    # override is checked in a fresh one.
    code = textwrap.dedent("""
        import sys, torch, opkit
        from torch._C import DispatchKey
        sys.path.insert(0, sys.argv[1])
        from test_scan import FallbackModel
        opkit.load(ops=["hypot_fp32"], bundled=False, override_aten=True)
        a, b = torch.randn(4, 100) * 30, torch.randn(4, 100) * 30
        got = torch.ops.aten.hypot.default._op_dk(DispatchKey.PrivateUse1, a.half(), b.half())
        want = torch.hypot(a.half().double(), b.half().double())
        assert ((got.double() - want).abs() / want).max() <= 2 ** -10, "fp16 result off"
        rep = opkit.scan(FallbackModel(), [torch.randn(1, 3, 8, 8)])
        print(sorted(r.entry for r in rep.fallbacks))
    """)
    r = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], cwd=built, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == "['aten::lgamma', 'aten::logcumsumexp']"
