"""Headless command line: ``python main.py <command> FILE.ptx [options]``.

Each command is one module of this package (``cmd_*.py``) listed in
:data:`engine.cli.command_registry.MODULES`; every one that runs a model goes through the evaluation core
(:mod:`engine.evaluation`), so its figures are the window's. A ``WarplineError`` becomes a one-line
message and exit status 2; Ctrl+C exits with 130; anything else is a bug and keeps its traceback.
Commands that draw (PNG) get a renderer from the entry point (:mod:`engine.cli.render`).
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from typing import Any

from engine.batch.signals import exit_status
from engine.cli.command_registry import command_names, commands
from engine.errors import WarplineError
from engine.fileio import check_writable


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="main.py", description="Warpline: GPU kernel performance models")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in commands().values():
        # argparse %-formats a help line ("moved by ±X %" made `main.py --help` fail), not a description
        help_line = command.help.replace("%", "%%")
        command.add_arguments(sub.add_parser(command.name, help=help_line, description=command.help))
    return parser


def unknown_command(word: str) -> str:
    """The message for a first word that is no command: the closest command when there is one
    ("did you mean 'predict'?"), and the list."""
    close = difflib.get_close_matches(word.lower(), command_names(), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return (f"error: unknown command {word!r}{hint} (commands: {', '.join(command_names())}; "
            "or give a .ptx file)")


# The options of every command that name a file to write: checked before any work starts.
OUTPUT_OPTIONS = ("png", "svg", "pdf", "csv", "plot", "chrome_trace", "predictions_csv", "block_csv",
                  "supersteps_csv", "curves_csv", "curves_png", "curves_svg", "curves_pdf", "out",
                  "roofline_png", "roofline_svg", "roofline_pdf", "time_series_csv")


def _output_paths(ns: Any) -> list[str]:
    found: list[str] = []
    for name in OUTPUT_OPTIONS:
        value = getattr(ns, name, None)
        found.extend(value if isinstance(value, list) else [value] if isinstance(value, str) else [])
    return found


def main(argv: Sequence[str] | None = None, renderer: Any = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and not argv[0].startswith("-") and argv[0] not in command_names():
        print(unknown_command(argv[0]), file=sys.stderr)
        return 2
    parser = build_parser()
    ns = parser.parse_args(argv)
    try:
        check_writable(*_output_paths(ns))
        return commands()[ns.command].run(ns, renderer)
    except WarplineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:     # Ctrl+C, or SIGTERM where a command turns it into one
        signal_name = getattr(exc, "signal_name", "SIGINT")
        print(f"interrupted ({signal_name})", file=sys.stderr)
        return exit_status(signal_name)
    except BrokenPipeError:
        return 0


__all__ = ["build_parser", "command_names", "main", "unknown_command"]
