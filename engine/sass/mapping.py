"""From a kernel's SASS listing (with PTX line numbers) to per-PTX-instruction weights.

1. **Owners.** Each SASS instruction whose line-table row names a PTX instruction belongs to it;
   a row inside an inlined ``.func`` belongs to the kernel's ``call`` of it. Instructions that
   start no row (DWARF: "same as before", but ptxas also leaves reconvergence points and
   address set-up without one) take the nearest owned instruction of their SASS basic block, else
   of their innermost SASS loop; what is left is per-warp overhead.
2. **Regions.** A PTX loop is the span from a label to a backward branch to it, and so is a SASS
   loop (nvcc and ptxas both lay loops out that way). Every PTX instruction belongs to its
   innermost PTX loop (or to the top level). The *home* of a PTX loop is the SASS loop holding
   most copies of its instructions (the top level for a loop ptxas unrolled completely).
3. **Unrolling.** In its home, a PTX loop's code appears ``u`` times, once per PTX iteration one
   SASS pass covers. ``u`` is the most common copy count among instructions that ptxas maps one
   to one (floating-point arithmetic, 32-bit multiply-adds, loads, stores, atomics), ties going
   to the larger count; without such instructions, among all of them, a 64-bit integer operation
   counting as two (ptxas does it in 32-bit halves).
4. **Weights.** weight = copies in the home / ``u``. Copies outside the home run per entry of
   the loop, not per iteration (:class:`LoopTail`): the SASS blocks without a copy of the loop's
   work (bounds, hoisted code) once per entry, the blocks with copies (the remainder blocks or
   loop that finish the ``T mod u`` iterations a home pass does not cover) in proportion to the
   iterations left over. A short loop pays them on every entry: `data_dep_loop` (random length
   0-63, unrolled 16 times by ptxas with 8- and 4-step remainder blocks) executes 19 % more SASS
   than its home passes. A loop that a jump enters (no instruction runs once per entry) leaves
   them out.
5. **Merged accesses.** A SASS load or store wider than its PTX instruction (``LDS.128`` for an
   ``ld.shared.f32``) shares its count with the PTX accesses of the same kind, block and base
   address that produced no SASS of their own, nearest first: four merged loads weigh 0.25 each.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from engine.ptx.parsed_module import Function, Instruction, Module, OperandKind
from engine.sass.classes import access_bytes, sass_class
from engine.sass.listing import SassInstruction
from engine.sass.mapping_result import LoopTail, SassMap
from engine.sass.rewrite import Rewritten

Span = tuple[int, int]   # (first, last) position of a loop, inclusive

_ONE_TO_ONE_FLOAT = frozenset({"fma", "mul", "add", "sub", "min", "max", "mad"})
_ONE_TO_ONE_MEMORY = frozenset({"ld", "ldu", "st", "atom", "red"})
_TYPE_BYTES = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}
_SPACES = ("global", "shared", "local", "param", "const")
_ATOMIC_SASS = frozenset({"ATOM", "ATOMS", "ATOMG"})
# 64-bit integer operations the 32-bit datapath does in two halves (two SASS instructions).
_SPLIT_64 = frozenset({"add", "sub", "and", "or", "xor", "not", "neg", "shl", "shr", "selp", "setp", "min",
                       "max"})


def _live(listing: Sequence[SassInstruction]) -> list[SassInstruction]:
    """The listing without its tail of padding (``BRA`` to itself and ``NOP``s after ``EXIT``)."""
    end = len(listing)
    while end > 0 and (listing[end - 1].base == "NOP"
                       or (listing[end - 1].is_jump and listing[end - 1].target == listing[end - 1].position
                           and not listing[end - 1].predicate)):
        end -= 1
    return list(listing[:end])


def _loops(spans: list[Span], n: int) -> list[Span | None]:
    """Innermost span containing each position 0..n-1 (None outside every span)."""
    inner: list[Span | None] = [None] * n
    for span in sorted(spans, key=lambda s: s[1] - s[0], reverse=True):
        for p in range(span[0], min(span[1], n - 1) + 1):
            inner[p] = span
    return inner


def _callees(kernel: Function, module: Module) -> dict[str, list[int]]:
    """Function name -> the kernel's ``call`` instructions that reach it (directly or through
    other functions), so that an inlined body's rows can be charged to a call."""
    by_name = {f.name: f for f in module.functions if f.body is not None}

    def called(instr: Instruction) -> list[str]:
        return [op.name for op in instr.operands if op.kind == OperandKind.SYMBOL and op.name in by_name]

    reach: dict[str, list[int]] = {}
    for instr in kernel.instructions:
        if instr.opcode != "call":
            continue
        stack = called(instr)
        seen: set[str] = set()
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            reach.setdefault(name, []).append(instr.index)
            for inner in by_name[name].instructions:
                if inner.opcode == "call":
                    stack.extend(called(inner))
    return reach


