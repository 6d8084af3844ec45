"""What the integers in a kernel's buffers look like, as the user declares them.

An address computed from a loaded integer (a gather's index, a CSR row start, a permutation)
depends on data no static analysis can see. Without a word from the user the memory analysis
uses stand-in values (pseudo-random: ``engine.memory.lane_addresses``). A launch may instead say, per
pointer argument, what the integers it points to are:

``random:LO:HI``
    independent, uniform in ``[LO, HI)`` (indices into a table of HI - LO entries, a permutation);
``linear:SLOPE[:OFFSET]``
    element ``e`` holds ``floor(SLOPE·e + OFFSET)``: sorted indices that cover their range evenly
    (``linear:1``), CSR row starts with a mean of 16 non-zeros per row (``linear:16``);
``offsets:LO:HI``
    the starts of consecutive segments (CSR row pointers) whose lengths are independent uniform
    integers in ``[LO, HI]``: element ``e`` holds the sum of the lengths before it. The lengths
    repeat every 2^20 segments, so that any element's value is known from one table of prefix
    sums (a warp's or a block's rows see no difference);
``constant:V``
    every element is ``V``;
``uniform:LO:HI``
    floating-point data, independent and uniform in ``[LO, HI)`` (inputs a branch or a loop on
    their values depends on: the range decides how often a slow path runs). Integer reads of
    such a buffer learn nothing from it.

A declared pattern is the user's statement about the data, so unlike the stand-in it may also
decide which lanes run a branch (a CSR row's lanes ``p < rowptr[r + 1]``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from engine.errors import LaunchError


class DataPattern(StrEnum):
    """The kind of a :class:`LoadedData` pattern, as written before the first ``:``."""

    RANDOM = "random"
    LINEAR = "linear"
    OFFSETS = "offsets"
    CONSTANT = "constant"
    UNIFORM = "uniform"


KINDS = tuple(DataPattern)
# Lane enumeration gives each pointer argument without a value its own 2^40-aligned window, so
# the high bits of an address name the buffer (and different arrays never share a sector).
BUFFER_SHIFT = 40
_LIMIT = float(1 << 62)     # values beyond this would overflow the 64-bit lane arithmetic


@dataclass(frozen=True)
class LoadedData:
    """One buffer's integers: ``kind`` and its two numbers (``random``, ``offsets``: lo, hi;
    ``linear``: slope, offset; ``constant``: the value, 0)."""

    kind: DataPattern
    a: float
    b: float = 0.0

    @property
    def text(self) -> str:
        def num(x: float) -> str:
            return str(int(x)) if float(x).is_integer() else repr(float(x))
        if self.kind == DataPattern.CONSTANT:
            return f"constant:{num(self.a)}"
        return f"{self.kind}:{num(self.a)}:{num(self.b)}"

    def values(self, element: np.ndarray, address: np.ndarray) -> np.ndarray:
        """The integers at the given element indices (``address``: their byte addresses, which
        seed the random kind so that equal addresses give equal values)."""
        if self.kind == DataPattern.CONSTANT:
            return np.full(element.shape, int(self.a), dtype=np.int64)
        if self.kind == DataPattern.LINEAR:
            return np.floor(self.a * element.astype(np.float64) + self.b).astype(np.int64)
        if self.kind == DataPattern.OFFSETS:
            starts = _segment_starts(int(self.a), int(self.b))
            periods, within = np.divmod(element.astype(np.int64), OFFSETS_PERIOD)
            return periods * starts[-1] + starts[within]
        return int(self.a) + scrambled(address, int(self.b) - int(self.a))


OFFSETS_PERIOD = 1 << 20     # segments after which an ``offsets`` pattern's lengths repeat


@functools.lru_cache(maxsize=8)
def _segment_starts(lo: int, hi: int) -> np.ndarray:
    """Prefix sums of one period of segment lengths uniform in [lo, hi] (OFFSETS_PERIOD + 1
    values, the last the period's total). Seeded by the segment's index, not by an address, so
    the same buffer read through another pointer gives the same segments."""
    lengths = lo + scrambled(np.arange(OFFSETS_PERIOD, dtype=np.int64), hi - lo + 1)
    starts = np.zeros(OFFSETS_PERIOD + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    starts.flags.writeable = False
    return starts


def pointer_base(index: int) -> int:
    """Where lane enumeration places pointer argument ``index`` when it has no value."""
    return (index + 1) << BUFFER_SHIFT


def declared_buffer(address: np.ndarray, params: Sequence[Any], values: Any) -> tuple[int, LoadedData] | None:
    """The pointer argument (index) whose window all of ``address`` falls in, and the data the
    launch (a ``LaunchValues``) declares for it; None when the addresses straddle windows, the
    argument has a value of its own, or nothing is declared."""
    if not len(address):
        return None
    high = np.unique(address >> BUFFER_SHIFT)
    if len(high) != 1 or not 1 <= int(high[0]) <= len(params):
        return None
    index = int(high[0]) - 1
    if values.argument(index, params[index].name) is not None:
        return None
    data = values.loaded_data(index, params[index].name)
    return (index, data) if data is not None and data.kind != DataPattern.UNIFORM else None


def scrambled(address: np.ndarray, span: int) -> np.ndarray:
    """Pseudo-random values in ``[0, span)``, equal for equal addresses: SplitMix64's finaliser of
    the address. (A bare multiplicative hash is not enough: over consecutive addresses it steps
    by a constant modulo the span, so a ``random`` index buffer read in order covered an eighth
    of a 4M-entry table's lines, and gathers through it hit in L2 as no random table does.)"""
    with np.errstate(over="ignore"):
        z = address.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z % np.uint64(max(span, 1))).astype(np.int64)


def parse_loaded_data(text: object) -> LoadedData:
    """``random:LO:HI``, ``linear:SLOPE[:OFFSET]``, ``offsets:LO:HI`` or ``constant:V``; LaunchError
    otherwise."""
    if not isinstance(text, str):
        raise LaunchError(f"a data pattern is written as text such as 'random:0:1000', got {text!r}")
    kind, _, rest = text.strip().partition(":")
    parts = rest.split(":") if rest else []
    if kind not in KINDS:
        raise LaunchError(f"data pattern {text!r}: the kind must be one of {', '.join(KINDS)}")
    expected = {"random": (2,), "linear": (1, 2), "offsets": (2,), "constant": (1,), "uniform": (2,)}[kind]
    if len(parts) not in expected:
        forms = {"random": "random:LO:HI", "linear": "linear:SLOPE[:OFFSET]", "offsets": "offsets:LO:HI",
                 "constant": "constant:V", "uniform": "uniform:LO:HI"}
        raise LaunchError(f"data pattern {text!r}: write it as {forms[kind]}")
    numbers: list[float] = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            raise LaunchError(f"data pattern {text!r}: {part!r} is not a number") from None
        if not math.isfinite(value) or abs(value) > _LIMIT:
            raise LaunchError(f"data pattern {text!r}: {part!r} is not a finite number of at most 2^62")
        numbers.append(value)
    if kind in ("random", "offsets", "constant") and not all(x.is_integer() for x in numbers):
        raise LaunchError(f"data pattern {text!r}: {kind} takes integers")
    if kind in ("random", "uniform") and numbers[1] <= numbers[0]:
        raise LaunchError(f"data pattern {text!r}: HI must be above LO")
    if kind == "offsets" and not 0 <= numbers[0] <= numbers[1]:
        raise LaunchError(f"data pattern {text!r}: segment lengths need 0 <= LO <= HI")
    return LoadedData(DataPattern(kind), numbers[0], numbers[1] if len(numbers) > 1 else 0.0)
