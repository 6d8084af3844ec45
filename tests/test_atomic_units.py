"""Global atomics on L2's atomic units (mechanism atomic_units): a subsystem of their own, so the
loads of other warps do not queue behind them on the SM's memory pipe."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.evaluation import Evaluator, state_for
from engine.inputs import resolve_inputs
from engine.mechanisms import without
from engine.pipeline.adapter import L2_ATOMIC_SUBSYSTEM
from engine.profiles import load_profile
from engine.timeline.labels import subsystem_label
from tests.micro_script import make_profile_module

V2 = Path(__file__).resolve().parents[1] / "samples" / "v2"


def _evaluate(family: str, config: str, kernel: str | None = None):
    inputs = resolve_inputs(V2 / "ptx" / f"{family}.sm_90.ptx", profile="h100", kernel=kernel,
                            launch_file=V2 / f"{family}.launch.toml", config=config)
    return Evaluator().evaluate(inputs, state_for(inputs), trace=False)


def _units(ev) -> dict[str, set[str]]:
    """Subsystem name -> the opcodes of the instructions issued to it."""
    d = ev.description
    out: dict[str, set[str]] = {}
    for ins in d.instructions:
        out.setdefault(d.subsystems[ins.unit], set()).add(ins.name.split()[0].lstrip("@%p0123456789! "))
    return out


def test_a_global_atomic_issues_to_l2s_atomic_units_and_loads_stay_on_the_pipe() -> None:
    units = _units(_evaluate("atomics", "atomic_spread_global/b256", "atomic_spread_global"))
    assert any(op.startswith(("red.global", "atom.global")) for op in units[L2_ATOMIC_SUBSYSTEM])
    assert any(op.startswith("ld.global") for op in units["ldst"])
    assert not any(op.startswith(("red", "atom")) for op in units["ldst"])
    assert subsystem_label(L2_ATOMIC_SUBSYSTEM) == "L2 atomics"


def test_without_the_mechanism_atomics_share_the_memory_pipe() -> None:
    with without(["atomic_units"]):
        ev = _evaluate("atomics", "atomic_spread_global/b256", "atomic_spread_global")
    assert L2_ATOMIC_SUBSYSTEM not in ev.description.subsystems
    assert any(op.startswith(("red.global", "atom.global")) for op in _units(ev)["ldst"])


def test_a_shared_atomic_stays_on_the_pipe_and_a_read_atomic_still_waits() -> None:
    shared = _units(_evaluate("atomics", "atomic_same_shared/b256", "atomic_same_shared"))
    assert not any(op.startswith("atom.shared") for op in shared.get(L2_ATOMIC_SUBSYSTEM, set()))
    assert any(op.startswith("atom.shared") for op in shared["ldst"])
    # a compare-and-swap whose old value the loop tests: L2's atomic units run it, and the warp
    # waits for its answer (a memory latency), unlike a RED
    ev = _evaluate("atomics", "atomic_cas_max/b256", "atomic_cas_max")
    d = ev.description
    cas = next(ins for ins in d.instructions if "atom.global.cas" in ins.name)
    assert d.subsystems[cas.unit] == L2_ATOMIC_SUBSYSTEM
    assert cas.memory and float(cas.Lam) > 100 > float(cas.lam)


def test_loads_no_longer_wait_behind_atomics_at_low_occupancy() -> None:
    """Two blocks per SM: the atomics' throughput bounds the kernel on the GPU at every occupancy
    (ncu: 415 K cycles at 16 blocks per SM, 452 K at 2); on one pipe the model made the loads
    wait behind them, 1.5 times the full-occupancy time."""
    on = _evaluate("atomics", "atomic_spread_global/b256-smem100k", "atomic_spread_global")
    with without(["atomic_units"]):
        off = _evaluate("atomics", "atomic_spread_global/b256-smem100k", "atomic_spread_global")
    assert on.models["pipeline"].sm_cycles < 0.9 * off.models["pipeline"].sm_cycles


@pytest.mark.parametrize("key", ["h100", "h200"])
def test_the_lane_rate_is_the_kernels_time_per_atomic(key) -> None:
    """Calibrated for this mechanism: the whole kernel time per atomic lane (its loads run beside
    the atomics), not less the loads' DRAM time as when both shared the pipe."""
    script = make_profile_module()
    launch_cycles, _ = script.empty_kernel_cycles(script.GPUS[key].empty_kernels)
    value, where = script.distinct_address_atomic_cycles(key, launch_cycles, script.SM_COUNT)
    assert load_profile(key).pipeline.memory["atomic_distinct_lane_lam"] == pytest.approx(value)
    assert "less" not in where
