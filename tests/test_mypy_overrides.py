"""mypy's per-module exceptions (``[[tool.mypy.overrides]]`` in pyproject.toml) only shrink.

./test.sh runs mypy with the project's configuration: strict everywhere, with two kinds of
exceptions. One override lists the modules that do not meet the strict flags yet and turns those
flags off for them; one override per module silences the error codes that module still has at the
default level. Here mypy runs once more, strict and without those exceptions
(tools/mypy_entries.py), and every exception must still be needed: a listed module must have an
error its entry silences. A module that meets the rules again must leave the list, so that its
exception does not silently cover the next error written there; a listed module that no longer
exists (moved or renamed) must take its entry along.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from mypy_entries import ROOT, exceptions, mypy_settings, needs, unneeded_exceptions  # noqa: E402


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mypy")


def test_every_override_is_still_needed(mypy_cache: Path) -> None:
    settings = mypy_settings()
    assert settings.get("strict") is True
    not_strict, silenced = exceptions(settings)
    assert not_strict and silenced
    assert unneeded_exceptions(ROOT, settings, mypy_cache) == []


def test_an_unneeded_override_is_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "typed.py").write_text("def f(x: int) -> int:\n    return x\n")
    (package / "untyped.py").write_text("def g(x):\n    return x\n")
    (package / "wrong.py").write_text("def h(x: int) -> str:\n    return x\n")
    settings = {
        "strict": True, "files": ["pkg"],
        "overrides": [
            {"module": ["pkg.typed", "pkg.untyped", "pkg.gone"], "disallow_untyped_defs": False},
            {"module": "pkg.wrong", "disable_error_code": ["return-value", "arg-type"]},
        ],
    }
    assert unneeded_exceptions(tmp_path, settings, tmp_path / "mypy") == [
        "pkg.gone: no such module",
        "pkg.typed: meets the strict flags; take it off the not-strict list",
        "pkg.gone: meets the strict flags; take it off the not-strict list",
        "pkg.wrong: has no [arg-type] error any more; take it out of its disable_error_code",
    ]
    assert needs(tmp_path, settings, tmp_path / "mypy", ["pkg.typed", "pkg.untyped", "pkg.wrong"]) == [
        "pkg.typed: strict-clean", "pkg.untyped: no-untyped-def", "pkg.wrong: return-value"]
