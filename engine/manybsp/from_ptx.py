"""From a parsed PTX kernel, a GPU profile and a launch to the Many-BSP instruction table, the
level-1 ranges with their iteration counts, the case parameters and the prediction."""

from __future__ import annotations

import math
from typing import Any

from engine.analysis import KernelAnalysis, analyze_kernel
from engine.errors import LaunchError, ModelError
from engine.frozen_rows import built
from engine.launch import Launch
from engine.manybsp.device_figures import MISSING_BARRIER, barrier_overhead, manybsp_derivation_line, manybsp_figures
from engine.manybsp.prediction import ManyBspResult, Overrides, run_manybsp
from engine.manybsp.rows import InstructionRow, Level1Spec, ManyBspParams
from engine.profiles import Profile
from engine.ptx.gc_pause import paused_gc
from engine.ptx.parsed_module import Module
from engine.units import MANYBSP_FU_COLUMN, Unit

SEGMENT_BYTES = 128  # global-memory transaction size of the GPUs 000 models


def _n_ma(width_bytes: int, warp_size: int) -> int:
    """Transactions per warp access assuming a coalesced, aligned pattern: 1 for <= 4-byte
    accesses, 2 for 8-byte, 4 for 16-byte (a later stage refines this with coalescing analysis)."""
    return max(1, math.ceil(max(width_bytes, 1) * warp_size / SEGMENT_BYTES))


def build_instruction_table(
    analysis: KernelAnalysis, profile: Profile, launch: Launch, resources: Any = None,
    memory: Any = None,
) -> tuple[list[InstructionRow], list[Level1Spec], list[str]]:
    """Instruction rows in static order, the level-1 ranges and the warnings found on the way.

    Level-1 supersteps end at each barrier and at loop boundaries (a loop's first and last
    instruction); a range inside loops runs the product of their trip counts. An unknown trip
    count counts 1 and is flagged (``iterations_known=False`` and a warning), never silently.
    """
    function = analysis.function
    instructions = function.instructions
    if not instructions:
        raise ModelError(f"kernel {function.name!r} has no instructions")
    # A profile without a [manybsp] section gets figures derived from its other sections; what
    # cannot be derived stops the prediction (missing_params), never the tables.
    figures = manybsp_figures(profile)
    no_barrier = MISSING_BARRIER in figures.missing
    warp_size = profile.device.warp_size
    n_t = launch.threads_per_block
    warnings: list[str] = []
    rows: list[InstructionRow] = []
    analysed_n_ma: dict[int, int] = {}
    if memory is not None:
        from engine.memory import n_ma_by_instruction

        analysed_n_ma = n_ma_by_instruction(memory)
    # The innermost loop's key of each instruction, looked up once per basic block (a
    # 10^5-instruction kernel has as many rows as that, and far fewer blocks).
    cfg = analysis.cfg
    block_of = cfg.block_indices()
    loop_keys: dict[int, str | None] = {}
    defuse, classifications = analysis.defuse, analysis.classifications
    costs = profile.costs_of(instructions, classifications)
    for i, instr in enumerate(instructions):
        cls = classifications[i]
        block = block_of[i]
        if block not in loop_keys:
            loop = cfg.loop_of(block)
            loop_keys[block] = None if loop is None else loop.key
        cost = costs[i]
        is_barrier = cls.is_barrier
        is_global = cls.is_global_memory and (cls.is_load or cls.is_store or cls.is_atomic)
        lat_comm = cost.lat_comm if is_global else 0.0
        if is_global and lat_comm <= 0:
            lat_comm = figures.mem_lat
        if is_barrier:
            lat_comp = 0.0 if no_barrier else barrier_overhead(profile, n_t)
        else:
            lat_comp = 0.0 if is_global else cost.lat_comp
        fu = None if is_barrier else MANYBSP_FU_COLUMN.get(cost.unit, 1)
        # n_ma counts memory transactions of LDST rows only (000 leaves it blank for ld.param).
        if is_global:
            n_ma = analysed_n_ma.get(i, _n_ma(cls.width_bytes, warp_size))
        else:
            n_ma = 1 if cls.is_memory and fu == 4 else 0
        user = defuse.first_user(i)
        # Only earlier rows count as producers: a value from a later row arrives over a loop's
        # back edge, one iteration earlier, and cannot stall this pass through the body.
        producers = tuple([p + 1 for p in defuse.producers(i) if p < i])
        rows.append(
            built(InstructionRow,
                index=i + 1,
                text=instr.text,
                opcode=instr.full_opcode,
                fu=fu,
                n_fu=cost.n_fu,
                T=cost.T,
                n_ma=n_ma,
                lat_comp=lat_comp,
                lat_comm=lat_comm,
                is_barrier=is_barrier,
                is_global_access=is_global,
                u=0 if user is None else user + 1,
                d=int(user == i + 1),
                p=0,
                producers=producers,
                is_branch=cls.is_branch or (cost.unit is Unit.CONTROL and instr.opcode in ("bra", "brx")),
                labels=instr.labels,
                location=instr.location,
                cuda_location=instr.cuda_location,
                is_default_cost=cost.is_default,
                cost_source=cost.source,
                loop=loop_keys[block],
            )
        )
    specs = _level1_specs(analysis, rows)
    derived = manybsp_derivation_line(profile)
    if derived:
        warnings.append(derived)
    return rows, specs, warnings


