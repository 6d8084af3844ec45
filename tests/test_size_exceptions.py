"""Size limits (issue 33): no function over ``MAX_FUNCTION_LINES`` lines and no class over
``MAX_CLASS_METHODS`` methods, outside the exceptions listed with their reasons in
``[tool.warpline.size-exceptions]`` of ``pyproject.toml``. The list only shrinks: a listed function
or class that meets its limit again must leave it, so that the exception does not silently cover
the next one that grows there."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 120
MAX_CLASS_METHODS = 40
# what ruff leaves out (its default excludes and [tool.ruff] extend-exclude), and other checkouts' trees
SKIPPED_DIRS = {".venv", "venv", ".git", "__pycache__", "build", "dist", "node_modules", "corpus"}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def listed_exceptions() -> dict[str, str]:
    """``"path:qualified.name"`` -> reason."""
    return _pyproject()["tool"]["warpline"]["size-exceptions"]


def oversized(source: str, path: str) -> dict[str, str]:
    """The functions over MAX_FUNCTION_LINES lines and the classes over MAX_CLASS_METHODS methods
    of ``source`` (a module at ``path``), as ``"path:qualified.name"`` -> what is over."""
    found: dict[str, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                lines = child.end_lineno - child.lineno + 1  # type: ignore[operator]
                if lines > MAX_FUNCTION_LINES:
                    found[f"{path}:{name}"] = f"{lines} lines"
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                name = prefix + child.name
                methods = sum(isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef)) for x in child.body)
                if methods > MAX_CLASS_METHODS:
                    found[f"{path}:{name}"] = f"{methods} methods"
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source, filename=path), "")
    return found


def project_files(root: Path) -> list[Path]:
    files = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if not any(part in SKIPPED_DIRS or part.startswith(".") for part in parts[:-1]):
            files.append(path)
    return files


def oversized_in(root: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for path in project_files(root):
        found.update(oversized(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix()))
    return found


def unlisted_and_stale(found: dict[str, str], listed: dict[str, str]) -> tuple[list[str], list[str]]:
    """(over a limit but not listed, listed but within the limits)."""
    return sorted(set(found) - set(listed)), sorted(set(listed) - set(found))


def test_every_function_and_class_within_the_limits_or_listed() -> None:
    found = oversized_in(ROOT)
    unlisted, stale = unlisted_and_stale(found, listed_exceptions())
    assert not unlisted, ("over the size limits and not listed in [tool.warpline.size-exceptions]: "
                          + ", ".join(f"{name} ({found[name]})" for name in unlisted))
    assert not stale, f"listed in [tool.warpline.size-exceptions] but within the limits now: {stale}"


def test_every_exception_gives_a_reason() -> None:
    listed = listed_exceptions()
    assert listed
    for name, reason in listed.items():
        path, _, qualified = name.partition(":")
        assert (ROOT / path).is_file() and qualified, name
        assert isinstance(reason, str) and len(reason.split()) >= 3, name


def test_long_functions_and_wide_classes_are_found() -> None:
    body = "".join(f"    x{k} = {k}\n" for k in range(MAX_FUNCTION_LINES))
    methods = "".join(f"    def m{k}(self):\n        return {k}\n" for k in range(MAX_CLASS_METHODS + 1))
    source = (f"def short():\n    return 1\n\ndef long():\n{body}\n"
              f"class Wide:\n{methods}\nclass Holder:\n    def method(self):\n{body.replace('    ', '        ')}")
    found = oversized(source, "m.py")
    assert found == {"m.py:long": f"{MAX_FUNCTION_LINES + 1} lines",
                     "m.py:Wide": f"{MAX_CLASS_METHODS + 1} methods",
                     "m.py:Holder.method": f"{MAX_FUNCTION_LINES + 1} lines"}
    assert unlisted_and_stale(found, {"m.py:long": "why", "m.py:gone": "why"}) == (
        ["m.py:Holder.method", "m.py:Wide"], ["m.py:gone"])


def test_a_function_of_exactly_the_limit_passes() -> None:
    body = "".join(f"    x{k} = {k}\n" for k in range(MAX_FUNCTION_LINES - 1))
    assert oversized(f"def f():\n{body}", "m.py") == {}
