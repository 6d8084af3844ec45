"""L2 serves gathers' line requests and atomics' lanes alike: the L2 time of a kernel's lone-line
gathers joins its global atomics' λ on L2's atomic units (engine/memory/costs.py). Checked on the
l2_kinds microbenchmark measured on the H100 (bench/micro_model_check.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import api
from engine.mechanisms import without

ROOT = Path(__file__).resolve().parents[1]
PTX = ROOT / "bench" / "micro" / "ptx" / "l2_kinds.sm_90.ptx"
MIXED = "_Z7k_mixedPKfPfjj"
WORDS_8MB = (8 << 20) // 4
MEASURED_MIXED_8MB = 321_317      # gpc__cycles_elapsed.max, l2_kinds k_mixed at 8 MB


def _cycles() -> float:
    kernel = api.open(PTX, MIXED, profile="h100", grid=1056, block=256, args={2: WORDS_8MB // 2, 3: 40001})
    cycles = kernel.evaluate(models=["pipeline"]).models["pipeline"].kernel_cycles
    assert cycles is not None
    return cycles


def test_a_gather_beside_a_red_takes_the_two_added():
    """k_mixed (a gathered word and a RED per lane, 8 MB, all L2 hits): measured 4.90 SM cycles a
    pair where k_gather and k_red take 2.04 and 2.98 alone. The atomic units alone said 245k."""
    assert _cycles() == pytest.approx(MEASURED_MIXED_8MB, rel=0.1)


def _atomic_lams(kernel_name: str, args: dict[int, int]) -> list[float]:
    ev = api.open(PTX, kernel_name, profile="h100", grid=1056, block=256, args=args).evaluate(models=["pipeline"])
    d = ev.description
    assert d is not None
    return [float(ins.lam) for ins in d.instructions if d.subsystems[ins.unit] == "l2_atomic"]


def test_the_atomics_carry_the_gathers_l2_time():
    """Per atomic, k_mixed's λ on L2's atomic units is k_red's plus its gather's L2 time (a line
    request per lane at L2's rate of bytes: about 1.05 of 3.66 SM cycles per lane)."""
    red = _atomic_lams("_Z5k_redPfjj", {1: WORDS_8MB, 2: 16001})
    mixed = _atomic_lams(MIXED, {2: WORDS_8MB // 2, 3: 40001})
    assert red and mixed
    assert 1.15 < (sum(mixed) / len(mixed)) / (sum(red) / len(red)) < 1.5
    with without(["atomic_units"]):
        assert _atomic_lams(MIXED, {2: WORDS_8MB // 2, 3: 40001}) == []     # on the memory pipe
