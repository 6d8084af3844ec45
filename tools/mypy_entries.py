"""mypy's per-module exceptions ([[tool.mypy.overrides]] in pyproject.toml): which are no longer
needed, and which a module needs.

./test.sh runs mypy strict everywhere, with two kinds of exception: one override lists the modules
that do not meet the strict flags yet (and turns those flags off for them); one override per module
silences the error codes that module still has at the default level. Both are found by running
mypy once more, strict and without them:

    .venv/bin/python tools/mypy_entries.py            exceptions no longer needed (also a test:
                                                      tests/test_mypy_overrides.py)
    .venv/bin/python tools/mypy_entries.py MODULE...  what each named module would need: whether
                                                      it is strict-clean, and the codes it has

The second form is for a module that was moved or renamed (its entries move with it) and for
reviewing a new one; a new module is meant to meet the strict flags, not to join the lists.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import tomllib
from collections import defaultdict
from pathlib import Path

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
    cache_dir.mkdir(parents=True, exist_ok=True)
    config_file = cache_dir / "strict.ini"
    config_file.write_text("\n".join(config) + "\n", encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config_file), "--cache-dir", str(cache_dir / "cache"),
         "--show-error-codes", "--no-error-summary", "--no-pretty", *settings["files"]],
        cwd=root, capture_output=True, text=True, check=False)
    if run.returncode not in (0, 1):
        raise RuntimeError(run.stdout + run.stderr)
    found: dict[str, set[str]] = defaultdict(set)
    for line in run.stdout.splitlines():
        match = ERROR.match(line.strip())
        if match:
            parts = Path(match["path"]).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)].add(match["code"])
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


def needs(root: Path, settings: dict, cache_dir: Path, modules: list[str]) -> list[str]:
    """What each module would need: the codes of the errors it has under strict (those beyond the
    default level's mean the not-strict list; mypy at the default level tells which those are)."""
    errors = strict_errors(root, settings, cache_dir)
    return [f"{name}: " + (", ".join(sorted(errors[name])) if errors.get(name) else "strict-clean")
            for name in modules]


def main(argv: list[str]) -> int:
    settings = mypy_settings()
    with tempfile.TemporaryDirectory(prefix="warpline-mypy-") as folder:
        if argv:
            print("\n".join(needs(ROOT, settings, Path(folder), argv)))
            return 0
        problems = unneeded_exceptions(ROOT, settings, Path(folder))
    print("\n".join(problems) or "every exception is still needed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
