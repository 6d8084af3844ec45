"""The simulator's modelling mechanisms by name, each of which can be switched off.

``validate --without NAME`` re-measures the accuracy with one mechanism removed, which is how
``docs/validation.md`` states what each contributes. Switches live in a context variable, so a
run that removes one never affects another thread's evaluation; by default every mechanism is on.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from engine.errors import WarplineError

MECHANISMS: dict[str, str] = {
    "execution": "the sampled warps are executed (engine.execution) and their requests replayed through "
                 "simulated caches (engine.caches): access patterns, paths and hit levels come from the "
                 "run; without: from the static analysis and its rules",
    "schedule": "each basic block issues in a latency-driven order (loads ahead of their uses), as ptxas "
                "schedules it, instead of the order the PTX was written in",
    "l1": "L1 serves the sectors a block touched just before (memory-level model); without it they are "
          "L2 accesses",
    "grid_share": "a grid with fewer blocks than SMs gets a larger share of L2 and DRAM bandwidth per SM",
    "per_thread_trips": "loops whose bounds depend on thread or block indices run the mean over warps of "
                        "their last lane's count (without: unknown, 1 iteration)",
    "synthetic_data": "addresses computed from loaded integers get a lane pattern from stand-in values "
                      "(pseudo-random, equal for equal addresses: gathers scatter, warp-uniform loads "
                      "stay uniform); without: such accesses keep the profile's coalesced cost",
    "dram_fetch_64b": "a load wanting one sector of a line reads 64 bytes of DRAM (two sectors)",
    "constant_serialisation": "a constant-memory load whose lanes read distinct addresses serialises: one "
                              "constant-cache access per distinct address of the warp; one whose lanes "
                              "share an address costs the measured rate of an LDC",
    "sass": "instructions ptxas folds away are not issued and merged ones (four loads in one LDS.128, an "
            "unrolled loop's branch) cost their share of λ, from the SASS ptxas makes of the kernel",
    "sass_order": "with schedule and sass: instructions free to issue go in the order ptxas put them in "
                  "the SASS (where it made SASS of them) rather than longest latency path first",
    "manybsp_dataflow": "Many-BSP*: one warp's path goes through its rows' dependences, each row once the "
                        "rows before it have issued and its operands are there (ptxas hoists loads to "
                        "where their addresses are known), not through 000's superstep order",
    "partial_sector_fill": "with l2_footprint: stores that leave sectors partly written (every other float) "
                           "and that no other store of the kernel completes make L2 read each such "
                           "sector from DRAM before writing it back",
    "half_pipe_split": "with sass: packed half-precision arithmetic whose SASS uses one of its two pipes "
                       "(plain HFMA2 or HFMA2.MMA) more than the other runs at that pipe's rate; the "
                       "profile's λ was measured with ptxas alternating them",
    "atomic_serialisation": "atomics to one address serialise (per lane in shared memory, across the GPU "
                            "in global memory)",
    "renamed_copies": "the copies of a loop body that ptxas unrolled have registers of their own, so a "
                      "later copy's loads issue before an earlier copy's consumers (without: they wait "
                      "for them, as the PTX's reused registers say)",
    "l2_footprint": "a buffer the whole grid reads more often than its footprint (union of its addresses "
                    "over the grid) is read from DRAM once when the kernel's footprint fits in L2; the "
                    "re-reads are L2 hits",
    "reuse_distance": "with l2_footprint: a re-read hits L2 when the data the kernel touches between two "
                      "reads of the same sector fits, rather than the kernel's whole footprint (affine: "
                      "its footprint x the buffer's share of first touches; through loaded indices: the "
                      "buffer's own footprint plus that share of the rest)",
    "atomic_footprint": "with l2_footprint: atomics to addresses spread over a buffer (a scatter-add, a "
                        "histogram in global memory) run in L2, so DRAM sees the buffer's footprint once "
                        "when it fits, not a sector per atomic",
    "cas_retry": "an atomic that ptxas makes into a compare-and-swap retry loop (a float add in shared "
                 "memory) takes one pass per lane of every warp updating the same word before it "
                 "(without: one pass, as a native atomic)",
    "loop_carried_lanes": "a register the loop carries by arithmetic that is not affine (a wrapped index) "
                          "is evaluated lane by lane iteration after iteration (without: such addresses "
                          "have no pattern and keep the profile's cost)",
    "simt_trips": "loops the static analysis cannot count (bounds loaded from declared data, a while loop "
                  "its own values end, a halving step) run the count found by executing the kernel's "
                  "integer instructions and branches on sampled warps (without: unknown, 1 iteration)",
    "local_memory": "per-thread local memory (arrays ptxas cannot keep in registers) costs what was measured "
                    "for its case: a load at the L1 rate while the launch's local data fits in L1 (the "
                    "measured rate beyond it otherwise), a store at the measured write-through rate, higher "
                    "when only some lanes store; one line per distinct word the lanes address (without: "
                    "every local access costs local_lam)",
    "inflight_hits": "a load every warp makes from the same address at once (no thread or block index in "
                     "it) waits for the line the SM's first warp requested: its L1 hits take the latency "
                     "of the level that fills the line, not L1's",
    "matrix_fragments": "wmma loads and stores are analysed as the 32 pieces of the fragment they move (16 "
                        "rows of 32 bytes, ldm elements apart, for a 16x16 half-precision fragment): their "
                        "sectors, lines and bank conflicts, instead of the profile's cost of one access",
    "shared_phases": "a shared-memory request of 8- or 16-byte accesses is served 128 bytes at a time (a half "
                     "or a quarter warp per phase): its wavefronts are the sum of its phases' conflict "
                     "degrees, not the whole warp's",
    "neighbour_distance": "with reuse_distance: an affine address's re-reads (a stencil's halo) come back with "
                          "the neighbouring block, so the data in between is the blocks launched between "
                          "the two (a row of blocks for the row below), not a share of the whole kernel",
    "merged_misses": "with l2_footprint: blocks of the first wave that read the same data at once all wait "
                     "for DRAM, but L2 merges their misses, so DRAM bytes count the data once",
    "red_atomics": "an atomic whose old value nothing reads is a RED in SASS: the warp issues it and goes "
                   "on (and may exit) without waiting for L2's answer",
    "line_latency": "a global load whose lanes touch several lines waits for the last of them: the latency "
                    "measured per level for 1-32 lines (the profile's [pipeline.line_latency]), instead of "
                    "its lines streaming at the request's own rate",
    "sass_issue_slots": "with sass: an instruction takes as many of the SM's issue slots per cycle as the SASS "
                        "instructions it becomes (2 for a PTX instruction ptxas expands into two, a "
                        "quarter for each of four loads merged into one)",
    "dram_fetch_pairs": "with dram_fetch_64b: a load sector whose 64-byte DRAM neighbour the same block reads "
                        "one loop iteration before or after costs one sector of DRAM, not two",
    "compulsory_floor": "with l2_footprint: a buffer's accesses read at least its footprint from DRAM, "
                        "however many of their sectors the block-level model calls hits of a "
                        "neighbouring block (a GEMM panel every block of a row reads)",
    "l2_write_back": "with l2_footprint: stores reach DRAM during the kernel only beyond the bytes L2 keeps "
                     "dirty (measured: about 25 MB on the H100, 30 MB on the H200, less beside other "
                     "reads); the rest is written after the kernel ends",
    "loaded_dram_latency": "a load that goes to DRAM waits what was measured at the share of peak DRAM "
                           "bandwidth the launch draws (the profile's [pipeline.dram_loaded] curve), "
                           "solved with the simulated time: a busier DRAM answers later",
    "scattered_dram_load": "with loaded_dram_latency: the DRAM bytes a gather reads (one sector per 64-byte "
                           "fetch) load DRAM as measured beside gathering warps (the profile's "
                           "[pipeline.dram_loaded_scattered]: saturated at 61 % of the streaming peak on the "
                           "H100, 54 % on the H200), the rest as beside streaming ones",
    "block_turnaround": "a block slot starts its next block the measured turnaround after the block's last "
                        "result (the profile's [pipeline.blocks]: about 300 cycles on the H100 and H200, one "
                        "empty block per SM), not block_lnch_ovh, which is the SM-wide rate of launches "
                        "(without: block_lnch_ovh)",
    "launch_queue": "an SM starts its blocks one at a time, at the measured serial rate (the profile's "
                    "block_lnch_ovh + warp_lnch_ovh per warp a scheduler gets): a grid of short blocks "
                    "waits for its launches (without: each freed block slot starts its next block on "
                    "its own)",
    "warp_branches": "a branch whose guard depends on the thread index goes, for each warp, the way all "
                     "its lanes go, so the warps of a block may run different paths (warp 0 alone "
                     "reduces the partial sums; only the first row of a tile loads its top halo); a "
                     "warp whose lanes differ runs the body, as every warp did without",
    "atomic_units": "global atomics issue to L2's atomic units, a subsystem of their own, instead of the "
                    "SM's memory pipe: the loads of other warps do not queue behind them (the GPU keeps "
                    "a warp's atomics in flight and drains them at its exit; ncu shows the wait as "
                    "'drain', not as a busy memory pipe); one whose old value the warp reads still waits "
                    "for it",
    "scattered_stores": "a store or atomic whose lanes land on data-dependent sectors of their own costs, per "
                        "lane, the DRAM fill and write-back bytes and the SM cycles measured for random "
                        "4-byte stores / atomic adds at its buffer's footprint (past L2: a 32-byte fill and "
                        "write-back each, at a third of the streaming bandwidth); without: a sector written "
                        "once per store at the streaming rate",
    "spread_samples": "the sampled interior iterations of a loop lie spread over it (one per residue of "
                      "the address's alignment period) instead of at its start, so that lanes leaving it "
                      "are averaged over the whole loop",
    "l1_banks": "an L1-hit request takes a wavefront per distinct word its busiest data bank serves, and "
                "a quarter cycle per line for its tags (lanes spread over the banks); without: a "
                "wavefront per line, as when every lane's word is in the same bank",
    "lane_loop_exits": "in a loop whose test differs between lanes (a thread per CSR row), a lane that has "
                       "left it is inactive in the iterations the warp still runs for its other lanes, "
                       "so those requests touch fewer sectors; without: every lane that entered the loop "
                       "counts in every iteration",
    "texel_addresses": "a 1D texture fetch at an integer index (tex1Dfetch) reads base + index x texel "
                       "bytes through the L1/texture cache, analysed as a global load of those addresses; "
                       "without: texture fetches have no address and cost a coalesced global load",
    "mixed_dram_load": "with loaded_dram_latency: a launch that writes part of its DRAM bytes reads the "
                       "curve measured beside streams that write that share (the profile's "
                       "[[pipeline.dram_loaded_mixed]]: a third and a half written): at the same bandwidth "
                       "its loads wait longer, and DRAM saturates sooner, than beside reads alone",
}

_DISABLED: ContextVar[frozenset[str]] = ContextVar("warpline_disabled_mechanisms", default=frozenset())


def enabled(name: str) -> bool:
    """Whether mechanism ``name`` is on in the current context."""
    return name not in _DISABLED.get()


def check_names(names: Iterable[str]) -> frozenset[str]:
    """The names, refused with the valid ones listed when one is unknown."""
    names = frozenset(names)
    unknown = sorted(names - set(MECHANISMS))
    if unknown:
        raise WarplineError(f"unknown mechanism {', '.join(unknown)}; known: {', '.join(MECHANISMS)}")
    return names


@contextmanager
def without(names: Iterable[str]) -> Iterator[None]:
    """Run the body with the named mechanisms switched off."""
    token = _DISABLED.set(_DISABLED.get() | check_names(names))
    try:
        yield
    finally:
        _DISABLED.reset(token)
