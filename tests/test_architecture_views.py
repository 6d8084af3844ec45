"""Views talk to the session only, also where an import contract cannot see it: no panel, chart,
table model or curve reads the session's worker, evaluator, loader or undo stack through an
attribute (``self.session.worker.evaluator.profile(...)`` imports nothing, yet couples a view to
how the session computes). The session offers a method instead (``Session.set_profile``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VIEWS = ("gui/panels", "gui/gantt", "gui/models", "gui/curves.py")
SESSION_INTERNALS = frozenset({"worker", "evaluator", "loader", "undo_stack"})


def reaches_into_session(source: str) -> list[str]:
    """``line: expression`` of every attribute access that names one of the session's internals."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in SESSION_INTERNALS:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def view_files() -> list[Path]:
    files: list[Path] = []
    for name in VIEWS:
        path = ROOT / name
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def test_no_view_reaches_into_the_session() -> None:
    files = view_files()
    assert len(files) > 10
    offending = {str(path.relative_to(ROOT)): hits for path in files
                 if (hits := reaches_into_session(path.read_text(encoding="utf-8")))}
    assert offending == {}


def test_a_view_that_reaches_in_is_found() -> None:
    source = (ROOT / "gui/panels/inputs.py").read_text(encoding="utf-8")
    doctored = source.replace("self.session.set_profile(name)", "self.session.worker.evaluator.profile(name)")
    assert doctored != source
    hits = reaches_into_session(doctored)
    assert [hit.split(": ", 1)[1] for hit in hits] == ["self.session.worker.evaluator", "self.session.worker"]