def _owners(code: list[SassInstruction], kernel: Function, module: Module, rewritten: Rewritten) -> list[int | None]:
    reach = _callees(kernel, module)
    owners: list[int | None] = []
    for s in code:
        found = rewritten.locate(s.line) if s.line is not None else None
        if found is None:
            owners.append(None)
        elif found[0] == kernel.name:
            owners.append(found[1])
        else:
            sites = reach.get(found[0], [])
            if len(sites) == 1:
                owners.append(sites[0])
            else:
                # Several calls reach it: the nearest call before it in the SASS is the one inlined.
                before = next((o for o in reversed(owners) if o is not None and o in sites), None)
                owners.append(before)
    return owners


def _blocks(code: list[SassInstruction]) -> list[int]:
    leaders = {0}
    for p, s in enumerate(code):
        if s.target is not None:
            leaders.add(s.target)
        if s.is_jump or s.base in ("EXIT", "RET"):
            leaders.add(p + 1)
    block, out = -1, []
    for p in range(len(code)):
        if p in leaders:
            block += 1
        out.append(block)
    return out


def _fill(owners: list[int | None], blocks: list[int], inner: list[Span | None],
          live: list[bool], code: list[SassInstruction]) -> list[int | None]:
    """Give each live instruction without a row an owner. A ``BSYNC`` (where an ``if`` ends and
    its warp's lanes join again) belongs to the code after it: every warp that reaches the join
    runs it, those that skipped the body too (measured: `scan_block_blelloch` runs one per warp
    at each join, Nsight Compute's source counters in
    bench/results/device-v3-source-counts-2026-11-28). Else the line table's own rule comes first
    (a row lasts until the next one: the owner of the instruction before, when it is in the same
    innermost SASS loop); then the next owned instruction of the same block (a reconvergence
    point belongs to the code after it); then the nearest owned one in the same SASS loop."""
    filled = list(owners)
    n = len(owners)
    for p in range(n):
        if owners[p] is not None or not live[p]:
            continue
        choice = None
        if code[p].base == "BSYNC":
            choice = next((owners[q] for q in range(p + 1, n)
                           if owners[q] is not None and live[q] and inner[q] == inner[p]), None)
            if choice is not None:
                filled[p] = choice
                continue
        q = p - 1
        while q >= 0 and not live[q]:
            q -= 1
        if q >= 0 and inner[q] == inner[p]:
            choice = filled[q]
        if choice is None:
            for q in range(p + 1, n):
                if blocks[q] != blocks[p]:
                    break
                if owners[q] is not None and live[q]:
                    choice = owners[q]
                    break
        if choice is None:
            for distance in range(1, n):
                for q in (p - distance, p + distance):
                    if 0 <= q < n and live[q] and owners[q] is not None and inner[q] == inner[p]:
                        choice = owners[q]
                        break
                if choice is not None or (p - distance < 0 and p + distance >= n):
                    break
        filled[p] = choice
    return filled


def _jumps_to(kernel: Function) -> dict[str, list[int]]:
    """Label -> the branches that name it (``bra``'s target, ``brx``'s label operands)."""
    out: dict[str, list[int]] = {}
    for instr in kernel.instructions:
        if instr.opcode in ("bra", "brx"):
            for name in {instr.branch_target} | {op.name for op in instr.operands if op.name}:
                if name:
                    out.setdefault(name, []).append(instr.index)
    return out


