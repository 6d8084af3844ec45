#!/usr/bin/env python3
"""Warpline entry point.

    python main.py [FILE.ptx]                 open the app (the bundled hotspot sample if no file)
    python main.py info|predict|table|... FILE.ptx [options]   headless commands (see --help)
    python main.py --install-desktop | --uninstall-desktop     register the .ptx file type
"""

from __future__ import annotations

import sys
from pathlib import Path

_ran_headless = False          # a headless command ran (see _leave_objects_to_exit)


def _is_file_argument(word: str) -> bool:
    return word.lower().endswith(".ptx") or word.lower().endswith(".json") or Path(word).exists()


def main(argv: list[str]) -> int:
    from engine.cli.command_registry import command_names

    if argv and argv[0] in command_names():
        from engine.cli import main as cli_main
        from gui.render import QtRenderer

        global _ran_headless
        _ran_headless = True

        # The CLI layer never imports Qt; commands that draw get this renderer.
        return cli_main(argv, renderer=QtRenderer())
    if argv and argv[0] in ("-h", "--help"):
        from engine.cli import build_parser

        print(__doc__.strip())
        build_parser().print_help()
        return 0
    if argv and argv[0] in ("--install-desktop", "--uninstall-desktop"):
        from engine.desktop import install_desktop, uninstall_desktop
        action = install_desktop if argv[0] == "--install-desktop" else uninstall_desktop
        for line in action():
            print(line)
        return 0
    if argv and not argv[0].startswith("-") and not _is_file_argument(argv[0]):
        from engine.cli import unknown_command

        print(unknown_command(argv[0]), file=sys.stderr)
        return 2
    from gui.app import run_app
    return run_app(argv)


def run(argv: list[str]) -> int:
    """:func:`main`, and Ctrl+C at any point (while Python is still importing the engine, say)
    ends with exit status 130 and one line, never a traceback."""
    try:
        return main(argv)
    except KeyboardInterrupt:
        try:
            print("interrupted", file=sys.stderr)
        except (KeyboardInterrupt, OSError):
            pass
        return 130


def _leave_objects_to_exit() -> None:
    """After a headless command, the objects still alive are left to the process's exit: the
    interpreter's last collections would walk every one of them (after a 10^5-instruction
    ``predict``, 3.8 million: 2.5 s) to free nothing the exit does not. (Not after the window:
    its Qt objects are destroyed in the order the collector finds them.) Imports nothing: a
    Ctrl+C may have stopped the engine's import half way."""
    if _ran_headless:
        import gc

        gc.freeze()


if __name__ == "__main__":
    status = run(sys.argv[1:])
    _leave_objects_to_exit()
    sys.exit(status)
