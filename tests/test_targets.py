"""Targets are packages found by name (opkit/targets/<name>/), all behind one protocol: a third target is one
new package and no edit elsewhere. Shown on a copy of opkit with an extra target package; the CLI, the
build driver and the test runner reach it by name only."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opkit import targets

REPO = Path(__file__).resolve().parents[1]
PROTOCOL = ("available", "build", "library", "build_state", "load", "prepare_test", "cli_options")

THIRD = textwrap.dedent('''
    """A stand-in device target for tests: its build writes a file per op (no compiler)."""
    from pathlib import Path

    NAME = "mydev"


    def available():
        return True, "test target"


    def build(specs, build_dir, *, jobs=None, log=None, verbose=False, fancy=False, **options):
        Path(build_dir).mkdir(parents=True, exist_ok=True)
        for s in specs:
            (Path(build_dir) / f"{s.snake}.mydev").write_text(f"fancy={fancy}\\n")


    def library(build_dir, spec):
        return Path(build_dir) / f"{spec.snake}.mydev"


    def build_state(spec, build_dir):
        return "built" if library(build_dir, spec).is_file() else "not built"


    def load(workspace, specs):
        return False


    def prepare_test():
        raise RuntimeError("mydev: prepare_test reached")


    def cli_options():
        import click
        return [click.Option(["--fancy"], is_flag=True, help="mydev: a target-specific option")]
''')

OP_YAML = """\
op: TinyCopy
family: custom
summary: y = x
inputs:
  - {name: x, dtypes: [float32], shape: [N]}
outputs:
  - {name: y, dtype: x, shape: x}
tests:
  dims: {N: [1, 8]}
"""


def test_every_target_implements_the_protocol_and_carries_its_files():
    assert targets.names()[0] == targets.HOST == "cpu" and "npu" in targets.names()
    for name in targets.names():
        t = targets.get(name)
        missing = [f for f in PROTOCOL if not callable(getattr(t, f, None))]
        assert not missing, f"target {name} lacks {missing}"
        # every target's CMake is a module of the repository's cmake/ (one build path); a target may carry
        # templates of its own glue
        assert (REPO / "cmake" / ("opkit_emulator.cmake" if name == targets.HOST else f"opkit_{name}.cmake")).is_file()


def test_no_target_named_outside_the_targets_packages():
    """The commands, the build router, the harness and the loader reach targets only through the protocol."""
    cli = [str(p.relative_to(REPO / "python" / "opkit")) for p in (REPO / "python" / "opkit" / "cli").glob("*.py")]
    for rel in (*cli, "loader.py", "build.py", "harness/runner.py", "harness/binding.py", "harness/plugin.py"):
        text = (REPO / "python" / "opkit" / rel).read_text()
        assert '"npu"' not in text and "'npu'" not in text and "targets.npu" not in text, rel


def test_unknown_target_names_the_folder():
    from opkit.errors import OpkitError
    with pytest.raises(OpkitError, match=r"unknown target 'gpu'.*opkit/targets"):
        targets.get("gpu")


@pytest.fixture
def copy_with_third_target(tmp_path):
    """A copy of opkit (python/opkit, ops/, templates/, cmake/) plus targets/mydev/__init__.py."""
    root = tmp_path / "kit"
    shutil.copytree(REPO / "python" / "opkit", root / "python" / "opkit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for d in ("ops", "templates", "cmake"):
        (root / d).symlink_to(REPO / d)
    pkg = root / "python" / "opkit" / "targets" / "mydev"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(THIRD)
    ws = tmp_path / "ws"
    (ws / "ops" / "tiny_copy").mkdir(parents=True)
    (ws / "ops" / "tiny_copy" / "op.yaml").write_text(OP_YAML)
    env = dict(os.environ, PYTHONPATH=str(root / "python"))
    env.pop("OPKIT_TARGET", None)
    return ws, env


def _opkit(args, ws, env):
    return subprocess.run([sys.executable, "-m", "opkit", *args], cwd=ws, env=env, capture_output=True, text=True)


def test_a_third_target_is_one_new_package(copy_with_third_target):
    ws, env = copy_with_third_target
    r = _opkit(["list"], ws, env)
    assert r.returncode == 0 and "target mydev: available -- test target" in r.stdout, r.stdout + r.stderr
    r = _opkit(["build", "--help"], ws, env)
    assert "[cpu|mydev|npu]" in r.stdout and "--fancy" in r.stdout, r.stdout
    r = _opkit(["build", "--target", "mydev", "--fancy"], ws, env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (ws / "build" / "opkit" / "mydev" / "tiny_copy.mydev").read_text() == "fancy=True\n"
    # its option is refused for another target, by name
    r = _opkit(["build", "--target", "npu", "--fancy"], ws, env)
    assert r.returncode == 1 and "apply to --target mydev only" in r.stderr, r.stderr
    # `opkit test --target mydev` reaches its prepare_test() before any case runs
    r = _opkit(["test", "--target", "mydev"], ws, env)
    assert r.returncode != 0 and "mydev: prepare_test reached" in r.stderr, r.stderr


def test_bundled_ops_get_builds_for_every_available_device_target(tmp_path, monkeypatch):
    """opkit.load()'s bundled cache: a device target available on this machine (npu: CANN + torch_npu)
    builds the bundled ops into <cache>/<target> once per change of the sources."""
    import types

    from opkit import loader
    from opkit.errors import BuildError
    built = []
    fake = types.ModuleType("opkit.targets.mydev")
    fake.__file__ = str(tmp_path / "mydev" / "__init__.py")
    (tmp_path / "mydev").mkdir()
    (tmp_path / "mydev" / "__init__.py").write_text("# target files (hashed into the cache key)\n")
    fake.available = lambda: (True, "test")
    fake.build = lambda specs, d, **kw: built.append((d, [s.snake for s in specs]))
    unavailable = types.ModuleType("opkit.targets.off")
    unavailable.available = lambda: (False, "no toolchain")
    monkeypatch.setattr(targets, "names", lambda: ("cpu", "mydev", "off"))
    monkeypatch.setattr(targets, "get", lambda n: {"mydev": fake, "off": unavailable}[n])
    spec = types.SimpleNamespace(snake="gelu_fp32", lang="ascendc")
    loader._device_builds([spec], tmp_path / "cache", "digest-1", quiet=True)
    loader._device_builds([spec], tmp_path / "cache", "digest-1", quiet=True)    # up to date: no rebuild
    assert built == [(tmp_path / "cache" / "mydev", ["gelu_fp32"])]
    loader._device_builds([spec], tmp_path / "cache", "digest-2", quiet=True)    # sources changed
    assert len(built) == 2

    def failing(specs, d, **kw):
        built.append("attempt")
        raise BuildError("no bisheng")
    fake.build = failing
    with pytest.warns(UserWarning, match="no bisheng"):
        loader._device_builds([spec], tmp_path / "cache", "digest-3", quiet=True)
    with pytest.warns(UserWarning, match="failed earlier"):                   # not retried on every load
        loader._device_builds([spec], tmp_path / "cache", "digest-3", quiet=True)
    assert built.count("attempt") == 1