def _entry_instructions(kernel: Function, span: Span, ptx_blocks: list[int],
                        jumps_to: dict[str, list[int]]) -> tuple[int, ...]:
    """The PTX instructions executed once each time the loop ``span`` is entered: the PTX block
    before its first instruction, when it always falls through into the loop (it ends in no
    branch, return or trap) and no branch outside the loop jumps to the loop's label. Empty
    otherwise."""
    first, last = span
    instrs = kernel.instructions
    if first == 0 or instrs[first - 1].opcode in (*_BLOCK_ENDS, "trap"):
        return ()
    if any(not first <= b <= last for name in instrs[first].labels for b in jumps_to.get(name, ())):
        return ()
    start = first - 1
    while start > 0 and ptx_blocks[start - 1] == ptx_blocks[first - 1]:
        start -= 1
    return tuple(range(start, first))


def _loop_tail(kernel: Function, entry: tuple[int, ...], span: Span, group: list[int], u: int,
               outside: list[int], code: list[SassInstruction], blocks: list[int],
               owners: list[int | None], per_iteration: float) -> LoopTail:
    """What the copies of a loop's instructions outside its home (``outside``: SASS positions) add
    per entry (see :class:`LoopTail`); ``entry``: :func:`_entry_instructions`.
    ``per_iteration``: the home's SASS per PTX iteration (the weights of the loop's instructions)."""
    anchors = {i for i in group if _anchor_class(kernel.instructions[i]) is not None}

    def works(p: int) -> bool:
        """Whether SASS position ``p`` does a PTX iteration's work (a copy of an anchor)."""
        owner = owners[p]
        expected = _anchor_class(kernel.instructions[owner]) if owner is not None and owner in anchors else None
        return expected is not None and _does_work(code[p], expected)

    work = [p for p in outside if works(p)]
    tail_blocks = {blocks[p] for p in work}
    tail = sum(1 for p in outside if blocks[p] in tail_blocks)
    iterations = round(len(work) / len(anchors)) if anchors else 0
    return LoopTail(entry=entry, latch=span[1], unroll=u, setup=float(len(outside) - tail),
                    tail=float(tail) if iterations else 0.0, tail_iterations=iterations,
                    home_per_iteration=round(per_iteration, 6))


def _unconditional(s: SassInstruction) -> bool:
    # ``BRA.U !UP0, ...`` and ``BRA.DIV UR4, ...`` name a condition before the target.
    return not s.predicate and "," not in s.operands


def _reachable(code: list[SassInstruction], avoid: int | None = None, diverged: bool = True) -> list[bool]:
    """Instructions reached from the entry by falling through and jumping, not by ``CALL``: the
    rest are subroutines ptxas appends (the slow paths of division, square root, reciprocal).
    With an indirect jump the targets are unknown and everything counts as reached. ``avoid``: a
    position the walk may not pass (what is still reached does not need it). ``diverged`` False:
    a ``BRA.DIV`` is not followed (it jumps only when the warp's lanes have split, to the
    fallback ptxas writes after the kernel's ``EXIT`` for a warp-wide shuffle or vote, which
    re-converges them with ``WARPSYNC.COLLECTIVE`` ... ``ENDCOLLECTIVE``)."""
    n = len(code)
    if any(s.base in ("BRX", "JMX") for s in code):
        return [True] * n
    seen = [False] * n
    stack = [0] if n else []
    while stack:
        p = stack.pop()
        if p >= n or seen[p] or p == avoid:
            continue
        seen[p] = True
        s = code[p]
        if s.is_jump and s.target is not None and (diverged or s.opcode != "BRA.DIV"):
            stack.append(s.target)
        ends = (s.is_jump and _unconditional(s)) or (s.base in ("EXIT", "RET") and not s.predicate)
        if not ends:
            stack.append(p + 1)
    return seen


def _back_edges(code: list[SassInstruction], live: list[bool]) -> list[Span]:
    """The SASS loops: (target, jump) of each live backward jump whose target every path to the
    jump passes. ptxas also jumps backwards out of code it placed after the kernel's ``EXIT``
    (the fallback of a warp-wide shuffle when the warp is not converged rejoins the code after
    the fast path): that is no loop, and taking it for one would make the span from the rejoin
    point to the fallback's end the home of the enclosing PTX loop. Only a span holding an
    instruction that ends the fall-through is checked: a plain loop body cannot hide such a path."""
    spans = []
    for p, s in enumerate(code):
        if not (live[p] and s.is_jump and s.target is not None and s.target <= p):
            continue
        t = s.target
        if any((c.is_jump and _unconditional(c)) or (c.base in ("EXIT", "RET") and not c.predicate)
               for c in code[t:p]) and _reachable(code, avoid=t)[p]:
            continue            # reached without passing its target: a rejoin, not a loop
        spans.append((t, p))
    return spans


