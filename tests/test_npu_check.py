"""`opkit build --target npu --check-only`, for real: the generated torch_npu binding is compiled and
linked against torch 2.13 and the published torch-npu 2.13.0 wheel's headers / libtorch_npu.so (the
wheel is fetched into ~/.cache/opkit once by `pip download`; OPKIT_TORCH_NPU_WHEEL points at a local
one), and the check fails when one generated line is broken. Each binding compile takes ~25 s."""
from __future__ import annotations

import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Two binding compiles of ~25 s CPU each (over 60 s wall on a loaded 2-core machine).
pytestmark = pytest.mark.slow

from opkit.targets import npu
from opkit.errors import BuildError
from opkit.targets.npu import wheel
from opkit.opspec import DTYPES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_npu_glue import REPO, make_op  # noqa: E402


def bundled_specs() -> list:
    """Every bundled op whose folder is complete (op.yaml, kernel.cpp, tiling.h)."""
    from opkit.opspec import load_spec
    return [load_spec(d, bundled=True) for d in sorted((REPO / "ops").glob("*/"))
            if all((d / f).is_file() for f in ("op.yaml", "kernel.cpp", "tiling.h"))]


def workspace_with_ops(root: Path) -> list:
    """A workspace holding copies of the complete bundled ops and two hand-built ops (dim move, reduce
    outputs, a converted int64 output, a str attr with choices)."""
    from opkit.opspec import load_spec
    ops = root / "ops"
    for spec in bundled_specs():
        shutil.copytree(spec.dir, ops / spec.dir.name)
    make_op(ops)
    make_op(ops, "NpuTestSoftmax", "npu_test_softmax", reduce=False)
    return [load_spec(d) for d in sorted(ops.iterdir())]


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """In parallel: `opkit build --target npu --check-only --package` (the CLI) in a workspace, and the
    compile step re-run on a copy whose rendered binding has one line broken on purpose."""
    tmp = tmp_path_factory.mktemp("npu")
    ws = tmp / "ws"
    specs = workspace_with_ops(ws)
    wheel.torch_npu_root()                      # fetch once, before the two compiles share the cache
    bad = tmp / "bad"
    npu.build(specs, bad, check_only=True, compile=False)
    binding = bad / "src" / "binding.cpp"
    text = binding.read_text()
    assert "c10_npu::getCurrentNPUStream().stream(false);" in text
    binding.write_text(text.replace("c10_npu::getCurrentNPUStream().stream(false);",
                                    "c10_npu::getCurrentNPUStream().stream_typo(false);", 1))
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"),
               PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
               ASCEND_HOME_PATH="", ASCEND_TOOLKIT_HOME="", ASCEND_CANN_PACKAGE_PATH="")
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        broken = pool.submit(npu.recheck, bad)
        cli = subprocess.run([sys.executable, "-m", "opkit", "build", "--target", "npu", "--check-only", "--package",
                              "-v"], cwd=ws, env=env, capture_output=True, text=True, timeout=1200)
        error = broken.exception()
    return ws / "build" / "opkit" / "npu", specs, cli, error


def test_check_only_compiles_and_links_the_binding(checked):
    build_dir, specs, cli, _ = checked
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert len(specs) >= 3
    lib = build_dir / "check" / "libopkit_npu_check.so"
    assert lib.is_file()
    # Linked against libtorch_npu with --no-undefined; it really references torch_npu's stream API.
    nm = subprocess.run(["nm", "-D", "--undefined-only", "-C", str(lib)], capture_output=True, text=True).stdout
    assert "c10_npu::getCurrentNPUStream" in nm and "c10_npu::NPUStream::stream(bool) const" in nm
    assert "at_npu::native::OpCommand::RunOpApi" in nm      # launched through torch_npu's task queue
    assert "libtorch_npu.so" in subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True).stdout
    # Every op and dtype variant is registered / launched.
    text = (build_dir / "src" / "binding.cpp").read_text()
    for s in specs:
        assert f'table->add("{s.snake}"' in text
        for d in s.dtypes:
            assert f"return aclrtlaunch_{s.snake}_{DTYPES[d][2]}(block_dim, stream" in text
    assert (build_dir / "package" / "op_host" / "npu_test_softmax.cpp").is_file()
    assert "--check-only OK" in cli.stdout + cli.stderr
    assert re.search(r"npu: --check-only: \d+ CANN build-step checks passed", cli.stdout + cli.stderr)
    # The check library must never be what opkit.load() picks up.
    assert not npu.library(build_dir).exists()


def test_broken_generated_line_fails_with_the_compiler_message(checked):
    *_, error = checked
    assert isinstance(error, BuildError)
    msg = str(error)
    assert "check-only" in msg and "stream_typo" in msg and "error" in msg
