"""docs/ARCHITECTURE.md stays true: it names every package and top-level module of engine/ and
gui/, every import-linter contract of pyproject.toml with its layers, and nothing that does not
exist.

The checks are plain functions over the document's text, so that each is also shown to fail on a
document that leaves something out or names something that is not there.
"""

from __future__ import annotations

import ast
import re
import tomllib
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
CODE_ROOTS = ("engine", "gui")
# Folders of the repository a document may name a file of.
PATH_ROOTS = ("engine", "gui", "tests", "bench", "tools", "docs", "profiles", "samples")


def code_units(root: Path, package: str) -> list[str]:
    """The packages (at any depth) and the top-level modules of ``package``, as dotted names."""
    base = root / package
    names = []
    for path in sorted(base.iterdir()):
        if path.suffix == ".py" and path.name != "__init__.py":
            names.append(f"{package}.{path.stem}")
    for init in sorted(base.rglob("__init__.py")):
        if init.parent != base and "__pycache__" not in init.parts:
            names.append(".".join(init.parent.relative_to(root).parts))
    return names


def contracts(root: Path) -> list[dict]:
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return data["tool"]["importlinter"]["contracts"]


def unnamed_units(doc: str, units: list[str]) -> list[str]:
    """The units the document never names, as ``engine.x`` (possibly followed by more of a dotted
    name) or as the path ``engine/x.py`` / ``engine/x/``."""
    missing = []
    for unit in units:
        dotted = re.escape(unit) + r"(?![\w])"
        as_path = re.escape(unit.replace(".", "/")) + r"(\.py|/)"
        if not re.search(dotted, doc) and not re.search(as_path, doc):
            missing.append(unit)
    return missing


def unnamed_contracts(doc: str, found: list[dict]) -> list[str]:
    """Contract names, and layers of layers contracts, that the document does not spell out."""
    missing = []
    for contract in found:
        if contract["name"] not in doc:
            missing.append(contract["name"])
        for layer in contract.get("layers", []):
            if f"`{layer}`" not in doc:
                missing.append(f"{contract['name']}: layer `{layer}`")
    return missing


