"""``validate``: every model against the cycles measured on the sample launches (MAPE)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from engine.cli.command_registry import Command
from engine.cli.options import emit
from engine.cli.render import require_renderer
from engine.mechanisms import MECHANISMS, without


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--suite", choices=("v1", "v2", "v2x", "v3"), default="v1",
                        help="v1: the samples (H100); v2: 54 application-like kernels (H100 and H200, "
                             "a held-out third reported apart); v2x: 12 kernels supplementing v2's tuning part "
                             "(H100 and H200, a third held out); v3: 51 kernels written as applications write "
                             "them, 6 compiled by Triton (a third held out; says so while not yet measured)")
    parser.add_argument("--profile", help="GPU profile of the measurements (default h100; v2 also h200)")
    parser.add_argument("--measurements", nargs="*", help="measurement folders (default: the suite's for the profile)")
    parser.add_argument("--only", nargs="*", help="configurations whose key contains one of these")
    parser.add_argument("--plot", help="write predicted against measured as a PNG")
    parser.add_argument("--without", action="append", default=[], metavar="MECHANISM",
                        help="switch a modelling mechanism off (repeatable): " + ", ".join(MECHANISMS))
    parser.add_argument("--json", action="store_true")


def run(ns: argparse.Namespace, renderer: Any = None) -> int:
    from engine.validation import format_validation, run_validation

    if ns.plot:
        renderer = require_renderer(renderer, "--plot")
    runs = [Path(p) for p in ns.measurements] if ns.measurements else None
    only = (lambda key: any(part in key for part in ns.only)) if ns.only else None

    def progress(i: int, n: int, key: str) -> None:
        if not ns.json:
            print(f"\r[{i + 1}/{n}] {key:<50}", end="", file=sys.stderr, flush=True)

    try:
        with without(ns.without):
            result = run_validation(ns.profile or "h100", runs, only=only, progress=progress, suite=ns.suite)
    finally:
        # the progress line is cleared however the run ends (Ctrl+C's "interrupted" included)
        if not ns.json:
            print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
    payload = {
        "profile": result.profile,
        "figure": "kernel_cycles",
        "suite": ns.suite,
        "without": sorted(ns.without),
        "mape_percent": {model: value for model, value in result.ranking()},
        "mape_percent_tuning": {m: result.mape(m, result.part(False)) for m, _ in result.ranking()},
        "mape_percent_held_out": {m: result.mape(m, result.part(True)) for m, _ in result.ranking()},
        "rows": [r.as_dict() for r in result.rows],
    }
    if ns.plot:
        renderer.validation_png(result, ns.plot)
        print(f"wrote {ns.plot}", file=sys.stderr)
    emit(ns, payload, format_validation(result))
    return 0


COMMAND = Command("validate", "every model against the measured sample launches (MAPE)", add_arguments, run)