def _live_positions(code: list[SassInstruction], blocks: list[int]) -> tuple[list[bool], int, int]:
    """(counted, instructions in subroutines or divergence fallbacks, instructions of blocks that
    call a subroutine). A block that calls an appended subroutine is the rare path of a fast/slow
    split (``FCHK`` then ``CALL``). A warp-wide shuffle's fallback runs only for a warp whose
    lanes have split before it (measured on ``radix_local_4bit``: its 20 ``SHFL.UP`` fallbacks
    executed 0 times, the fast path once per warp; ``bench/results/device-v3-source-counts-2026-11-28``);
    the run executes warps converged there, so it is left out like the subroutines."""
    reached = _reachable(code, diverged=False)
    # ptxas names the subroutines it appends ``$__internal_<n>_$__cuda_..._slowpath`` (or ``_full``):
    # in every case seen (f32/f64 division, square root, reciprocal) the fast path branches around
    # the call.
    cold_blocks = {blocks[p] for p, s in enumerate(code) if reached[p] and s.base == "CALL"
                   and "$__internal" in s.operands}
    live = [reached[p] and blocks[p] not in cold_blocks for p in range(len(code))]
    subroutine = sum(1 for r in reached if not r)
    cold = sum(1 for p in range(len(code)) if reached[p] and blocks[p] in cold_blocks)
    return live, subroutine, cold


_BLOCK_ENDS = ("bra", "brx", "ret", "exit")


def _ptx_blocks(kernel: Function) -> list[int]:
    block, out = 0, []
    for instr in kernel.instructions:
        if instr.labels and out:
            block += 1
        out.append(block)
        if instr.opcode in _BLOCK_ENDS:
            block += 1
    return out


def _ptx_width(instr: Instruction) -> int:
    vector, size = 1, 4
    for m in instr.modifiers:
        if m in ("v2", "v4", "v8"):
            vector = int(m[1:])
        elif m[:1] in "bsuf" and m[1:] in _TYPE_BYTES:
            size = _TYPE_BYTES[m[1:]]
    return vector * size


def _access_key(instr: Instruction) -> tuple[str, str, str] | None:
    if instr.opcode not in ("ld", "st"):
        return None
    space = next((m.split("::")[0] for m in instr.modifiers if m.split("::")[0] in _SPACES), "")
    base = ""
    for op in instr.operands:
        if op.kind == OperandKind.ADDRESS and op.base is not None:
            base = op.base.name or op.base.text
    return instr.opcode, space, base


