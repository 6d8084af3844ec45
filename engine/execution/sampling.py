"""Which blocks a run executes, and what each stands for.

Executing every block of a grid is the GPU's job, not ours; a run executes a sample sized to a
budget of lane-instructions and states what it stands for:

* **the window**: consecutive blocks in launch order from the middle of the grid: the middle of
  each of its dimensions (for a grid of an even number of rows, the linear middle would be the
  first block of a row, an edge block: a triangular loop's shortest, a stencil's boundary). They run
  concurrently, as the blocks of one wave do, so the caches see the reuse between neighbouring
  blocks; the window's first half only warms the caches (the blocks launched just before a block
  are what its L2 hits come from), its second half is *measured*: the cache hit levels and the
  DRAM bytes per block are taken from it.
* **the row before**: for a 2-D or 3-D grid, the same blocks one grid row (or plane) earlier,
  simulated in the caches before the window, so that a block finds in L2 what the row above it
  read (a stencil's halo, a GEMM's shared panel) when that row's data still fits.
* **spread blocks**: a few blocks evenly over the whole grid that only contribute their paths:
  loops whose trip counts or branches depend on the block index are averaged over the grid, not
  over the window. The first and the last block of the grid (whose addresses bound what the grid
  reaches), the others evenly in every dimension at once (the k-th of n at (k + 1/2) / n along x,
  at the base-2 and base-3 radical inverses of k along y and z): evenly spaced linear numbers
  would put them all in a few columns of a 2-D grid (x = 0 and the last x for a grid of an even
  number of rows), where a triangular loop is at its shortest and longest.

A grid small enough is executed whole: then every block is measured and nothing is extrapolated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WINDOW = "window"
BEFORE = "before"
SPREAD = "spread"
END = "end"                # the grid's first and last blocks: the span its addresses reach
GROUP = "sm group"
SPREAD_BLOCKS = 8          # blocks spread over the grid for the paths


@dataclass(frozen=True)
class Sample:
    """The executed blocks in execution order: their linear launch number, ``ctaid``, role, and
    whether the cache statistics are measured on them."""

    linear: tuple[int, ...]
    ctaid: tuple[tuple[int, int, int], ...]
    role: tuple[str, ...]
    measured: tuple[bool, ...]
    grid_blocks: int
    whole: bool

    @property
    def blocks(self) -> int:
        return len(self.linear)

    def describe(self) -> str:
        if self.whole:
            return f"all {self.grid_blocks:,} blocks"
        if self.role and all(r == GROUP for r in self.role):
            return f"{len(self.role)} of {self.grid_blocks:,} blocks, as one SM holds them at once"
        window = sum(r == WINDOW for r in self.role)
        measured = sum(self.measured)
        before = sum(r == BEFORE for r in self.role)
        spread = sum(r in (SPREAD, END) for r in self.role)
        parts = [f"{window} consecutive blocks from the middle of the grid ({measured} measured after "
                 f"{window - measured} that warm the caches)"]
        if before:
            parts.append(f"the {before} blocks one grid row or plane before them")
        if spread:
            parts.append(f"{spread} blocks spread over the grid for the paths")
        return f"{sum((window, before, spread)):,} of {self.grid_blocks:,} blocks: " + ", ".join(parts)


def _ctaid(linear: int, grid: tuple[int, int, int]) -> tuple[int, int, int]:
    return (linear % grid[0], linear // grid[0] % grid[1], linear // (grid[0] * grid[1]))


def _radical_inverse(k: int, base: int) -> float:
    """``k``'s digits in ``base`` mirrored behind the point (0, 1/2, 1/4, 3/4, ... in base 2): a
    sequence that fills [0, 1) evenly however many of its terms are taken."""
    inverse, scale = 0.0, 1.0 / base
    while k:
        k, digit = divmod(k, base)
        inverse += digit * scale
        scale /= base
    return inverse


def _spread_blocks(grid: tuple[int, int, int], n: int) -> list[int]:
    """``n`` blocks spread evenly over every dimension of ``grid`` (linear numbers)."""
    out = []
    for k in range(n):
        x = min(grid[0] - 1, int((k + 0.5) / n * grid[0]))
        y = min(grid[1] - 1, int(((_radical_inverse(k, 2) + 0.5 / n) % 1.0) * grid[1]))
        z = min(grid[2] - 1, int(((_radical_inverse(k, 3) + 0.5 / n) % 1.0) * grid[2]))
        out.append((z * grid[1] + y) * grid[0] + x)
    return out


def _middle(grid: tuple[int, int, int]) -> int:
    """The linear number of the block in the middle of every dimension of ``grid``."""
    return (grid[2] // 2 * grid[1] + grid[1] // 2) * grid[0] + grid[0] // 2


def choose_blocks(grid: tuple[int, int, int], max_blocks: int) -> Sample:
    """The sample of at most ``max_blocks`` blocks (at least one) for a launch of ``grid``."""
    total = grid[0] * grid[1] * grid[2]
    max_blocks = max(1, max_blocks)
    if total <= max_blocks:
        linear = tuple(range(total))
        return Sample(linear, tuple(_ctaid(b, grid) for b in linear), (WINDOW,) * total, (True,) * total,
                      total, True)
    spread_n = min(SPREAD_BLOCKS, max(0, max_blocks // 8))
    rest = max_blocks - spread_n
    row = grid[0] if grid[1] > 1 else grid[0] * grid[1] if grid[2] > 1 else 0
    use_before = row > 0 and rest >= 4
    window_n = max(1, rest // 2 if use_before else rest)
    start = max(0, min(total - window_n, _middle(grid) - window_n // 2))
    if use_before and start - row < 0:
        start = min(total - window_n, row)
        use_before = start - row >= 0
    window = list(range(start, start + window_n))
    inside = set(window)
    # the row before the window's blocks, those of it the window does not hold already (a grid
    # row shorter than the window: the row above its first blocks)
    before = [b - row for b in window if b - row not in inside] if use_before else []
    taken = set(window) | set(before)
    # the grid's first and last blocks (the span of addresses the grid reaches), the others evenly
    # over every dimension
    ends = [b for b in ([0, total - 1] if spread_n >= 2 else []) if b not in taken]
    spread = [b for b in dict.fromkeys(_spread_blocks(grid, spread_n - 2 if spread_n >= 2 else spread_n))
              if b not in taken and b not in ends]
    half = window_n // 2
    linear = tuple(before + window + ends + spread)
    role = (BEFORE,) * len(before) + (WINDOW,) * len(window) + (END,) * len(ends) + (SPREAD,) * len(spread)
    measured = ((False,) * len(before) + tuple(k >= half for k in range(len(window)))
                + (False,) * (len(ends) + len(spread)))
    return Sample(linear, tuple(_ctaid(b, grid) for b in linear), role, measured, total, False)


def sm_group(grid: tuple[int, int, int], sms: int, resident: int, size: int) -> Sample:
    """``size`` blocks that one SM holds at once, for the L1 they share: the block in the middle
    of the grid and ``size - 1`` others of its wave. A wave is the ``sms x resident`` blocks
    launched together; which of them an SM receives depends on the block scheduler (the first
    wave's order over GPCs, then whichever SM frees a slot first), so the others are drawn
    evenly at random from that wave, the same draw every time."""
    total = grid[0] * grid[1] * grid[2]
    wave = max(1, sms * resident)
    centre = total // 2
    first = max(0, min(total - wave, centre - wave // 2))
    others = [b for b in range(first, min(total, first + wave)) if b != centre]
    rng = np.random.default_rng(0x5EED + wave)
    count = max(0, min(size - 1, len(others)))
    chosen = sorted(rng.choice(len(others), size=count, replace=False).tolist()) if count else []
    linear = tuple([centre] + [others[i] for i in chosen])
    return Sample(linear, tuple(_ctaid(b, grid) for b in linear), (GROUP,) * len(linear),
                  (True,) * len(linear), total, False)
