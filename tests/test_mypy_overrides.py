"""mypy's per-module overrides (``[[tool.mypy.overrides]]`` in pyproject.toml) only shrink.

./test.sh runs mypy with the project's configuration: strict everywhere, with two kinds of
exceptions. One override lists the modules that do not meet the strict flags yet and turns those
flags off for them; one override per module silences the error codes that module still has at the
default level. Here mypy runs once more, strict and without those exceptions, and every exception
must still be needed: a listed module must have an error its entry silences. A module that meets
the rules again must leave the list, so that its exception does not silently cover the next error
written there; a listed module that no longer exists (moved or renamed) must take its entry along.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ERROR = re.compile(r"^(?P<path>[^:]+\.py):\d+: error: .*\[(?P<code>[a-z-]+)\]$")


def mypy_settings(root: Path = ROOT) -> dict:
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def _names(module: str | list[str]) -> list[str]:
    return [module] if isinstance(module, str) else list(module)


def exceptions(settings: dict) -> tuple[list[str], dict[str, set[str]]]:
    """The modules that are not strict yet, and the error codes each listed module silences."""
    not_strict: list[str] = []
    silenced: dict[str, set[str]] = defaultdict(set)
    for override in settings.get("overrides", []):
        if override.get("disallow_untyped_defs") is False:
            not_strict += _names(override["module"])
        for name in _names(override["module"]):
            silenced[name] |= set(override.get("disable_error_code", []))
    return not_strict, {name: codes for name, codes in silenced.items() if codes}


def module_path(root: Path, module: str) -> Path | None:
    """The file of a dotted module name under ``root``, or None when there is none."""
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _ini_value(value: object) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def strict_errors(root: Path, settings: dict, cache_dir: Path) -> dict[str, set[str]]:
    """module -> the error codes mypy reports in it when every module is held to the global
    settings (strict), with only the third-party packages' ``ignore_missing_imports`` kept."""
    config = ["[mypy]"]
    config += [f"{key} = {_ini_value(value)}" for key, value in settings.items()
               if key not in ("overrides", "files", "cache_dir")]
    for override in settings.get("overrides", []):
        if override.get("ignore_missing_imports"):
            config += [f"[mypy-{','.join(_names(override['module']))}]", "ignore_missing_imports = True"]
    config_file = cache_dir / "strict.ini"
    cache_dir.mkdir(parents=True, exist_ok=True)
    config_file.write_text("\n".join(config) + "\n", encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config_file), "--cache-dir", str(cache_dir / "cache"),
         "--show-error-codes", "--no-error-summary", "--no-pretty", *settings["files"]],
        cwd=root, capture_output=True, text=True, check=False)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    found: dict[str, set[str]] = defaultdict(set)
    for line in run.stdout.splitlines():
        match = ERROR.match(line.strip())
        if match:
            parts = Path(match["path"]).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name].add(match["code"])
    return found


def unneeded_exceptions(root: Path, settings: dict, cache_dir: Path) -> list[str]:
    """One line per exception that is no longer needed (or names a module that is not there)."""
    not_strict, silenced = exceptions(settings)
    problems = [f"{name}: no such module" for name in sorted(set(not_strict) | set(silenced))
                if module_path(root, name) is None]
    errors = strict_errors(root, settings, cache_dir)
    for name in not_strict:
        if not errors.get(name, set()) - silenced.get(name, set()):
            problems.append(f"{name}: meets the strict flags; take it off the not-strict list")
    for name, codes in sorted(silenced.items()):
        for code in sorted(codes - errors.get(name, set())):
            problems.append(f"{name}: has no [{code}] error any more; take it out of its disable_error_code")
    return problems


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
