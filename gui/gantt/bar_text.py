"""What the chart's tooltip says of a bar: an instruction's text, unit, warp, block and cycles,
or a stall's cause with the instruction it waits to issue and the one that holds it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.pipeline.trace import STALL_CAUSES, Trace
from engine.stall_links import StallLinks

if TYPE_CHECKING:
    from gui.gantt.widget import GanttView


class BarText:
    """Tooltip texts of the bars of the chart's trace."""

    def __init__(self, chart: GanttView) -> None:
        self._chart = chart
        self._names: list[str] = []               # text per static instruction
        self._links: StallLinks | None = None     # what each stall waits on, made on the first hover

    def adopt(self, names: list[str]) -> None:
        """The instruction texts of a new trace (the stall links are made again on the next hover)."""
        self._names = names
        self._links = None

    def name_of(self, instr: int) -> str:
        """Instruction text with parameter symbols shortened (they repeat the mangled kernel name)."""
        text = self._names[instr]
        prefix = self._chart.param_prefix
        return text.replace(prefix, "param_") if prefix else text

    def _stall_links(self, trace: Trace) -> StallLinks:
        """The stall links of ``trace`` (the chart's), made again when the chart shows another trace."""
        if self._links is None or self._links.trace is not trace:
            self._links = StallLinks(trace)
        return self._links

    def waited_instruction(self, stall_row: int) -> int | None:
        """The 0-based instruction a stall waits on: its warp's next issue at or after the stall's
        end (None when the warp issues nothing more, e.g. a finished warp); engine.stall_links,
        as the timeline CSV and the Chrome trace name it."""
        trace = self._chart.trace
        if trace is None:
            return None
        k = int(self._stall_links(trace).waits_for([stall_row])[0])
        return k if k >= 0 else None

    def holding_instruction(self, stall_row: int) -> int | None:
        """The 0-based instruction whose result (or barrier) holds a stall, or None."""
        trace = self._chart.trace
        if trace is None:
            return None
        k = int(self._stall_links(trace).held_by([stall_row])[0])
        return k if k >= 0 else None

    def describe(self, lane_index: int, bar: int) -> str:
        """Tooltip text of one bar."""
        chart = self._chart
        layout, trace = chart.layout_data, chart.trace
        assert layout is not None and trace is not None
        span = chart.time_axis.span_text
        lane = layout.lanes[lane_index]
        row = int(lane.row[bar])
        if lane.source == "stalls":
            rec = trace.stalls[row]
            start, end = float(rec["start"]), float(rec["end"])
            waited = self.waited_instruction(row)
            target = (f"\nwaits to issue #{waited + 1}: {self.name_of(waited)}" if waited is not None else "")
            held = self.holding_instruction(row)
            if held is not None:
                target += f"\nheld by #{held + 1}: {self.name_of(held)}"
            return (f"stall: {STALL_CAUSES[int(rec['cause'])].replace('_', ' ')} · warp {int(rec['warp'])}"
                    f"{target}\ncycles {start:g} → {end:g} ({span(end - start)})")
        rec = trace.issues[row]
        instr = int(rec["instr"])
        issue, done = float(rec["issue"]), float(rec["complete"])
        sub = layout.subsystems[int(rec["subsystem"])]
        return (f"{self.name_of(instr)}\ninstruction #{instr + 1} · {sub}\n"
                f"warp {int(rec['warp'])} · block {int(rec['block'])}\n"
                f"issue {issue:g} → complete {done:g} ({span(done - issue)})")
