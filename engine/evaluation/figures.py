"""What a predicted time is made of, named once for every output.

A model predicts the time one SM needs for its share of the grid (the busiest SM: ⌈blocks / SMs⌉
blocks), with the block and warp launch overheads it models. A kernel measured with Nsight Compute
also pays a fixed launch cost (``device.kernel_launch_cycles`` of the profile, measured with empty
kernels; 0 where a profile has not measured it). So every prediction carries three figures:

* ``sm_cycles``      — the model's cycles for one SM's share;
* ``launch_cycles``  — the fixed launch cost added to it;
* ``kernel_cycles``  — ``sm_cycles + launch_cycles``: what a profiler measures for the kernel;

and ``microseconds`` = ``kernel_cycles`` at the profile's SM clock. The window, the CLI text, JSON
and CSV use these names (:data:`FIGURE_TITLES`) and these numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

FIGURE_TITLES = {
    "sm_cycles": "SM cycles",
    "launch_cycles": "launch cost",
    "kernel_cycles": "kernel cycles",
    "microseconds": "µs",
}
FIGURE_HELP = {
    "sm_cycles": "cycles of one SM running its share of the grid (the model's own prediction)",
    "launch_cycles": "fixed cost of a kernel launch on this GPU (profile device.kernel_launch_cycles)",
    "kernel_cycles": "SM cycles + launch cost: what Nsight Compute measures (gpc__cycles_elapsed.max)",
    "microseconds": "kernel cycles at the profile's SM clock",
}
# What CSV cells are rounded to: a tenth of a cycle, a nanosecond.
CYCLE_DIGITS = 1
MICROSECOND_DIGITS = 3


@dataclass(frozen=True)
class CycleFigures:
    sm_cycles: float
    launch_cycles: float
    clock_mhz: float

    @property
    def kernel_cycles(self) -> float:
        return self.sm_cycles + self.launch_cycles

    @property
    def microseconds(self) -> float | None:
        if self.clock_mhz <= 0 or not math.isfinite(self.kernel_cycles):
            return None
        return self.kernel_cycles / self.clock_mhz

    def as_dict(self, rounded: bool = False) -> dict[str, float | None]:
        """The four figures by their names; ``rounded`` to what they mean (CSV)."""
        values: dict[str, float | None] = {
            "sm_cycles": self.sm_cycles, "launch_cycles": self.launch_cycles,
            "kernel_cycles": self.kernel_cycles, "microseconds": self.microseconds,
        }
        if rounded:
            for key, value in values.items():
                if value is not None and math.isfinite(value):
                    values[key] = round(value, MICROSECOND_DIGITS if key == "microseconds" else CYCLE_DIGITS)
        return values


@dataclass(frozen=True)
class ModelResult:
    """One model's answer for one evaluation: its figures, or why it has none."""

    model: str                       # registry id
    figures: CycleFigures | None
    note: str = ""                   # what the figure rests on (the Many-BSP branch, the policy)
    error: str = ""                  # why there is no figure
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def kernel_cycles(self) -> float | None:
        return self.figures.kernel_cycles if self.figures is not None else None

    @property
    def sm_cycles(self) -> float | None:
        return self.figures.sm_cycles if self.figures is not None else None

    @property
    def microseconds(self) -> float | None:
        return self.figures.microseconds if self.figures is not None else None

    def error_percent(self, measured_kernel_cycles: float | None) -> float | None:
        """(kernel cycles − measured) / measured, in %: measured cycles include the launch cost."""
        cycles = self.kernel_cycles
        if measured_kernel_cycles is None or measured_kernel_cycles <= 0 or cycles is None:
            return None
        if not math.isfinite(cycles):
            return None
        return 100.0 * (cycles - measured_kernel_cycles) / measured_kernel_cycles
