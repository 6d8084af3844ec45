"""What the compiler conventions and the rule for unknown values supply, value by value."""

from __future__ import annotations

from dataclasses import dataclass

# How a value was obtained. CERTAIN values follow exactly from the signature and from values the
# launch gives or that were themselves supplied (a C-order array's strides from its shape).
# The others are guesses: listed as assumptions, and every figure they enter is marked.
DERIVED = "derived"              # exact consequence (certain)
CONVENTION = "convention"        # the compiler's usual layout, not guaranteed (numba 'A' arrays, Triton)
COVERAGE = "launch covers the data"
STAND_IN = "stand-in"

# The value an integer argument takes when no rule gives it one: a mid-sized extent. Loops
# bounded by it run, guards comparing an index with it keep their lanes, and as a row stride it
# puts rows in different lines, as real matrices of that size do. Assumptions show how much the
# prediction moves at twice the value.
STAND_IN_VALUE = 1024


@dataclass(frozen=True)
class SuppliedValue:
    """One argument value the launch did not give, and why it is what it is."""

    index: int                 # the kernel parameter
    value: int
    how: str                   # DERIVED, CONVENTION, COVERAGE or STAND_IN
    rule: str                  # one sentence: where the value comes from
    label: str                 # what the parameter is ("array argument 2 .strides[0]", "argument 6")
    group: str                 # values assumed together share one alternative (and one effect)
    role: str = ""             # "shape", "stride", "size", "itemsize", "nitems", "integer"

    @property
    def certain(self) -> bool:
        return self.how == DERIVED


@dataclass(frozen=True)
class Completion:
    """The launch's arguments completed: ``args`` by parameter index (given ones included)."""

    frontend: str
    args: dict[int, int | float]
    supplied: tuple[SuppliedValue, ...]

    def supplied_for(self, index: int) -> SuppliedValue | None:
        return next((s for s in self.supplied if s.index == index), None)

    def pinned(self, except_group: str | None = None, coverage: bool = True) -> dict[int, int]:
        """The guessed values other values follow from (sizes, shapes, stand-ins), by parameter,
        except ``except_group``'s (and, ``coverage`` False, those that follow the launch): an
        alternative gives them explicitly so that changing one input leaves the other guesses
        as they were, while what is derived from it (strides, nitems) follows."""
        return {s.index: int(s.value) for s in self.supplied
                if s.how in (COVERAGE, STAND_IN) and s.group != except_group
                and (coverage or s.how != COVERAGE)}
