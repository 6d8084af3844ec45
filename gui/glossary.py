"""Short explanations (one or two sentences) of the terms the window shows: Many-BSP quantities of
the derivation, the model families, the BLOCK table's symbols. Models explain themselves through
the registry's ``explanation``; this holds the rest, in one place, for tooltips."""

from __future__ import annotations


def set_header_tips(table, tips) -> None:  # noqa: ANN001 - a QTableWidget
    """One tooltip per column header of a ``QTableWidget``, in column order."""
    for column, tip in enumerate(tips):
        item = table.horizontalHeaderItem(column)
        if item is not None:
            item.setToolTip(tip)


TERMS: dict[str, str] = {
    # Many-BSP derivation (equation numbers as docs/manybsp.md gives them)
    "parallel_comp": "Cycles of one block's computation when its warps share the functional units "
                     "(eq. 10): the BLOCK table's unit columns summed over the supersteps.",
    "block_bar_ovh": "Cycles a block loses at its barriers (eq. 11): the ovh column summed.",
    "block_comm": "Cycles of one block's global-memory communication (eq. 12): the comm column summed.",
    "block_comm_delta": "The part of a block's communication that its own computation cannot cover "
                        "(eq. 16).",
    "COMP": "A block's computation cycles over all supersteps (eq. 5).",
    "warp_comp": "Computation cycles of one warp between two memory requests (eq. 15).",
    "warp_comm_delta": "Memory latency one warp must hide between two requests (eq. 15).",
    "warps_need": "Warps needed to hide the memory latency behind other warps' computation (eq. 15).",
    "nonoverlapped": "Communication cycles left exposed because fewer warps are resident than needed "
                     "(eq. 17).",
    "novlp": "Same as nonoverlapped: the exposed communication of a block (eq. 20).",
    "block_exec_cycle": "Cycles of one block on its own: barriers + exposed communication + computation "
                        "(eq. 4).",
    "comp": "A block's computation including its barrier overhead (eq. 19).",
    "rho": "ρ: blocks resident on one SM at a time, the smallest limit of threads, warps, block slots, "
           "registers and shared memory, at least 1 (eq. 21).",
    "K": "Waves: blocks per SM divided by the resident blocks ρ (eq. 22).",
    "tau": "τ: resident blocks needed so that one block's exposed communication is covered by the "
           "others' computation, ⌈novlp / comp⌉ + 1 (eq. 23).",
    "mu": "μ: the device's measured speed-up when several blocks compute on one SM at once (a profile "
          "constant).",
    "mu_term": "The speed-up the kernel gets from co-resident blocks: min{μ, (1 + ρ) / 2} (eq. 24).",
    "kernel_exec_cycle": "Many-BSP's predicted SM cycles for the kernel (eq. 24, plus eq. 25 when ρ < τ).",
    # model families and symbols the window and docs use
    "MWP-CWP": "Hong and Kim's analytical model: memory warp parallelism (requests that overlap) set "
               "against compute warp parallelism decides whether memory or computation bounds the time.",
    "WFG*": "The work-flow-graph model with source 001's correction: the cycles of each round count even "
            "when the memory latency is hidden.",
    "n_ma": "Memory transactions one warp access needs (coalescing): 1 when the 32 lanes fall in one "
            "transaction, up to 32 when every lane touches its own.",
    "τ": "See tau: resident blocks needed to hide one block's exposed communication.",
    "ρ": "See rho: blocks resident on one SM at a time.",
    "μ": "See mu: the device's speed-up from co-resident blocks.",
}
TERMS["τ"] = TERMS["tau"]
TERMS["ρ"] = TERMS["rho"]
TERMS["μ"] = TERMS["mu"]


def explain_term(name: str) -> str:
    """The explanation of ``name`` ("" when there is none)."""
    return TERMS.get(name, "")
