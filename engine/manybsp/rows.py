"""Plain-data inputs of the Many-BSP model: one instruction row (Table X-1), the BLOCK-table row
(Table X-2) and the 26 parameters of a case.

These types carry no behaviour beyond small conveniences, so the GUI can show and edit them and a
session can store them. Column numbers follow 000: FU1 = SPs, FU2 = DPU, FU3 = SFU, FU4 = LDST.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from engine.ptx.parsed_module import CudaLocation, SourceLocation

FU_NAMES: dict[int, str] = {1: "SPs", 2: "DPU", 3: "SFU", 4: "LDST"}
FU_BY_NAME: dict[str, int] = {name: column for column, name in FU_NAMES.items()}



@dataclass(frozen=True)
class InstructionRow:
    """One row of the instruction table (Table X-1): one static PTX instruction.

    ``index`` is the 1-based instruction number used by u/p and by superstep ranges. ``fu`` is the
    BLOCK column (1..4) or None for a barrier (000 prints ``MI`` there). ``n_ma`` is the number of
    global-memory transactions per warp access (0 for anything that is not a global access).
    ``producers`` are the earlier rows whose results this one reads (def-use), which is what decides
    where a level-2 superstep must end.
    """

    index: int
    text: str
    opcode: str
    fu: int | None
    n_fu: int
    T: float
    n_ma: int
    lat_comp: float
    lat_comm: float
    is_barrier: bool
    is_global_access: bool
    u: int
    d: int
    p: int
    producers: tuple[int, ...] = ()
    is_branch: bool = False
    labels: tuple[str, ...] = ()
    location: SourceLocation | None = None
    cuda_location: CudaLocation | None = None
    is_default_cost: bool = False   # latency taken from the profile's default, not a measured entry
    cost_source: str = ""
    loop: str | None = None         # key (header label) of the innermost loop holding the row


@dataclass(frozen=True)
class FuCell:
    """One FU cell of the BLOCK table. ``16+1`` is ``FuCell(16, 1)``, a plain ``2`` is ``FuCell(0, 2)``.

    Kept as two parts because 000 prints the exposed latency separately from the pipeline occupancy
    of the remaining warps; the equations use the sum.
    """

    latency: float = 0.0
    occupancy: float = 0.0

    @property
    def value(self) -> float:
        return self.latency + self.occupancy

    @property
    def is_full(self) -> bool:
        return self.latency > 0

    def text(self) -> str:
        if self.latency:
            return f"{_num(self.latency)}+{_num(self.occupancy)}"
        return _num(self.occupancy)


def _num(x: float) -> str:
    """Whole numbers without a trailing ``.0`` (the tables print integers)."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True)
class BlockRow:
    """One row of the BLOCK table (Table X-2): the cost of one instruction for the ``w`` warps of one
    warp scheduler. ``issue`` None is a blank cell (dual issue, costs 0). ``fu`` maps column -> cell."""

    index: int
    op: str
    issue: float | None
    fu: dict[int, FuCell]
    warp_over_T: float | None
    comm: float
    ovh: float
    sync: float
    u: int
    d: int
    p: int

    def fu_value(self, column: int) -> float:
        cell = self.fu.get(column)
        return cell.value if cell is not None else 0.0

    @property
    def issue_value(self) -> float:
        return self.issue if self.issue is not None else 0.0


@dataclass(frozen=True)
class ManyBspParams:
    """The parameter block of a case (Table 1-8). Names follow 000; ``mem_lat`` is G2.

    ``mu`` is the device constant of eq. 24 (000 gives its value per GPU without defining it).
    ``shmem_size`` and ``shmem_per_block`` are bytes; a 0-byte request sets no limit on rho.
    """

    n_b: int
    n_t: int
    n_SM: int
    n_ws: int
    warp_size: int
    issue_cycle: float
    mem_lat: float
    warp_lnch_ovh: float
    block_lnch_ovh: float
    mu: float
    l_c: float
    l_m: float
    max_thread_per_sm: int
    n_reg: int
    reg_per_thread: int
    shmem_size: int
    shmem_per_block: int
    d: int = 0
    n_c: int = 0
    h: float = 0
    l: float = 0
    l_b: float = 0
    n_du: int = 0
    n_fu: int = 4
    g0: float = 0
    g1: float = 0
    g2: float = 0

    @property
    def w(self) -> int:
        """Warps per warp scheduler, eq. (6): ceil(n_t / (warp_size * n_ws))."""
        per = self.warp_size * self.n_ws
        return max(1, -(-self.n_t // per)) if per > 0 else 1

    @classmethod
    def from_dict(cls, values: dict[str, float]) -> ManyBspParams:
        """Build from a case's ``params`` dict; unknown keys are ignored, missing optional ones default."""
        names = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in values.items() if k in names}
        for f in fields(cls):
            if f.name in kwargs and f.type in ("int",):
                kwargs[f.name] = int(kwargs[f.name])
        return cls(**kwargs)

    def to_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Level1Spec:
    """Where a level-1 superstep lies (1-based inclusive instruction range) and how often it runs.

    ``iterations_known`` False means the trip count could not be derived and 1 was assumed: the result
    carries a warning and the GUI flags the value; it is never silent.
    """

    start: int
    end: int
    iterations: int = 1
    iterations_known: bool = True
    reason: str = ""
    loop_header: str | None = None
    extra: dict[str, str] = field(default_factory=dict)
    # Loops whose trip count differs per thread: the iterations of the launch's slowest warp
    # (``iterations`` is the mean over warps). None: every warp runs ``iterations``.
    slowest: int | None = None
