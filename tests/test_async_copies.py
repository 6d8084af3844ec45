"""Asynchronous copies (mechanism async_copy_queues): cp.async keeps the memory pipe for its L1
time, queues at L2 and DRAM, and cp.async.wait_group waits for the groups it names."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from engine import api
from engine.evaluation import Evaluation
from engine.mechanisms import without
from engine.pipeline._core import ASYNC_COMMIT, ASYNC_COPY, ASYNC_WAIT, ASYNC_WAIT_ALL
from engine.pipeline.adapter import async_copy_ops

V3 = Path(__file__).resolve().parents[1] / "samples" / "v3"


def _instr(text: str) -> SimpleNamespace:
    opcode = text.split()[0].rstrip(";")
    return SimpleNamespace(full_opcode=opcode, text=text)


def test_the_copy_group_instructions_are_told_apart() -> None:
    ops = async_copy_ops([_instr("cp.async.cg.shared.global [%r1], [%rd1], 16;"), _instr("cp.async.commit_group;"),
                          _instr("cp.async.wait_group 1;"), _instr("cp.async.wait_group 0x2;"),
                          _instr("cp.async.wait_all;"), _instr("cp.async.bulk.commit_group;"),
                          _instr("ld.global.f32 %f1, [%rd2];")])
    assert ops == {0: (ASYNC_COPY, 0), 1: (ASYNC_COMMIT, 0), 2: (ASYNC_WAIT, 1), 3: (ASYNC_WAIT, 2),
                   4: (ASYNC_WAIT_ALL, 0)}


def _hgemm(models: tuple[str, ...] = ("pipeline",)) -> Evaluation:
    kernel = api.open(V3 / "ptx" / "tcgemm.sm_90.ptx", profile="h100", launch=V3 / "tcgemm.launch.toml",
                      config="hgemm_mma_ldmatrix/m2048n2048k2048")
    return kernel.evaluate(models=list(models))


def test_a_copy_holds_the_pipe_for_its_l1_time_and_the_wait_for_its_data() -> None:
    """hgemm_mma_ldmatrix's double-buffered copies: each cp.async keeps the memory pipe for its L1
    time and L2 for its lines; its result is a load's latency later, the instruction after each
    wait_group reads the wait, and the simulation is faster than with the copies holding the pipe
    for their L2 time (the copies of the next tile overlap the mma of this one)."""
    ev = _hgemm()
    d = ev.description
    copies = [x for x in d.instructions if x.async_op == ASYNC_COPY]
    waits = [i for i, x in enumerate(d.instructions) if x.async_op == ASYNC_WAIT]
    queued = [x for x in copies if x.level_lam != (0.0, 0.0)]
    assert waits and len(queued) >= len(copies) / 2  # the rest: copies the run found no pattern for
    for x in queued:
        assert x.level_lam[0] > float(x.lam)
        assert float(x.Lam) > 100                    # an L2 latency, not the issue's
    for i in waits:
        after = next(j for j in range(i + 1, len(d.instructions)) if i in d.instructions[j].deps)
        assert after <= i + 3
    with without(["async_copy_queues"]):
        held = _hgemm()
    assert all(x.async_op == 0 and x.level_lam == (0.0, 0.0) for x in held.description.instructions)
    assert ev.models["pipeline"].kernel_cycles < 0.9 * held.models["pipeline"].kernel_cycles


def test_many_bsp_star_keeps_the_one_pipe_view_of_a_copy() -> None:
    """Many-BSP* has no copy groups: a cp.async is done once the one memory pipe has taken it,
    as before the simulator queued copies beside the pipe."""
    from engine.evaluation.manybsp_at import access_costs

    ev = _hgemm(("pipeline", "manybsp_star"))
    assert ev.manybsp is not None and ev.description is not None
    costs = access_costs(ev.manybsp, ev.description)
    copies = [i for i, x in enumerate(ev.description.instructions) if x.async_op == ASYNC_COPY]
    assert copies
    for i in copies:
        cost = costs[i + 1]
        assert cost.Lam == cost.lam == ev.description.instructions[i].memory_pipe_lam
