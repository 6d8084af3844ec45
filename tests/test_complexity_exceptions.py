"""The exceptions to ruff's complexity limit (C901 in ``[tool.ruff.lint.per-file-ignores]``) only
shrink: a listed file whose functions all meet ``max-complexity`` again must leave the list, so
that the exception does not silently cover the next function that grows there."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _lint_settings() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]


def excepted_files() -> list[str]:
    return sorted(path for path, codes in _lint_settings().get("per-file-ignores", {}).items() if "C901" in codes)


def files_within_limit(files: list[Path], limit: int) -> list[Path]:
    """The files of ``files`` in which ruff finds no function over ``limit``."""
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "C901", "--output-format", "concise",
         "--config", f"lint.mccabe.max-complexity={limit}", *map(str, files)],
        capture_output=True, text=True, check=False)
    assert run.returncode in (0, 1), run.stderr
    flagged = {Path(line.split(":", 1)[0]).resolve() for line in run.stdout.splitlines() if " C901 " in line}
    return [path for path in files if path.resolve() not in flagged]


def test_every_listed_file_still_needs_its_exception() -> None:
    limit = _lint_settings()["mccabe"]["max-complexity"]
    files = excepted_files()
    assert files and all((ROOT / path).is_file() for path in files), files
    assert files_within_limit([ROOT / path for path in files], limit) == []


def test_a_file_that_meets_the_limit_is_found(tmp_path: Path) -> None:
    simple = tmp_path / "simple.py"
    simple.write_text("def f(x):\n    return 1 if x else 2\n")
    branches = "".join(f"    if x == {k}:\n        return {k}\n" for k in range(30))
    tangled = tmp_path / "tangled.py"
    tangled.write_text(f"def g(x):\n{branches}    return -1\n")
    assert files_within_limit([simple, tangled], 20) == [simple]
