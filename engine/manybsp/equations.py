"""Equations (4)-(25) of 000: from the level-1 supersteps of one block to kernel cycles.

Every intermediate is kept with its unrounded value and its formula text so that a front end can
show the derivation. Rounding follows what reproduces 000's nine worked cases (see
``docs/manybsp.md``): ceil for warp_comp, nonoverlapped, tau and kernel_exec_cycle; floor in every
term of rho; a 0-byte shared-memory (or 0-register) request sets no limit.

Arithmetic is exact (``fractions.Fraction``) so that a ceil never moves because of a binary
rounding error (``3.36`` is read as 336/100, not as the nearest double).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Protocol

from engine.errors import ModelError
from engine.manybsp.rows import ManyBspParams
from engine.occupancy import manybsp_rho


@dataclass(frozen=True)
class Quantity:
    """One intermediate of the derivation: rounded value (what the equations carry on), the exact
    value, the equation number and the formula with the numbers substituted."""

    name: str
    value: float
    exact: float
    equation: str
    formula: str


@dataclass(frozen=True)
class Level1Input:
    """What the equations need of a level-1 superstep: its costs and iteration count."""

    comp: float
    comm: float
    ovh: float
    iterations: int


class Level1Like(Protocol):
    """Level1Input or supersteps.Level1Superstep: anything with these four numbers."""

    comp: float
    comm: float
    ovh: float
    iterations: int


@dataclass
class Prediction:
    """Every intermediate of eqs. (4)-(25) by name (``quantities``), plus the final cycles."""

    quantities: dict[str, Quantity] = field(default_factory=dict)
    branch: str = "eq. 24"
    notes: list[str] = field(default_factory=list)   # where an equation needed a reading of ours

    def __getitem__(self, name: str) -> float:
        return self.quantities[name].value

    @property
    def kernel_exec_cycle(self) -> float:
        return self.quantities["kernel_exec_cycle"].value

    def as_dict(self) -> dict[str, float]:
        return {name: q.value for name, q in self.quantities.items()}


def _f(x: float | int | Fraction) -> Fraction:
    """Exact value of a parameter: decimal text for floats (3.36 -> 336/100)."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    return Fraction(repr(float(x)))


