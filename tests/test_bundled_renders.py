"""Every bundled op is a render of its family's templates with the answers in its .opkit-scaffold.yaml,
byte for byte: an edit to a bundled op must be made in templates/families/ (then scripts/render_bundled.py).
The harness cases of the bundled ops therefore test the templates too."""
from pathlib import Path

import pytest

from opkit.scaffold import ANSWERS, read_answers, rerender
from opkit.workspace import bundled_ops_dir

OPS = sorted(p for p in bundled_ops_dir().iterdir() if (p / "op.yaml").is_file())


def test_every_bundled_op_records_its_answers():
    assert len(OPS) >= 16
    missing = [p.name for p in OPS if not (p / ANSWERS).is_file()]
    assert not missing, f"bundled ops without {ANSWERS}: {missing}"


@pytest.mark.parametrize("op", OPS, ids=[p.name for p in OPS])
def test_bundled_op_is_its_template_render(op: Path):
    rendered = rerender(op)
    files = {p.name for p in op.iterdir() if p.is_file() and not p.name.startswith(".") and p.suffix != ".pyc"}
    assert set(rendered) == files, f"{op.name}: the templates render {sorted(rendered)}, the folder has {sorted(files)}"
    for name, data in rendered.items():
        assert (op / name).read_bytes() == data, (
            f"ops/{op.name}/{name} differs from its render of templates/families/{read_answers(op)['family']}: "
            "edit the template, then `python scripts/render_bundled.py`")
