"""The project stands alone: docs, code and templates cite only what ships with it."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_nothing_points_outside_the_project():
    hits = []
    for top in ("docs", "python", "templates", "ops", "README.md"):
        paths = [ROOT / top] if (ROOT / top).is_file() else (ROOT / top).rglob("*")
        for p in paths:
            if p.is_file() and p.suffix not in (".pyc", ".so") and "egg-info" not in str(p):
                for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
                    if "shared/" in line:
                        hits.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits, "references to files users do not have:\n" + "\n".join(hits)


def test_cited_fact_sheets_ship_in_docs():
    assert {p.name for p in (ROOT / "docs" / "facts").glob("*.md")} >= {
        "ascendc-facts.md", "accuracy-standards.md", "torch-npu-facts.md"}