def _ceil(x: Fraction) -> int:
    return -((-x.numerator) // x.denominator)


def _floor(x: Fraction) -> int:
    return x.numerator // x.denominator


def _out(x: Fraction) -> float | int:
    return int(x) if x.denominator == 1 else float(x)


def _fmt(x: float | int | Fraction) -> str:
    if isinstance(x, Fraction):
        x = _out(x)
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    return f"{x:g}" if isinstance(x, float) else str(x)


def evaluate(params: ManyBspParams, level1: Sequence[Level1Like], last_level2_comm: float) -> Prediction:
    """Eqs. (4)-(25) for one kernel. ``last_level2_comm`` is the comm of the last level-2 superstep
    (the final global store), which block_comm_delta excludes because nothing can overlap it."""
    if not level1:
        raise ModelError("Many-BSP: no level-1 supersteps (the kernel has no instructions)")
    if params.n_t <= 0 or params.n_b <= 0:
        raise ModelError(f"Many-BSP: empty launch (n_b={params.n_b}, n_t={params.n_t})")
    if params.n_SM <= 0 or params.n_ws <= 0 or params.warp_size <= 0:
        raise ModelError("Many-BSP: n_SM, n_ws and warp_size must be positive")
    for i, step in enumerate(level1, start=1):
        if step.iterations < 0:
            raise ModelError(f"Many-BSP: level-1 superstep {i} has a negative iteration count")

    pred = Prediction()
    q = pred.quantities

    def put(name: str, exact: Fraction, value: Fraction | int, eq: str, formula: str) -> Fraction:
        value = Fraction(value)
        q[name] = Quantity(name, _out(value), float(exact), eq, f"{formula} = {_fmt(value)}")
        return value

    w = Fraction(params.w)
    terms = [(s.iterations, _f(s.comp), _f(s.comm), _f(s.ovh)) for s in level1]
    pc = sum((t * c for t, c, _, _ in terms), Fraction(0))
    put("parallel_comp", pc, pc, "eq. 10",
        " + ".join(f"{t} × {_fmt(c)}" for t, c, _, _ in terms))
    bo = sum((t * o for t, _, _, o in terms), Fraction(0))
    put("block_bar_ovh", bo, bo, "eq. 11", " + ".join(f"{t} × {_fmt(o)}" for t, _, _, o in terms))
    bc = sum((t * m for t, _, m, _ in terms), Fraction(0))
    put("block_comm", bc, bc, "eq. 12", " + ".join(f"{t} × {_fmt(m)}" for t, _, m, _ in terms))
    last = _f(last_level2_comm) if bc > 0 else Fraction(0)
    bcd = max(Fraction(0), bc - last)
    put("block_comm_delta", bcd, bcd, "eq. 16",
        f"block_comm − comm of the last level-2 superstep = {_fmt(bc)} − {_fmt(last)}")

    comp_big = w * _f(params.warp_lnch_ovh) + pc
    put("COMP", comp_big, comp_big, "eq. 5", f"{_fmt(w)} × {_fmt(params.warp_lnch_ovh)} + {_fmt(pc)}")
    wc_exact = comp_big / w
    warp_comp = put("warp_comp", wc_exact, _ceil(wc_exact), "eq. 15", f"⌈{_fmt(comp_big)} / {_fmt(w)}⌉")
    wcd = bcd / w
    put("warp_comm_delta", wcd, wcd, "eq. 15", f"{_fmt(bcd)} / {_fmt(w)}")

    l_c, l_m = _f(params.l_c), _f(params.l_m)
    denominator = warp_comp * (l_m - 1)
    if wcd == 0:
        ratio = Fraction(0)
    elif warp_comp <= 0:
        raise ModelError("Many-BSP eq. 15: warp_comp is 0 while warp_comm_Δ > 0")
    elif denominator <= 0:
        # l_m <= 1: one global access per warp, so no later access can hide it; eq. 15's
        # per-access ratio is undefined and no extra warps help: take the ceil term as 0.
        ratio = Fraction(0)
        pred.notes.append(f"eq. 15: l_m = {_fmt(l_m)} (at most one global access), "
                          "the ratio term is taken as 0")
    else:
        ratio = wcd * l_c / denominator
    wn_exact = params.n_ws * (ratio + 1)
    warps_need = put("warps_need", wn_exact, params.n_ws * (_ceil(ratio) + 1), "eq. 15",
                     f"{params.n_ws} × (⌈{_fmt(wcd)} × {_fmt(l_c)} / "
                     f"({_fmt(warp_comp)} × ({_fmt(l_m)} − 1))⌉ + 1)")

    mem_lat = _f(params.mem_lat)
    hidden = max(Fraction(0), 1 - w * params.n_ws / warps_need)
    second = mem_lat + bcd / w * hidden
    no_exact = min(bc / w, second)
    novlp = put("nonoverlapped", no_exact, _ceil(no_exact), "eq. 17",
                f"⌈min{{{_fmt(bc)} / {_fmt(w)}, {_fmt(mem_lat)} + {_fmt(bcd)} / {_fmt(w)} × "
                f"max(0, 1 − {_fmt(w)} × {params.n_ws} / {_fmt(warps_need)})}}⌉")
    blo = _f(params.block_lnch_ovh)
    bec = blo + bo + novlp + comp_big
    put("block_exec_cycle", bec, bec, "eq. 4",
        f"{_fmt(blo)} + {_fmt(bo)} + {_fmt(novlp)} + {_fmt(comp_big)}")
    comp = put("comp", comp_big + bo, comp_big + bo, "eq. 19", f"{_fmt(comp_big)} + {_fmt(bo)}")
    put("novlp", novlp, novlp, "eq. 20", "nonoverlapped")

    # engine.occupancy.manybsp_rho is the one implementation of eq. (21); max{1, .} is eq. 21's.
    rho_v = max(1, manybsp_rho(params.to_dict()))
    shown = [f"⌊{params.max_thread_per_sm} / {params.n_t}⌋"]
    if params.reg_per_thread > 0:
        shown.append(f"⌊{params.n_reg} / ({params.n_t} × {params.reg_per_thread})⌋")
    if params.shmem_per_block > 0:
        shown.append(f"⌊{params.shmem_size} / {params.shmem_per_block}⌋")
    rho = put("rho", Fraction(rho_v), rho_v, "eq. 21", f"max{{1, min{{{', '.join(shown)}}}}}")
    k = Fraction(params.n_b) / (params.n_SM * rho)
    put("K", k, k, "eq. 22", f"{params.n_b} / ({params.n_SM} × {_fmt(rho)})")
    if comp <= 0:
        raise ModelError("Many-BSP eq. 23: comp is 0 (the kernel costs nothing)")
    tau = put("tau", novlp / comp + 1, _ceil(novlp / comp) + 1, "eq. 23",
              f"⌈{_fmt(novlp)} / {_fmt(comp)}⌉ + 1")
    mu = put("mu", _f(params.mu), _f(params.mu), "eq. 24", "device constant μ")
    mu_term = min(mu, (1 + rho) / 2)
    put("mu_term", mu_term, mu_term, "eq. 24", f"min{{{_fmt(mu)}, (1 + {_fmt(rho)}) / 2}}")
    kec = blo + Fraction(params.n_b, params.n_SM) * comp / mu_term + novlp / 2
    formula = (f"⌈{_fmt(blo)} + {params.n_b} / {params.n_SM} × {_fmt(comp)} / {_fmt(mu_term)} + "
               f"{_fmt(novlp)} / 2")
    if rho < tau:
        pred.branch = "eq. 25"
        waves_after_first = k - 1
        if k < 1:
            # Outside eq. 25's domain: a grid smaller than one wave (K < 1) has no later wave to
            # overlap; K − 1 < 0 would subtract time (a negative kernel). The rule: max(0, K − 1).
            waves_after_first = Fraction(0)
            put("K_beyond_first_wave", waves_after_first, waves_after_first, "domain rule",
                f"max(0, K − 1) = max(0, {_fmt(k)} − 1): the grid is smaller than one wave")
        kec += waves_after_first * (tau - rho) / (tau - 1) * novlp
        formula += (f" + {_fmt(waves_after_first)} × ({_fmt(tau)} − {_fmt(rho)}) / ({_fmt(tau)} − 1) "
                    f"× {_fmt(novlp)}" if k < 1 else
                    f" + ({_fmt(k)} − 1) × ({_fmt(tau)} − {_fmt(rho)}) / ({_fmt(tau)} − 1) × {_fmt(novlp)}")
    put("kernel_exec_cycle", kec, _ceil(kec), pred.branch, formula + "⌉")
    if math.isnan(float(kec)):
        raise ModelError("Many-BSP: kernel_exec_cycle is not a number")
    if kec <= 0:
        raise ModelError(f"Many-BSP: eqs. 10-25 give {float(kec):g} cycles for these inputs (not a time); "
                         "see the derivation")
    return pred