@cache
def _defined_names(path: Path) -> dict[str, ast.AST]:
    """Names bound at the top level of a module (also under ``if``/``try``), with their nodes."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: dict[str, ast.AST] = {}

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names[node.name] = node
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    names[(alias.asname or alias.name).split(".")[0]] = node
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            names[name.id] = node
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names[node.target.id] = node
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)

    visit(tree.body)
    return names


def _module_file(root: Path, parts: list[str]) -> Path | None:
    base = root.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def dangling_references(doc: str, root: Path) -> list[str]:
    """What the document names that does not exist: file paths under the repository's folders,
    bare ``x.py`` names (a file of that name at the top or somewhere in engine/ or gui/), and dotted names
    ``engine.a.b.name[.member]`` (the longest prefix a module, the rest bound in it)."""
    problems = []
    for token in sorted(set(re.findall(r"`([^`\s]+)`", doc))):
        if any(mark in token for mark in "<>*"):
            continue                      # a pattern (`profiles/<name>.toml`), not a path
        token = token.rstrip(".,;:")
        if token.split("/")[0] in PATH_ROOTS and "/" in token:
            if not (root / token).exists():
                problems.append(f"path {token}")
        elif re.fullmatch(r"\w+\.py", token):
            if not (root / token).is_file() and not any(any((root / part).rglob(token)) for part in CODE_ROOTS):
                problems.append(f"file {token}")
    for match in sorted(set(re.findall(r"(?<![\w./])((?:engine|gui)(?:\.[A-Za-z_]\w*)+)", doc))):
        parts = match.split(".")
        for cut in range(len(parts), 0, -1):
            module = _module_file(root, parts[:cut])
            if module is not None:
                break
        else:
            problems.append(f"module {match}")
            continue
        rest = parts[cut:]
        if not rest:
            continue
        bound = _defined_names(module)
        if rest[0] not in bound:
            problems.append(f"name {match} ({rest[0]} is not defined in {module.relative_to(root)})")
        elif len(rest) > 1 and isinstance(bound[rest[0]], ast.ClassDef):
            members = {getattr(node, "name", None) for node in bound[rest[0]].body}
            members |= {t.id for node in bound[rest[0]].body if isinstance(node, (ast.Assign, ast.AnnAssign))
                        for t in ast.walk(node) if isinstance(t, ast.Name)}
            if rest[1] not in members:
                problems.append(f"name {match} ({rest[1]} is not a member of {rest[0]})")
    return problems


def units_outside_contracts(root: Path, found: list[dict], package: str) -> list[str]:
    """Top-level units of ``package`` that no layers contract places (nor, for engine/, the leaves
    contract): a new module must be given a place, or nothing checks what it imports."""
    placed = set()
    for contract in found:
        if contract.get("type") == "layers":
            for layer in contract["layers"]:
                placed |= {name.strip() for name in re.split(r"[|:]", layer)}
        elif contract["name"] == "engine leaf helpers stay leaves":
            placed |= set(contract["source_modules"])
    top_level = [unit for unit in code_units(root, package) if unit.count(".") == 1]
    return [unit for unit in top_level if unit not in placed]


# ---------------------------------------------------------------------------- the real document


def test_every_engine_and_gui_unit_is_named() -> None:
    doc = DOC.read_text(encoding="utf-8")
    units = [unit for package in CODE_ROOTS for unit in code_units(ROOT, package)]
    assert "engine.batch" in units and "engine.sass" in units and "gui.panels" in units
    assert unnamed_units(doc, units) == []


def test_every_contract_and_layer_is_named() -> None:
    found = contracts(ROOT)
    assert len(found) >= 5
    assert unnamed_contracts(DOC.read_text(encoding="utf-8"), found) == []


def test_everything_the_document_names_exists() -> None:
    assert dangling_references(DOC.read_text(encoding="utf-8"), ROOT) == []


def test_every_engine_and_gui_module_has_a_place_in_the_contracts() -> None:
    for package in CODE_ROOTS:
        assert units_outside_contracts(ROOT, contracts(ROOT), package) == [], package


# ---------------------------------------------------------------------------- the checks can fail


def test_a_unit_left_out_is_found() -> None:
    doc = DOC.read_text(encoding="utf-8")
    # Every mention of engine.sass (dotted or as a path) removed: the check names it, and only it.
    without = re.sub(r"engine[./]sass(?![\w])", "the SASS mapper", doc)
    units = [unit for package in CODE_ROOTS for unit in code_units(ROOT, package)]
    assert unnamed_units(without, units) == ["engine.sass"]


def test_a_contract_or_layer_left_out_is_found() -> None:
    doc = DOC.read_text(encoding="utf-8")
    found = contracts(ROOT)
    gui_layers = next(c for c in found if c["name"].startswith("gui layers"))
    without = doc.replace(f"`{gui_layers['layers'][0]}`", "the application")
    assert unnamed_contracts(without, found) == [f"{gui_layers['name']}: layer `{gui_layers['layers'][0]}`"]
    renamed = [dict(found[0], name="a contract the document never heard of"), *found[1:]]
    assert unnamed_contracts(doc, renamed) == ["a contract the document never heard of"]


def test_names_that_do_not_exist_are_found() -> None:
    doc = DOC.read_text(encoding="utf-8") + (
        "\nSee `engine/nowhere.py`, `gui/panels/gone/`, `missing_module.py`, engine.ptx.no_such_function,"
        " engine.evaluation.core.Evaluator.no_such_method and engine.no_such_package.thing.\n")
    assert dangling_references(doc, ROOT) == [
        "path engine/nowhere.py",
        "path gui/panels/gone/",
        "file missing_module.py",
        "name engine.evaluation.core.Evaluator.no_such_method (no_such_method is not a member of Evaluator)",
        "name engine.no_such_package.thing (no_such_package is not defined in engine/__init__.py)",
        "name engine.ptx.no_such_function (no_such_function is not defined in engine/ptx/__init__.py)",
    ]


def test_a_module_without_a_place_is_found(tmp_path: Path) -> None:
    (tmp_path / "engine" / "newcomer").mkdir(parents=True)
    (tmp_path / "engine" / "__init__.py").write_text("")
    (tmp_path / "engine" / "newcomer" / "__init__.py").write_text("")
    (tmp_path / "engine" / "errors.py").write_text("")
    (tmp_path / "engine" / "ptx.py").write_text("")
    found = [{"name": "layers", "type": "layers", "layers": ["engine.ptx"]},
             {"name": "engine leaf helpers stay leaves", "type": "forbidden", "source_modules": ["engine.errors"]}]
    assert units_outside_contracts(tmp_path, found, "engine") == ["engine.newcomer"]
