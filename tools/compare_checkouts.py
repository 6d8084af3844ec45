"""Behaviour unchanged by a refactor: the figures and traces of two checkouts, byte for byte.

For every ``samples/*.launch.toml`` (and, with ``--v2``, the first few of ``samples/v2``) both
checkouts run ``main.py predict --json`` and ``main.py trace --csv`` under LRR and GTO; the
outputs are kept under ``OUT/base`` and ``OUT/new`` and compared byte for byte. Each checkout runs
its own code (``PYTHONPATH`` and the working folder are its root) with one Python, so only the
code differs. The exit status is 1 when any output differs.

    .venv/bin/python tools/compare_checkouts.py BASE_ROOT NEW_ROOT OUT [--v2 N]

A base copy of a commit: ``git archive COMMIT | tar -x -C /tmp/base``. Run with ``HOME`` set to a
scratch folder so that the checkouts' caches do not touch the user's.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tomllib
from pathlib import Path


def launch_files(root: Path, v2: int) -> list[Path]:
    files = sorted((root / "samples").glob("*.launch.toml"))
    files += sorted((root / "samples" / "v2").glob("*.launch.toml"))[:v2]
    return [f for f in files if "ptx" in tomllib.loads(f.read_text(encoding="utf-8"))]


def commands(root: Path, launch: Path, out: Path) -> list[tuple[list[str], Path | None]]:
    """(arguments of main.py, the file its standard output goes to) per output of one sample."""
    ptx = str((launch.parent / tomllib.loads(launch.read_text(encoding="utf-8"))["ptx"]).relative_to(root))
    name = launch.name.removesuffix(".launch.toml")
    where = ["--launch", str(launch.relative_to(root))]
    return [
        (["predict", ptx, *where, "--json"], out / f"{name}.predict.json"),
        (["trace", ptx, *where, "--csv", str(out / f"{name}.lrr.csv"), "--json"], out / f"{name}.trace.json"),
        (["trace", ptx, *where, "--policy", "gto", "--csv", str(out / f"{name}.gto.csv")], None),
    ]


def run_checkout(root: Path, out: Path, v2: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(root)}
    for launch in launch_files(root, v2):
        for arguments, stdout in commands(root, launch, out):
            run = subprocess.run([sys.executable, "main.py", *arguments], cwd=root, env=env,
                                 capture_output=True, text=True, check=False)
            if stdout is not None:
                stdout.write_text(run.stdout, encoding="utf-8")
            if run.returncode != 0:
                (out / f"{launch.name}.{arguments[0]}.err").write_text(run.stderr, encoding="utf-8")


def differing(base: Path, new: Path) -> tuple[list[str], list[str]]:
    """(files that differ, files only one side wrote)."""
    names_base = {p.name for p in base.iterdir()}
    names_new = {p.name for p in new.iterdir()}
    common = sorted(names_base & names_new)
    _, mismatch, errors = filecmp.cmpfiles(base, new, common, shallow=False)
    return sorted(mismatch + errors), sorted(names_base ^ names_new)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--v2", type=int, default=0, metavar="N", help="also the first N samples of samples/v2")
    args = parser.parse_args(argv)
    for side, root in (("base", args.base), ("new", args.new)):
        run_checkout(root.resolve(), (args.out / side).resolve(), args.v2)
    mismatch, one_sided = differing(args.out / "base", args.out / "new")
    compared = len(list((args.out / "new").iterdir()))
    print(f"{compared} outputs compared; {len(mismatch)} differ, {len(one_sided)} on one side only")
    for name in mismatch:
        print(f"differs: {name}")
    for name in one_sided:
        print(f"one side only: {name}")
    return 1 if mismatch or one_sided else 0


if __name__ == "__main__":
    raise SystemExit(main())
