"""The model-level packages' structural rules, read from the source with ast: no function over 80 lines, one
JSON writer, one public FP32."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "python" / "opkit"
MODEL_LEVEL = ("accuracy", "scanner", "patching", "quant", "data", "evaluate", "gate", "experiment")
MAX_LINES = 80


def _files(pkg: str) -> list[Path]:
    p = ROOT / pkg
    return sorted(p.rglob("*.py")) if p.is_dir() else [p.with_suffix(".py")]


def _functions():
    for pkg in MODEL_LEVEL:
        for f in _files(pkg):
            tree = ast.parse(f.read_text(), filename=str(f))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{f.relative_to(ROOT).as_posix()}:{node.name}", node.end_lineno - node.lineno + 1


def test_the_rule_sees_the_model_level_code():
    found = dict(_functions())
    assert len(found) > 300 and "quant/variant.py:build_variant" in found and "evaluate/runner.py:evaluate" in found


def test_no_function_over_80_lines_in_the_model_level_packages():
    long = {name: n for name, n in _functions() if n > MAX_LINES}
    assert not long, f"functions over {MAX_LINES} lines: {long}"


@pytest.mark.parametrize("pkg", MODEL_LEVEL)
def test_json_files_are_written_by_the_one_writer(pkg):
    """No json.dump to a file, no write_text(json.dumps(...)): toolchain.files.write_json writes JSON atomically."""
    bad = []
    for f in _files(pkg):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "dump" and getattr(node.func.value, "id", "") == "json":
                    bad.append(f"{f.name}:{node.lineno} json.dump")
                if node.func.attr == "write_text" and any(isinstance(a, ast.Call) and getattr(a.func, "attr", "")
                                                          == "dumps" for a in node.args):
                    bad.append(f"{f.name}:{node.lineno} write_text(json.dumps(...))")
    assert not bad, f"write JSON with opkit.toolchain.files.write_json: {bad}"


def test_one_public_fp32():
    """``FP32`` is the FP32 variant (opkit.evaluate.FP32); nothing else in the package is called that."""
    found = []
    for f in sorted(ROOT.rglob("*.py")):
        for node in ast.parse(f.read_text()).body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "FP32" for t in node.targets):
                found.append(f.relative_to(ROOT).as_posix())
    assert found == ["evaluate/variants.py"], found
