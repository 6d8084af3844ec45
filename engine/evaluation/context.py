"""What a model's predict function is handed: one kernel launch at one occupancy.

The context computes what several models share once (the analytical peers' aggregate figures,
GPUMech's interval profile) and keeps it for the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.errors import ModelError
from engine.pipeline.description import KernelDescription


@dataclass
class ModelContext:
    """``description``: the Pipeline-model description at ``resident_blocks`` blocks per SM.
    ``manybsp``: the Many-BSP result of the state (None when that model could not be built).
    ``simulation``: the state's own simulation when it is already done (the timeline's), reused
    rather than run again; None at the other points of an occupancy sweep, whose simulation solves
    its own DRAM load from ``traffic``."""

    description: KernelDescription | None
    resident_blocks: int
    policy: str = "lrr"
    manybsp: Any = None
    simulation: Any = None
    profile: Any = None
    issue_weights: dict[int, float] = field(default_factory=dict)   # SASS weight per instruction index
    unroll: dict[str, int] = field(default_factory=dict)            # SASS: "first-last" loop -> factor
    sass_positions: dict[int, tuple[int, ...]] = field(default_factory=dict)  # SASS copies' addresses
    traffic: Any = None   # the launch's KernelTraffic at this occupancy (its DRAM load: loaded latency)
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    def shared(self, key: str, compute: Any) -> Any:
        """``compute()`` once per context under ``key`` (for figures several models read)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def require_description(self) -> KernelDescription:
        if self.description is None:
            raise ModelError("no Pipeline-model description (the kernel could not be described)")
        return self.description
