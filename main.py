#!/usr/bin/env python3
"""Warpline entry point.

    python main.py [FILE.ptx]                 open the app (the bundled hotspot sample if no file)
    python main.py info|predict|table|... FILE.ptx [options]   headless commands (see --help)
    python main.py --install-desktop | --uninstall-desktop     register the .ptx file type
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from engine.cli import COMMANDS, build_parser

    build_parser()  # registers every sub-command
    if argv and argv[0] in COMMANDS:
        from engine.cli import main as cli_main
        return cli_main(argv)
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        build_parser().print_help()
        return 0
    if argv and argv[0] in ("--install-desktop", "--uninstall-desktop"):
        from engine.desktop import install_desktop, uninstall_desktop
        action = install_desktop if argv[0] == "--install-desktop" else uninstall_desktop
        for line in action():
            print(line)
        return 0
    from gui.app import run_app
    return run_app(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
