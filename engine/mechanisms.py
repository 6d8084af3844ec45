"""The simulator's modelling mechanisms: one typed configuration, each switch documented once.

Every mechanism is a field of :class:`MechanismConfig` (``True``: on), with its description and
the mechanisms it builds on (``requires``) in the field's metadata; :data:`REGISTRY` is the one
list they come from. A configuration is validated when it is made: a name that is not a field is
refused with the known ones listed, and switching one off switches off every mechanism that
requires it (:meth:`MechanismConfig.without`).

The evaluator takes a configuration explicitly (``Evaluator.evaluate(..., mechanisms=...)``) and
keeps it in every cache key; the code that models reads it through :func:`enabled`, which looks at
the configuration in effect for the current evaluation (:func:`using`). ``validate --without
NAME`` and ``bench/ablation.py`` measure what each contributes (``docs/validation.md``).

Rules the static analysis used to describe memory behaviour with (per-thread and simulated trip
counts, per-warp branch outcomes, stand-in gather indices, L1 reuse within a block, L2 footprints
and reuse distances, 64-byte DRAM fetches, partial-sector fills, write-back, scattered stores,
texel addresses ...) are no longer switches: the run of the sampled warps and the cache
simulation (mechanism ``execution``) answer those questions for every kernel they can run, and
the static analysis keeps those rules, fixed, as the estimate for the kernels they cannot.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, make_dataclass, replace
from typing import Any

from engine.errors import WarplineError


@dataclass(frozen=True)
class Mechanism:
    """One modelling mechanism: its name (the configuration field), what it models, and the
    mechanisms it only makes sense with."""

    name: str
    description: str
    requires: tuple[str, ...] = ()


REGISTRY: tuple[Mechanism, ...] = (
    Mechanism("execution",
              "the sampled warps are executed (engine.execution) and their requests replayed through simulated "
              "caches (engine.caches): access patterns, paths, trip counts and hit levels come from the run; "
              "without: from the static analysis and its fixed rules"),
    Mechanism("schedule",
              "each basic block issues in a latency-driven order (loads ahead of their uses), as ptxas schedules "
              "it, instead of the order the PTX was written in"),
    Mechanism("grid_share",
              "a grid with fewer blocks than SMs gets a larger share of L2 and DRAM bandwidth per SM"),
    Mechanism("constant_serialisation",
              "a constant-memory load whose lanes read distinct addresses serialises: one constant-cache access "
              "per distinct address of the warp; one whose lanes share an address costs the measured rate of an "
              "LDC"),
    Mechanism("sass",
              "instructions ptxas folds away are not issued and merged ones (four loads in one LDS.128, an "
              "unrolled loop's branch) cost their share of λ, from the SASS ptxas makes of the kernel"),
    Mechanism("sass_order",
              "instructions free to issue go in the order ptxas put them in the SASS (where it made SASS of "
              "them) rather than longest latency path first", requires=("schedule", "sass")),
    Mechanism("manybsp_dataflow",
              "Many-BSP*: one warp's path goes through its rows' dependences, each row once the rows before it "
              "have issued and its operands are there (ptxas hoists loads to where their addresses are known), "
              "not through 000's superstep order"),
    Mechanism("half_pipe_split",
              "packed half-precision arithmetic whose SASS uses one of its two pipes (plain HFMA2 or HFMA2.MMA) "
              "more than the other runs at that pipe's rate; the profile's λ was measured with ptxas "
              "alternating them", requires=("sass",)),
    Mechanism("atomic_serialisation",
              "atomics to one address serialise (per lane in shared memory, across the GPU in global memory)"),
    Mechanism("renamed_copies",
              "the copies of a loop body that ptxas unrolled have registers of their own, so a later copy's "
              "loads issue before an earlier copy's consumers (without: they wait for them, as the PTX's reused "
              "registers say)", requires=("sass",)),
    Mechanism("cas_retry",
              "an atomic that ptxas makes into a compare-and-swap retry loop (a float add in shared memory) "
              "takes one pass per lane of every warp updating the same word before it (without: one pass, as a "
              "native atomic)", requires=("sass",)),
    Mechanism("local_memory",
              "per-thread local memory (arrays ptxas cannot keep in registers) costs what was measured for its "
              "case: a load at the L1 rate while the launch's local data fits in L1 (the measured rate beyond "
              "it otherwise), a store at the measured write-through rate, higher when only some lanes store "
              "(without: every local access costs local_lam)"),
    Mechanism("async_copy_queues",
              "an asynchronous copy (cp.async: global to shared memory, LDGSTS) keeps the LSU pipe busy for its "
              "L1 time only and queues at L2 and at DRAM, each level serving the SM's copies in turn for its own "
              "time; the warp goes on issuing and cp.async.wait_group waits for the data (without: the copy holds "
              "the memory pipe for the slowest level's time, as a load does)"),
    Mechanism("inflight_hits",
              "an L1 hit on sectors another warp of the block missed in the same segment of the run waits for "
              "that fill: it takes the latency of the level that fills the line (L2 or DRAM, from the cache "
              "replay; not where the warp misses L1 itself in that segment, as it waits for that anyway), not L1's; "
              "and a load every warp of the SM makes from the same address at once (no thread or block index in "
              "it) waits so for every hit"),
    Mechanism("matrix_fragments",
              "wmma loads and stores are analysed as the 32 pieces of the fragment they move (16 rows of 32 "
              "bytes, ldm elements apart, for a 16x16 half-precision fragment): their sectors, lines and bank "
              "conflicts, instead of the profile's cost of one access"),
    Mechanism("shared_phases",
              "a shared-memory request of 8- or 16-byte accesses is served 128 bytes at a time (a half or a "
              "quarter warp per phase): its wavefronts are the sum of its phases' conflict degrees, not the "
              "whole warp's"),
    Mechanism("line_latency",
              "a global load whose lanes touch several lines waits for the last of them: the latency measured "
              "per level for 1-32 lines (the profile's [pipeline.line_latency]), instead of its lines streaming "
              "at the request's own rate"),
    Mechanism("sass_issue_slots",
              "an instruction takes as many of the SM's issue slots per cycle as the SASS instructions it "
              "becomes (2 for a PTX instruction ptxas expands into two, a quarter for each of four loads merged "
              "into one)", requires=("sass",)),
    Mechanism("sass_stall_counts",
              "after each instruction a warp waits the stall counts ptxas wrote into the control fields of its "
              "SASS instructions (fixed-latency results, which the hardware does not interlock: dependent "
              "arithmetic, a predicate before its branch, a barrier) before it issues its next one; without: "
              "one cycle, the fixed-latency waits coming only from the producers' Λ", requires=("sass",)),
    Mechanism("loaded_dram_latency",
              "a load that goes to DRAM waits what was measured at the share of peak DRAM bandwidth the launch "
              "draws (the profile's [pipeline.dram_loaded] curve), solved with the simulated time: a busier "
              "DRAM answers later"),
    Mechanism("scattered_dram_load",
              "the DRAM bytes a gather reads (one sector per 64-byte fetch) load DRAM as measured beside "
              "gathering warps (the profile's [pipeline.dram_loaded_scattered]), the rest as beside streaming "
              "ones; and they move at most at the bandwidth where that curve saturates (its last share of "
              "the streaming peak)", requires=("loaded_dram_latency",)),
    Mechanism("mixed_dram_load",
              "a launch that writes part of its DRAM bytes reads the curve measured beside streams that write "
              "that share (the profile's [[pipeline.dram_loaded_mixed]]): at the same bandwidth its loads wait "
              "longer, and DRAM saturates sooner, than beside reads alone", requires=("loaded_dram_latency",)),
    Mechanism("block_turnaround",
              "a block slot starts its next block the measured turnaround after the block's last result (the "
              "profile's [pipeline.blocks]), not block_lnch_ovh, which is the SM-wide rate of launches "
              "(without: block_lnch_ovh)"),
    Mechanism("launch_queue",
              "an SM starts its blocks one at a time, at the measured serial rate (the profile's block_lnch_ovh "
              "+ warp_lnch_ovh per warp a scheduler gets): a grid of short blocks waits for its launches "
              "(without: each freed block slot starts its next block on its own)"),
    Mechanism("atomic_units",
              "global atomics issue to L2's atomic units, a subsystem of their own, instead of the SM's memory "
              "pipe: the loads of other warps do not queue behind them; one whose old value the warp reads "
              "still waits for it"),
    Mechanism("l1_banks",
              "an L1-hit request takes a wavefront per distinct word its busiest data bank serves, and a quarter "
              "cycle per line for its tags (lanes spread over the banks); without: a wavefront per line, as "
              "when every lane's word is in the same bank"),
)
_BY_NAME = {m.name: m for m in REGISTRY}

# the descriptions by name, for help texts and reports
MECHANISMS: dict[str, str] = {m.name: m.description for m in REGISTRY}


def _without(self: Any, names: Iterable[str]) -> Any:
    """A copy with ``names`` switched off, and every mechanism that requires one of them."""
    off = set(check_names(names))
    changed = True
    while changed:
        changed = False
        for m in REGISTRY:
            if m.name not in off and any(r in off for r in m.requires):
                off.add(m.name)
                changed = True
    return replace(self, **dict.fromkeys(off, False))


def _off(self: Any) -> frozenset[str]:
    """The names switched off."""
    return frozenset(f.name for f in fields(self) if not getattr(self, f.name))


def _post_init(self: Any) -> None:
    for f in fields(self):
        if not isinstance(getattr(self, f.name), bool):
            raise WarplineError(f"mechanism {f.name} must be true or false, not {getattr(self, f.name)!r}")
    for m in REGISTRY:
        if getattr(self, m.name):
            missing = [r for r in m.requires if not getattr(self, r)]
            if missing:
                raise WarplineError(f"mechanism {m.name} requires {', '.join(missing)}, which is off")


MechanismConfig = make_dataclass(
    "MechanismConfig",
    [(m.name, bool, field(default=True, metadata={"description": m.description, "requires": m.requires}))
     for m in REGISTRY],
    frozen=True,
    namespace={"without": _without, "off": property(_off), "__post_init__": _post_init,
               "__doc__": "Which modelling mechanisms are on: one field per mechanism (see REGISTRY)."},
)
MechanismConfig.__module__ = __name__

ALL_ON = MechanismConfig()
_CURRENT: ContextVar[Any] = ContextVar("warpline_mechanisms", default=ALL_ON)


def current() -> Any:
    """The :class:`MechanismConfig` in effect."""
    return _CURRENT.get()


def enabled(name: str) -> bool:
    """Whether mechanism ``name`` is on in the configuration in effect; an unknown name is a bug."""
    if name not in _BY_NAME:
        raise KeyError(f"no mechanism {name!r}")
    return bool(getattr(_CURRENT.get(), name))


def check_names(names: Iterable[str]) -> frozenset[str]:
    """The names, refused with the valid ones listed when one is unknown."""
    names = frozenset(names)
    unknown = sorted(names - set(_BY_NAME))
    if unknown:
        raise WarplineError(f"unknown mechanism {', '.join(unknown)}; known: {', '.join(_BY_NAME)}")
    return names


@contextmanager
def using(config: Any) -> Iterator[None]:
    """Run the body with ``config`` (a :class:`MechanismConfig`) in effect."""
    if not isinstance(config, MechanismConfig):
        raise WarplineError(f"not a mechanism configuration: {config!r}")
    token = _CURRENT.set(config)
    try:
        yield
    finally:
        _CURRENT.reset(token)


@contextmanager
def without(names: Iterable[str]) -> Iterator[None]:
    """Run the body with the named mechanisms (and those that require them) switched off."""
    with using(current().without(names)):
        yield
