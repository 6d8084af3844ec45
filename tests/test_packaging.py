"""Warpline as a package, the way cluster nodes get it (docs/batch.md): the environment of the
set-up imports it from any folder, and the wheel holds every module of engine and gui (and nothing
of the checkout's tests, tools or benchmarks) and works on its own."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.dask_processes import HIDE_WARPLINE, clean_env

ROOT = Path(__file__).resolve().parents[1]
IMPORT_WORK = "import engine, engine.batch.work, engine.cli, gui; print(engine.__file__)"


def test_the_environment_imports_warpline_from_any_folder(tmp_path):
    done = subprocess.run([sys.executable, "-c", IMPORT_WORK], cwd=tmp_path, env=clean_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{done.stderr}\n(tools/setup_env.sh installs Warpline with pip install -e .)"
    assert Path(done.stdout.strip()) == ROOT / "engine" / "__init__.py"


def test_the_wheel_holds_engine_and_gui_and_runs_on_its_own(tmp_path):
    # Built from a copy: setuptools leaves build/ and *.egg-info where it builds.
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    for package in ("engine", "gui"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(source)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("warpline-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {str(p.relative_to(ROOT)) for package in ("engine", "gui") for p in (ROOT / package).rglob("*.py")}
    assert modules and modules <= names
    assert not {n for n in names if n.split("/")[0] in ("tests", "tools", "bench", "samples", "main.py")}
    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    # Only the wheel's copy can be imported: the checkout and the editable install are hidden.
    code = HIDE_WARPLINE + f"sys.path.insert(0, {str(unpacked)!r})\n" + IMPORT_WORK
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=clean_env(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == unpacked / "engine" / "__init__.py"