def _merge_groups(kernel: Function, code: list[SassInstruction], owners: list[int | None],
                  blocks: list[int]) -> dict[int, list[int]]:
    """PTX instruction -> the PTX accesses its wider SASS access stands for (itself first);
    ``blocks``: :func:`_ptx_blocks`."""
    instrs = kernel.instructions
    copies = Counter(o for o in owners if o is not None)
    widest: dict[int, int] = {}
    for s, o in zip(code, owners, strict=True):
        width = access_bytes(s.opcode)
        if o is not None and width is not None:
            widest[o] = max(widest.get(o, 0), width)
    groups: dict[int, list[int]] = {}
    taken: set[int] = set()
    for i in sorted(widest):
        key = _access_key(instrs[i])
        width = _ptx_width(instrs[i])
        if key is None or widest[i] <= width:
            continue
        candidates = [j for j in range(len(instrs)) if j != i and j not in taken and copies[j] == 0
                      and blocks[j] == blocks[i] and _access_key(instrs[j]) == key
                      and _ptx_width(instrs[j]) == width]
        candidates.sort(key=lambda j: (abs(j - i), j))
        chosen = candidates[: widest[i] // width - 1]
        if chosen:
            groups[i] = [i, *sorted(chosen)]
            taken.update(chosen)
    return groups


def _anchor_class(instr: Instruction) -> str | None:
    """The SASS class of the one instruction ptxas makes of ``instr`` for each PTX execution,
    for the instructions where that holds (floating-point arithmetic, loads, stores, atomics)."""
    if instr.opcode in _ONE_TO_ONE_MEMORY:
        return "ldst"
    if instr.opcode in _ONE_TO_ONE_FLOAT:
        if "f64" in instr.modifiers:
            return "fp64"
        if "f32" in instr.modifiers:
            return "alu"
    return None


def _does_work(s: SassInstruction, expected: str) -> bool:
    """Whether SASS instruction ``s`` is the one-to-one copy of an anchor of class ``expected``
    (:func:`_anchor_class`): an arithmetic anchor's copy is floating point (``F*``/``H*``)."""
    return sass_class(s.opcode) == expected and (expected != "alu" or s.opcode.startswith(("F", "H")))


def _replication(members: list[int], home: list[list[SassInstruction]], kernel: Function,
                 retried: frozenset[int] = frozenset()) -> int:
    """How many PTX iterations one pass of the home's SASS covers (see the module docstring).
    ``retried``: atomics made into retry loops, which are not one-to-one (a pass is an LDS and an
    ATOMS)."""
    def mode(counts: list[int]) -> int | None:
        if not counts:
            return None
        tally = Counter(counts)
        best = max(tally.values())
        return max(c for c, n in tally.items() if n == best)

    anchors = []
    for i, copies in zip(members, home, strict=True):
        expected = _anchor_class(kernel.instructions[i]) if i not in retried else None
        if expected is None:
            continue
        # Only the copies that do the work count: a move that ptxas tagged with a load's line
        # is not a second load.
        n = sum(1 for s in copies if _does_work(s, expected))
        if n:
            anchors.append(n)
    if anchors:
        return mode(anchors) or 1
    # An integer-only loop: a 64-bit operation is two SASS instructions (low and high halves),
    # so counts are taken per half before their mode (a Collatz step is not unrolled twice).
    halves = []
    for i, copies in zip(members, home, strict=True):
        if not copies:
            continue
        width = _halves(kernel.instructions[i])
        if len(copies) % width == 0:
            halves.append(len(copies) // width)
    return mode(halves) or 1


def _halves(instr: Instruction) -> int:
    """SASS instructions one execution of an integer instruction takes: two for the 64-bit
    operations the 32-bit datapath does in halves, else one."""
    wide = any(m in ("u64", "s64", "b64") for m in instr.modifiers)
    return 2 if wide and instr.opcode in _SPLIT_64 else 1


def _home(span: Span | None, group: list[int], copies_by_owner: dict[int, list[int]], inner: list[Span | None],
          depth: dict[Span, int]) -> Span | None:
    """The SASS loop where a PTX loop's steady state runs (None: straight-line code)."""
    if span is None:
        return None
    distinct: dict[Span | None, set[int]] = {}
    for i in group:
        for p in copies_by_owner.get(i, ()):
            distinct.setdefault(inner[p], set()).add(i)
    if not distinct:
        return None
    most = max(len(v) for v in distinct.values())
    # A SASS loop holding a fair share of the loop's instructions is its steady state, even when
    # the peeled and remainder copies around it outnumber it; the deepest such loop wins, so that
    # an inner PTX loop is not sent to its outer loop's SASS.
    loops = [h for h, v in distinct.items() if h is not None and 2 * len(v) >= most]
    if not loops:
        return None
    # Between sibling loops (ptxas's x4 main loop and its x1 remainder loop), the one with the
    # most copies is the most unrolled, and it runs nearly all the iterations.
    copies = Counter(inner[p] for i in group for p in copies_by_owner.get(i, ()))
    return max(loops, key=lambda h: (depth[h], copies[h]))


def _fold_retry_loops(code: list[SassInstruction], owners: list[int | None], inner: list[Span | None],
                      spans: list[Span], instrs: Sequence[Instruction]
                      ) -> tuple[list[Span | None], dict[Span, int]]:
    """SASS loops that ptxas made of one PTX atomic (a compare-and-swap retry loop: ``atom.add.f32``
    on shared memory is ``LDS``, ``FADD``, ``ATOMS.CAST.SPIN`` and a branch back while the swap
    failed) are passes of that instruction, not loops of the kernel: their instructions are given
    the innermost loop around them, so that they count with the atomic's PTX loop. Returns the
    new innermost-loop list and each such SASS loop with its PTX instruction."""
    folded: dict[Span, int] = {}
    for span in spans:
        mine = {owners[p] for p in range(span[0], span[1] + 1) if inner[p] == span and owners[p] is not None}
        if len(mine) != 1:
            continue
        (i,) = mine
        has_cas = any(code[p].base in _ATOMIC_SASS and ".CAS" in code[p].opcode for p in range(span[0], span[1] + 1))
        if instrs[i].opcode in ("atom", "red") and "cas" not in instrs[i].modifiers and has_cas:
            folded[span] = i
    if not folded:
        return inner, folded
    out = list(inner)
    for span in folded:
        around = [o for o in spans if o != span and o[0] <= span[0] and span[1] <= o[1]]
        parent = min(around, key=lambda o: o[1] - o[0]) if around else None
        for p in range(span[0], span[1] + 1):
            if out[p] == span:
                out[p] = parent
    return out, folded


def line_owners(kernel: Function, module: Module, listing: Sequence[SassInstruction],
                rewritten: Rewritten) -> list[int | None]:
    """Per position of the listing's live code, the PTX instruction it belongs to (None: none, or
    a slow path), by the same rules :func:`map_kernel` counts with."""
    code = _live(listing)
    blocks = _blocks(code)
    live, _subroutine, _cold = _live_positions(code, blocks)
    inner = _loops(_back_edges(code, live), len(code))
    raw = _owners(code, kernel, module, rewritten)
    return [o if live[p] else None for p, o in enumerate(_fill(raw, blocks, inner, live, code))]


def _ptx_back_edges(kernel: Function) -> list[Span]:
    """The (label, branch) spans of ``kernel``'s backward branches: its PTX loops."""
    spans = []
    for instr in kernel.instructions:
        target = instr.branch_target
        start = kernel.labels.get(target) if target else None
        if start is not None and start <= instr.index:
            spans.append((start, instr.index))
    return spans


def map_kernel(kernel: Function, module: Module, listing: Sequence[SassInstruction], rewritten: Rewritten,
               arch: str, tool: str) -> SassMap:
    """The :class:`SassMap` of ``kernel`` from its SASS ``listing``."""
    code = _live(listing)
    n = len(code)
    blocks = _blocks(code)
    live, subroutine, cold = _live_positions(code, blocks)
    sass_spans = _back_edges(code, live)
    inner = _loops(sass_spans, n)
    depth = {span: sum(1 for o in sass_spans if o[0] <= span[0] and span[1] <= o[1]) for span in sass_spans}
    raw = _owners(code, kernel, module, rewritten)
    owners = [o if live[p] else None for p, o in enumerate(_fill(raw, blocks, inner, live, code))]

    instrs = kernel.instructions
    inner, retry_spans = _fold_retry_loops(code, owners, inner, sass_spans, instrs)
    region = _loops(_ptx_back_edges(kernel), len(instrs))

    members: dict[Span | None, list[int]] = {}
    for i in range(len(instrs)):
        members.setdefault(region[i], []).append(i)
    copies_by_owner: dict[int, list[int]] = {}
    for p, o in enumerate(owners):
        if o is not None:
            copies_by_owner.setdefault(o, []).append(p)

    ptx_blocks = _ptx_blocks(kernel)
    jumps_to = _jumps_to(kernel)
    groups = _merge_groups(kernel, code, owners, ptx_blocks)
    weights = {i: 0.0 for i in range(len(instrs))}
    # the stall counts ptxas wrote, summed like the weights (per PTX execution); only when every
    # live instruction has one (engine.sass.control_fields read the cubin)
    with_stalls = all(ins.stall is not None for ins in code)
    stall_cycles = {i: 0.0 for i in range(len(instrs))} if with_stalls else {}
    class_weights: dict[int, dict[str, float]] = {i: {} for i in range(len(instrs))}
    opcodes: dict[int, tuple[str, ...]] = {}
    unroll: dict[str, int] = {}
    positions: dict[int, tuple[int, ...]] = {}
    outside = 0
    # loops with SASS outside their home that one block enters: (entry, span, members, unroll, outside)
    pending: list[tuple[tuple[int, ...], Span, list[int], int, list[int]]] = []
    notes: list[str] = []
    for span, group in members.items():
        home = _home(span, group, copies_by_owner, inner, depth)
        in_home = [[code[p] for p in copies_by_owner.get(i, ()) if inner[p] == home] for i in group]
        u = _replication(group, in_home, kernel, frozenset(retry_spans.values())) if span is not None else 1
        if span is not None:
            unroll[f"{span[0]}-{span[1]}"] = u
            if home is None and any(in_home):
                notes.append(f"PTX loop {span[0] + 1}-{span[1] + 1}: unrolled completely by ptxas ({u} copies)")
            elif u > 1:
                notes.append(f"PTX loop {span[0] + 1}-{span[1] + 1}: unrolled {u} times by ptxas")
        away = [p for i in group for p in copies_by_owner.get(i, ()) if inner[p] != home]
        outside += len(away)
        if span is not None and home is not None and away:
            entry = _entry_instructions(kernel, span, ptx_blocks, jumps_to)
            if entry:
                pending.append((entry, span, group, u, away))
        for i in group:
            spread = groups.get(i, [i])
            share = 1.0 / len(spread)
            mine = [p for p in copies_by_owner.get(i, ()) if inner[p] == home]
            for p in mine:
                cls = sass_class(code[p].opcode)
                for j in spread:
                    weights[j] += share / u
                    class_weights[j][cls] = class_weights[j].get(cls, 0.0) + share / u
                    if with_stalls:
                        stall_cycles[j] += share / u * (code[p].stall or 0)
            if mine:
                positions[i] = tuple(sorted(mine))
            seen = Counter(code[p].opcode for p in mine)
            per_pass = tuple(op for op in seen for _ in range(max(1, round(seen[op] / u))))
            if mine:     # a merged access without SASS of its own keeps its partner's opcodes
                for j in spread:
                    opcodes[j] = per_pass
    for i in range(len(instrs)):
        opcodes.setdefault(i, ())
    tails = [_loop_tail(kernel, entry, span, group, u, away, code, blocks, owners, sum(weights[i] for i in group))
             for entry, span, group, u, away in pending]
    # SASS instructions of one pass of each atomic's retry loop, per PTX execution: the copies of
    # the loop that lie in the home of the atomic's PTX loop, over that loop's unrolling.
    retry_body: dict[int, float] = {}
    for span, i in retry_spans.items():
        home = _home(region[i], members[region[i]], copies_by_owner, inner, depth)
        if inner[span[0]] == home:
            u = unroll.get(f"{region[i][0]}-{region[i][1]}", 1) if region[i] is not None else 1
            retry_body[i] = retry_body.get(i, 0.0) + sum(1 for p in range(span[0], span[1] + 1) if live[p]) / u
    if retry_body:
        notes.append("atomics ptxas made into compare-and-swap retry loops (one pass counted here; the "
                     "memory model says how many passes contention takes): "
                     + ", ".join(str(i + 1) for i in sorted(retry_body)))
    classes = {i: tuple(sass_class(op) for op in ops) for i, ops in opcodes.items()}
    loose = [p for p, o in enumerate(owners) if o is None and live[p]]
    overhead_ops = tuple(code[p].opcode for p in loose if inner[p] is None)
    in_loops = sum(1 for p in loose if inner[p] is not None)
    if in_loops:
        notes.append(f"{in_loops} SASS instructions inside loops belong to no PTX instruction: left out")
    if outside:
        counted = sum(t.setup + t.tail for t in tails)
        notes.append(f"{outside} SASS instructions of loop code lie outside their loop's steady state "
                     f"(peeled or remainder iterations, hoisted code): {counted:.0f} counted per entry of their "
                     f"loop, {outside - counted:.0f} left out (loops entered by a jump)")
    if subroutine or cold:
        notes.append(f"{subroutine + cold} SASS instructions of slow paths (subroutines ptxas appends for "
                     "division, square root and the like, the calls to them, and the fallbacks of warp-wide "
                     "shuffles and votes for warps whose lanes have split): left out")
    return SassMap(
        kernel=kernel.name, arch=arch, tool=tool,
        weights={i: round(w, 6) for i, w in weights.items()},
        opcodes=opcodes, classes=classes,
        class_weights={i: {c: round(w, 6) for c, w in cw.items()} for i, cw in class_weights.items()},
        overhead=float(len(overhead_ops)), overhead_opcodes=overhead_ops,
        unroll=unroll, outside_steady_state=outside, static_sass=sum(live), notes=tuple(notes),
        retry_body={i: round(w, 6) for i, w in retry_body.items()}, positions=positions,
        stall_cycles={i: round(c, 6) for i, c in stall_cycles.items()}, loop_tails=tuple(tails))
