"""Opt-in (OPKIT_CANN_MIRRORS=1, needs the bare mirrors under /work/.mirror or OPKIT_MIRROR_DIR): CANN's own
ops-math A2 kernels through import-cann's machinery on their own host tiling, opbase's libraries on the path,
against PyTorch on an aligned and a ragged shape per floating dtype. Skipped otherwise -- a skip is not a pass;
the full measurement is scripts/cann_survey.py (docs/cann.md)."""
from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest
import torch

from opkit.cannproject import layout
from opkit.cannproject.op import CannOp

MIRRORS = Path(os.environ.get("OPKIT_MIRROR_DIR", "/work/.mirror"))
pytestmark = pytest.mark.skipif(os.environ.get("OPKIT_CANN_MIRRORS") != "1" or not MIRRORS.is_dir(),
                                reason="opt-in: OPKIT_CANN_MIRRORS=1 and the hicann mirrors")


def _export(repo: str, paths: list[str], dest: Path) -> Path:
    git = ["git", "--git-dir", str(MIRRORS / f"hicann+{repo}" / "repo")]
    data = subprocess.run([*git, "archive", "HEAD", *paths], capture_output=True, check=True).stdout
    tarfile.open(fileobj=io.BytesIO(data)).extractall(dest / repo)
    return dest / repo


@pytest.fixture(scope="module")
def checkouts(tmp_path_factory):
    d = tmp_path_factory.mktemp("mirrors")
    _export("opbase", ["include", "pkg_inc", "src/op_common"], d)
    _export("ops-math", ["cmake", "common", "experimental/math/sin", "experimental/math/lerp",
                         "examples/add_example"], d)
    return d


@pytest.mark.parametrize("folder,op_type,ref,shapes", [
    ("experimental/math/sin", "Sin", torch.sin, ((8, 2048), (3, 77))),
    ("experimental/math/lerp", "Lerp", torch.lerp, ((8, 2048), (3, 77))),
    ("examples/add_example", "AddExample", torch.add, ((2, 4, 16, 64), (3, 5, 7, 11))),
])
def test_cann_mirror_op_runs_right(checkouts, tmp_path, folder, op_type, ref, shapes):
    op = CannOp(layout.find(checkouts / "ops-math" / folder), op_type, tmp_path)
    try:
        done = 0
        for col in op.columns():
            name = {0: "float32", 1: "float16", 27: "bfloat16"}.get(col[op.input_names[0]])
            if name is None:
                continue
            dtype = getattr(torch, name)
            for shape in shapes:
                xs = [torch.rand(shape, generator=torch.Generator().manual_seed(i)).to(dtype) * 4 - 2
                      for i in range(len(op.input_names))]
                got, = op(xs, {})
                want = ref(*[x.double() for x in xs]).to(dtype)
                tol = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}[name]
                torch.testing.assert_close(got, want, rtol=tol, atol=tol)
                done += 1
        assert done >= 2
    finally:
        op.close()
