"""No figure rests on an unknown input without saying so: every kernel of the samples and of the
parser corpus, in the window's results, ``predict --json`` (and its text) and the exported title.

Whether a kernel's figures rest on an unknown input is judged here apart from the engine's own
list of assumptions, from what the launch leaves unsaid, with the evaluation as it was before
inputs were supplied: a default launch; a parameter the kernel compares, divides by or multiplies
by another value that the launch gives no value; a loop whose trip count the launch's values do
not fix; an address computed from loaded data the launch declares nothing about; an access whose
pattern cannot be computed. Each such kernel must carry the mark everywhere its figures are
shown. (The converse, a marked kernel without such an input, is allowed: a stand-in that bounds
nothing still counts as a guess.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from engine.analysis import analyze_kernel  # noqa: E402
from engine.evaluation import Evaluator  # noqa: E402
from engine.evaluation.caveats import MARK, figure_caveats  # noqa: E402
from engine.evaluation.prediction_report import predictions_payload, predictions_text  # noqa: E402
from engine.inputs import launch_is_assumed, resolve_inputs  # noqa: E402
from engine.launch import argument_index  # noqa: E402
from engine.mechanisms import without  # noqa: E402
from engine.memory import analyze_memory  # noqa: E402
from engine.ptx import load_ptx  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted([*(ROOT / "samples").glob("**/*.ptx"), *(ROOT / "tests" / "corpus").glob("*/*.ptx")])
_VALUE_USES = {"setp", "rem", "div", "min", "max", "mul", "mad"}


def unknown_inputs(inputs) -> list[str]:  # noqa: ANN001
    """What the launch leaves unsaid that the figures depend on, judged without engine.conventions."""
    found = []
    launch = inputs.launch
    if launch_is_assumed(inputs.launch_source):
        found.append("default launch")
    function = inputs.function
    given = {argument_index(k, function.params) for k in launch.args}
    analysis = analyze_kernel(function, launch, inputs.module)
    names = {p.name: i for i, p in enumerate(function.params)}
    for instr in function.instructions:
        if instr.opcode != "ld" or "param" not in instr.modifiers or not instr.dests:
            continue
        address = next((o for o in instr.operands if o.kind == "address"), None)
        index = names.get(address.base.name) if address is not None and address.base is not None else None
        if index is None or index in given or function.params[index].type.startswith("f"):
            continue
        # follow the loaded value through moves and conversions to what computes with it
        frontier, seen = [instr.index], {instr.index}
        while frontier:
            producer = frontier.pop()
            for consumer in (function.instructions[c] for c in analysis.defuse.consumers(producer)):
                if consumer.opcode in ("mov", "cvt") and consumer.index not in seen:
                    seen.add(consumer.index)
                    frontier.append(consumer.index)
                elif consumer.opcode in _VALUE_USES and not (consumer.opcode in ("mul", "mad") and any(
                        o.kind == "immediate" for o in consumer.operands[1:3])):
                    found.append(f"argument {index} used by {consumer.opcode}")
                    frontier = []
                    break
    if any(loop.trip_count.value is None and loop.key not in launch.trip_overrides for loop in analysis.loop_info):
        found.append("unknown trip count")
    memory = analyze_memory(analysis, launch, inputs.module)
    for access in memory.accesses:
        if access.data_dependent and not launch.data:
            found.append(f"gather at line {access.line}")
        if access.space.value == "global" and access.unknown_reason and access.sectors_per_request is None \
                and access.issue_share != 0.0:
            found.append(f"no pattern at line {access.line}")
    return found


@pytest.fixture(scope="module")
def results_panel(qapp):
    from gui.panels.results import ResultsPanel
    from gui.session import Session

    session = Session()
    panel = ResultsPanel(session)
    yield panel
    panel.deleteLater()
    session.shutdown()


def test_every_figure_resting_on_an_unknown_input_is_marked(results_panel):
    from gui.gantt.export_png import title_line

    evaluator = Evaluator()
    checked = unknown = 0
    missed: list[str] = []
    # every second kernel in file order (the samples' and the corpus's alike): half of the 510
    # keep every kind of unknown input and the test within two minutes on two cores
    kernels = [(path, module, kernel) for path in FILES for module in [load_ptx(path)]
               for kernel in module.kernels][::2]
    for path, module, kernel in kernels:
        inputs = resolve_inputs(path, module=module, kernel=kernel.name, use_ptxas=False)
        # the marks come from the inputs, not from how the warps' paths are found: the static
        # walk (no executed sample, no ptxas) keeps each kernel to a fraction of a second
        with without(["sass", "execution"]):
            ev = evaluator.evaluate(inputs, only=["pipeline"], trace=False, max_warp_instructions=20_000)
        checked += 1
        why = unknown_inputs(inputs)
        if not why:
            continue
        unknown += 1
        where = f"{path.relative_to(ROOT)}:{kernel.name[:50]} ({', '.join(why[:3])})"
        caveats = figure_caveats(ev)
        payload = predictions_payload(ev)
        results_panel.show_models(ev)
        cells = [results_panel.table.item(row, col).text() for row in range(results_panel.table.rowCount())
                 for col in (1, 2, 3) if ev.models[list(ev.models)[row]].figures is not None]
        checks = {
            "caveats": caveats.guessed,
            "predict --json": payload["caveats"]["rests_on_assumptions"] and all(
                m["rests_on_assumptions"] for m in payload["models"].values() if m["kernel_cycles"] is not None),
            "predict first line": predictions_text(ev).startswith(MARK),
            "exported title": MARK in title_line(ev),
            "window results": all(c.startswith(MARK) for c in cells) and MARK in results_panel.headline.text(),
        }
        missed.extend(f"{where}: not marked in {name}" for name, ok in checks.items() if not ok)
    print(f"{checked} kernels, {unknown} with an unknown input, {len(missed)} figures unmarked")
    assert checked >= 250, checked
    assert unknown >= 150, unknown
    assert not missed, "\n".join(missed[:20])
