"""Module names say what a module is: no two modules of one package tree (``engine/``, ``gui/``)
share a file name, so that ``model.py`` or ``report.py`` never needs its folder to be understood
(``__init__.py`` aside)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def shared_names(tree: Path) -> dict[str, list[str]]:
    """File name -> the modules of ``tree`` that have it, for every name two or more share."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(tree.rglob("*.py")):
        if path.name != "__init__.py":
            found[path.name].append(path.relative_to(tree.parent).as_posix())
    return {name: paths for name, paths in found.items() if len(paths) > 1}


@pytest.mark.parametrize("tree", ["engine", "gui"])
def test_no_two_modules_of_a_tree_share_a_name(tree: str) -> None:
    assert shared_names(ROOT / tree) == {}


def test_a_shared_name_is_found(tmp_path: Path) -> None:
    for folder in ("a", "b/c"):
        (tmp_path / "pkg" / folder).mkdir(parents=True)
        (tmp_path / "pkg" / folder / "model.py").write_text("")
        (tmp_path / "pkg" / folder / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a" / "own.py").write_text("")
    assert shared_names(tmp_path / "pkg") == {"model.py": ["pkg/a/model.py", "pkg/b/c/model.py"]}