def missing_params(profile: Profile, rows: list[InstructionRow]) -> dict[str, str]:
    """Many-BSP figures this profile cannot give (parameter name -> why) that the prediction of
    these rows needs; a missing barrier overhead matters only to a kernel with a barrier."""
    missing = dict(manybsp_figures(profile).missing)
    if MISSING_BARRIER in missing and not any(r.is_barrier for r in rows):
        del missing[MISSING_BARRIER]
    return missing


def _level1_specs(analysis: KernelAnalysis, rows: list[InstructionRow]) -> list[Level1Spec]:
    """Cut the static order where the set of enclosing loops changes (a loop's first and last
    instruction, also for loops whose blocks are not contiguous) and after each barrier."""
    cfg = analysis.cfg
    # Each loop visits the blocks of its body (not each block every loop): linear in the blocks
    # of the loops, where a kernel of 10^5 blocks has few loops. ``cfg.loops`` order is kept among
    # loops of the same depth, as the stable sort below needs.
    inside: dict[int, list] = {}
    for loop in cfg.loops:
        for b in loop.body:
            inside.setdefault(b, []).append(loop)
    outside: tuple = ()
    loops_by_block = {b: tuple(sorted(found, key=lambda lp: lp.depth)) for b, found in inside.items()}
    block_of = cfg.block_indices()
    nest = [loops_by_block.get(block_of[k], outside) for k in range(len(rows))]
    specs: list[Level1Spec] = []
    start = 0
    for k in range(len(rows)):
        last = k == len(rows) - 1
        if last or rows[k].is_barrier or nest[k + 1] != nest[k]:
            specs.append(_spec(analysis, rows, start, k, nest[k]))
            start = k + 1
    return specs


def _spec(analysis: KernelAnalysis, rows: list[InstructionRow], a: int, b: int, loops: tuple) -> Level1Spec:
    iterations, known, reasons = 1, True, []
    slowest = 1
    for loop in loops:
        trip = analysis.trip_counts.get(loop.key)
        if trip is not None and trip.known and trip.value is not None:
            iterations *= trip.value
            slowest *= trip.value if trip.slowest is None else trip.slowest
            reasons.append(f"loop {loop.key}: {trip.value} ({trip.source})"
                           + (f", slowest warp {trip.slowest}" if trip.slowest not in (None, trip.value) else ""))
        else:
            known = False
            why = trip.reason if trip is not None else "not analysed"
            reasons.append(f"loop {loop.key}: trip count unknown ({why})")
    header = loops[-1].key if loops else None
    return Level1Spec(rows[a].index, rows[b].index, iterations, known, "; ".join(reasons), header,
                      slowest=slowest if known and slowest != iterations else None)


def params_for(profile: Profile, launch: Launch, rows: list[InstructionRow], specs: list[Level1Spec],
               registers: int, static_smem: int) -> ManyBspParams:
    """The 26-entry parameter block of 000 for this kernel, launch and GPU."""
    if launch.n_blocks <= 0 or launch.threads_per_block <= 0:
        raise LaunchError(f"empty launch: grid {launch.grid}, block {launch.block}")
    dev, mb = profile.device, manybsp_figures(profile)
    executed = global_ = barriers = 0
    for spec in specs:
        inside = [r for r in rows if spec.start <= r.index <= spec.end]
        executed += spec.iterations * len(inside)
        global_ += spec.iterations * sum(r.is_global_access for r in inside)
        barriers += spec.iterations * sum(r.is_barrier for r in inside)
    alu = profile.units.get(Unit.ALU)
    return ManyBspParams(
        n_b=launch.n_blocks,
        n_t=launch.threads_per_block,
        n_SM=dev.sm_count,
        n_ws=dev.schedulers_per_sm,
        warp_size=dev.warp_size,
        issue_cycle=mb.issue_cycle,
        mem_lat=mb.mem_lat,
        warp_lnch_ovh=mb.warp_lnch_ovh,
        block_lnch_ovh=mb.block_lnch_ovh,
        mu=mb.mu,
        l_c=executed - global_ - barriers,
        l_m=global_,
        max_thread_per_sm=dev.max_threads_per_sm,
        n_reg=dev.registers_per_sm,
        reg_per_thread=registers,
        # What an SM can hand out to blocks (its largest carve-out; 000 printed 48 KB, which binds
        # none of its cases) and what a block takes, with the kilobyte sm_80+ reserves per block.
        # A block without shared memory stays "no limit", as eq. 21 reads a 0-byte request.
        shmem_size=dev.shared_memory_per_sm,
        shmem_per_block=static_smem + launch.smem_dynamic + (
            dev.reserved_shared_memory_per_block if static_smem + launch.smem_dynamic > 0 else 0),
        d=3,
        n_c=alu.per_sm if alu else 0,
        h=len(rows),
        l=executed,
        l_b=barriers,
        n_du=dev.dispatch_units_per_scheduler,
        n_fu=4,
        g0=mb.g0 or 0,
        g1=mb.g1 or 0,
        g2=mb.g2 or 0,
    )


