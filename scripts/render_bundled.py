"""Re-render opkit's bundled ops from their family templates (after editing templates/families/...).

    python scripts/render_bundled.py           # rewrite ops/<op>/ files that differ, list them
    python scripts/render_bundled.py --check   # list differences only; exit 1 if any

Each ops/<op>/.opkit-scaffold.yaml holds the answers the op renders from; tests/test_bundled_renders.py
fails when a bundled op and its render differ.
"""
import sys
from pathlib import Path

from opkit.scaffold import ANSWERS, rerender

ROOT = Path(__file__).resolve().parents[1]


def main(check: bool) -> int:
    changed = []
    for op in sorted(p for p in (ROOT / "ops").iterdir() if (p / ANSWERS).is_file()):
        for name, data in rerender(op).items():
            f = op / name
            if not f.is_file() or f.read_bytes() != data:
                changed.append(f.relative_to(ROOT))
                if not check:
                    f.write_bytes(data)
    for f in changed:
        print(("differs: " if check else "rendered: ") + str(f))
    return 1 if (check and changed) else 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv[1:]))
