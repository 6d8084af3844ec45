"""``table``: the Many-BSP instruction table, BLOCK table or supersteps as CSV."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from engine.cli.command_registry import Command
from engine.cli.evaluating import evaluate_options
from engine.cli.options import add_input_options, add_model_options, inputs_from_args
from engine.errors import WarplineError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_input_options(parser)
    add_model_options(parser)
    parser.add_argument("--what", choices=("instructions", "block", "supersteps"), default="block")
    parser.add_argument("--csv", help="write to this file instead of standard output")


def run(ns: argparse.Namespace, renderer: Any = None) -> int:
    from engine.manybsp import export_block_table, export_instruction_table, export_supersteps

    ev = evaluate_options(ns, inputs_from_args(ns), only=["manybsp"], trace=False)
    result = ev.manybsp
    if result is None:
        raise WarplineError(ev.models["manybsp"].error or "Many-BSP could not be built")
    if ns.what == "instructions":
        text = export_instruction_table(result.rows, ns.csv)
    elif ns.what == "block":
        text = export_block_table(result.block, ns.csv)
    else:
        text = export_supersteps(result.level1, ns.csv)
    if ns.csv:
        print(f"wrote {ns.csv}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


COMMAND = Command("table", "Many-BSP tables as CSV", add_arguments, run)