def predict_manybsp(
    module: Module,
    kernel_name: str | None,
    profile: Profile,
    launch: Launch,
    overrides: Overrides | None = None,
    resources: Any = None,
    analysis: KernelAnalysis | None = None,
    memory: Any = True,
) -> ManyBspResult:
    """One call: PTX module + kernel + profile + launch (+ overrides) -> ManyBspResult.

    ``analysis`` and ``memory`` may be passed in when the caller already has them (they depend on
    the kernel and the launch only, so a front end recomputing after a latency edit reuses them).
    ``memory=True`` runs the memory-access analysis here; ``None`` skips it (coalesced ``n_ma``).
    """
    try:
        function = module.kernel(kernel_name)
    except KeyError:
        names = ", ".join(k.name for k in module.kernels) or "none"
        raise ModelError(f"no kernel {kernel_name!r} in {module.filename} (kernels: {names})") from None
    if launch.n_blocks <= 0 or launch.threads_per_block <= 0:
        raise LaunchError(f"empty launch: grid {launch.grid}, block {launch.block}")
    if analysis is None:
        analysis = analyze_kernel(function, launch, module)
    if memory is True:
        from engine.memory.executed import executed_memory, with_executed_trips

        memory = executed_memory(analysis, launch, module)
        if memory.execution is not None and not getattr(launch, "trip_overrides", None):
            analysis = with_executed_trips(analysis, memory.execution)   # as the evaluator counts loops
    if resources is None:
        from engine.resources import kernel_resources
        resources = kernel_resources(module, function.name)
    # paused as Evaluator.evaluate pauses it: the tables of a large kernel are hundreds of
    # thousands of objects and no garbage cycles (engine.ptx.gc_pause)
    with paused_gc(promote=True):
        rows, specs, warnings, params = manybsp_inputs(analysis, profile, launch, resources, memory)
        result = run_manybsp(rows, params, specs, overrides, warnings, missing=missing_params(profile, rows))
    result.kernel_name = function.name
    result.executed_share = executed_shares(specs, getattr(memory, "execution", None), launch)
    return result


def executed_shares(specs: list[Level1Spec], execution: Any, launch: Any = None) -> dict[int, float]:
    """Per row (1-based), the share of a block's warp-passes through its level-1 superstep that
    run the row: the sampled warps' executions of the instruction per warp over the superstep's
    iterations (``ManyBspResult.executed_share``). Empty without a complete run of the sampled
    warps, and where ``launch`` sets trip counts (they replace the executed counts the specs hold,
    and every warp then runs every row). A row's share may pass 1 a little (a loop's exit test
    runs once more than its body). The dict is kept on the run for these specs and shared: read
    it, do not change it."""
    executed = getattr(execution, "executed", None)
    warps = len(getattr(execution, "paths", ()) or ())
    if execution is None or not execution.ok or executed is None or warps <= 0 \
            or getattr(launch, "trip_overrides", None):
        return {}
    # kept on the run for these specs: an edit of a cell re-runs the model, not this
    memo = execution.memo.get("manybsp_shares")
    if memo is not None and memo[0] is specs:
        return memo[1]  # type: ignore[no-any-return]
    per_warp = (executed / float(warps)).tolist()
    out: dict[int, float] = {}
    for spec in specs:
        if spec.iterations <= 0:
            continue
        for row in range(spec.start, min(spec.end, len(per_warp)) + 1):
            out[row] = per_warp[row - 1] / spec.iterations
    execution.memo["manybsp_shares"] = (specs, out)
    return out


def manybsp_inputs(analysis: KernelAnalysis, profile: Profile, launch: Launch, resources: Any,
                   memory: Any = None) -> tuple[list[InstructionRow], list[Level1Spec], list[str], ManyBspParams]:
    """Everything the Many-BSP stages need that an edit of a cell or an override does not change:
    the instruction rows, the level-1 ranges, the warnings and the parameter block. Front ends that
    recompute on every edit cache this and call :func:`run_manybsp` with the overrides."""
    if launch.n_blocks <= 0 or launch.threads_per_block <= 0:
        raise LaunchError(f"empty launch: grid {launch.grid}, block {launch.block}")
    registers = launch.regs_per_thread or int(getattr(resources, "registers", 0) or 0)
    static_smem = int(getattr(resources, "static_shared_bytes", 0) or 0)
    rows, specs, warnings = build_instruction_table(analysis, profile, launch, resources, memory)
    if getattr(resources, "source", "") == "estimate":
        warnings.append(f"registers/shared memory estimated, not from ptxas ({resources.reason})")
    params = params_for(profile, launch, rows, specs, registers, static_smem)
    return rows, specs, warnings, params
