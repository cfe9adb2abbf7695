"""The package's layering (docs/architecture.md "Layers"): the import-linter contracts of pyproject.toml
hold, no private name is imported across packages, and every subcommand is reachable however `opkit`
is started."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PKG = REPO / "python" / "opkit"

LINT = ("import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")


def test_import_contracts_hold():
    """Layers only point down, targets are independent, tbe imports neither harness nor loader, no cycles."""
    r = subprocess.run([sys.executable, "-c", LINT], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "4 kept, 0 broken" in r.stdout, r.stdout


def _module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _part(module: str) -> str:
    """opkit.targets.cpu.builder -> opkit.targets: the top-level part a module belongs to."""
    return ".".join(module.split(".")[:2])


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports_across_packages() -> list[str]:
    """`from X import _name`, and `mod._name` on a module bound from another part, anywhere in opkit."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        me = _module_name(path)
        tree = ast.parse(path.read_text(), str(path))
        modules: dict[str, str] = {}      # local name -> opkit module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                src = _resolve(me, path.name == "__init__.py", node.level, node.module)
                if not src.startswith("opkit"):
                    continue
                for a in node.names:
                    full = f"{src}.{a.name}"
                    if (PKG.parent / Path(*full.split("."))).with_suffix(".py").is_file() or \
                            (PKG.parent / Path(*full.split(".")) / "__init__.py").is_file():
                        modules[a.asname or a.name] = full
                    elif _private(a.name) and _part(src) != _part(me):
                        found.append(f"{path.relative_to(REPO)}:{node.lineno}: from {src} import {a.name}")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("opkit") and a.asname:
                        modules[a.asname] = a.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr)
                    and node.value.id in modules and _part(modules[node.value.id]) != _part(me)):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value.id}.{node.attr} "
                             f"({modules[node.value.id]})")
    return found


def test_no_private_name_is_imported_across_packages():
    assert private_imports_across_packages() == []


def test_the_private_name_check_sees_a_planted_one(tmp_path, monkeypatch):
    """The check above can fail: a module reaching into another part's private name is reported."""
    global PKG
    fake = tmp_path / "opkit"
    (fake / "a").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "a" / "__init__.py").write_text("")
    (fake / "b.py").write_text("def _hidden(): pass\n")
    (fake / "a" / "x.py").write_text("from ..b import _hidden\nfrom .. import b\nb._hidden()\n")
    monkeypatch.setattr(sys.modules[__name__], "PKG", fake)
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert private_imports_across_packages() == ["opkit/a/x.py:1: from opkit.b import _hidden",
                                                  "opkit/a/x.py:3: b._hidden (opkit.b)"]


def _commands(*cmd: str) -> list[str]:
    r = subprocess.run([*cmd, "--help"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    block = r.stdout.split("Commands:", 1)[1]
    return [line.split()[0] for line in block.splitlines() if line.startswith("  ") and line.split()]


def test_every_subcommand_whichever_way_opkit_starts():
    """`opkit`, `python -m opkit` and `python -m opkit.cli` offer the same commands, import-tbe included."""
    exe = Path(sys.executable).parent / "opkit"
    via_module = _commands(sys.executable, "-m", "opkit")
    assert {"new", "build", "test", "list", "cflags", "scan", "diagnose", "dump", "compare", "import-tbe"} <= set(via_module)
    assert _commands(sys.executable, "-m", "opkit.cli") == via_module
    if exe.is_file():
        assert _commands(str(exe)) == via_module
    r = subprocess.run([sys.executable, "-m", "opkit.cli", "import-tbe", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "Wrap the TBE implementation IMPL" in r.stdout, r.stderr
