"""``models``: every model of the registry with its family and what it is."""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from engine.cli.command_registry import Command
from engine.cli.options import emit
from engine.evaluation.figures import FIGURE_HELP, FIGURE_TITLES
from engine.evaluation.registry import models


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(ns: argparse.Namespace, renderer: Any = None) -> int:
    payload = {
        "models": [{"id": m.id, "title": m.title, "family": m.family, "explanation": m.explanation}
                   for m in models()],
        "figures": {k: {"title": FIGURE_TITLES[k], "meaning": v} for k, v in FIGURE_HELP.items()},
    }
    lines = []
    for m in models():
        lines.append(f"{m.id} — {m.title} ({m.family})")
        lines.extend(textwrap.wrap(m.explanation, 96, initial_indent="    ", subsequent_indent="    "))
    lines.append("")
    lines.append("Every model's figures:")
    for key, meaning in FIGURE_HELP.items():
        lines.append(f"    {key:<14} {meaning}")
    emit(ns, payload, "\n".join(lines))
    return 0


COMMAND = Command("models", "the models Warpline runs, and what each figure means", add_arguments, run)
