"""The command registry: one :class:`Command` per sub-command module, listed in :data:`MODULES`.

Adding a command is one module under ``engine/cli/`` that defines ``COMMAND`` plus one line in
:data:`MODULES`.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Any], int]    # (options, renderer) -> exit status


# Sub-command modules, in the order ``--help`` lists them.
MODULES = (
    "engine.cli.cmd_info",
    "engine.cli.cmd_predict",
    "engine.cli.cmd_table",
    "engine.cli.cmd_sweep",
    "engine.cli.cmd_trace",
    "engine.cli.cmd_export",
    "engine.cli.cmd_sensitivity",
    "engine.cli.cmd_diff",
    "engine.cli.cmd_validate",
    "engine.cli.cmd_models",
    "engine.cli.cmd_batch",
)


def commands() -> dict[str, Command]:
    out: dict[str, Command] = {}
    for name in MODULES:
        command = importlib.import_module(name).COMMAND
        out[command.name] = command
    return out


def command_names() -> list[str]:
    """The names, without importing the command modules' dependencies."""
    return [m.rsplit(".", 1)[1].removeprefix("cmd_") for m in MODULES]
