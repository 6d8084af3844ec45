"""The Pipeline model (001): kernel descriptions, the simulator and its trace, analytical peers.

Public entry points:

* :class:`KernelDescription` (+ :class:`Run`, :class:`Loop`, :func:`make_instruction`): plain data;
* :func:`simulate` -> :class:`SimulationResult` (cycles, trace tables, aggregates);
* :func:`all_peers` and the single models in :mod:`engine.pipeline.peers`;
* PTX front end: :func:`build_description`, :func:`describe_kernel` with :class:`PipelineOverrides`.

A model's figures for a kernel come from ``engine.evaluation.Evaluator.evaluate`` only (the
occupancy sweep too: ``engine.evaluation.occupancy_sweep``); this package gives it the parts.
"""

from engine.pipeline.adapter import (
    PipelineOverrides,
    build_description,
    cost_table,
    describe_kernel,
    ratio_memory_cost,
)
from engine.pipeline.description import KernelDescription, Loop, Run, StaticInstruction, make_instruction
from engine.pipeline.peers import PEERS, ModelPrediction, all_peers
from engine.pipeline.simulator import POLICIES, SimulationResult, simulate
from engine.pipeline.trace import STALL_CAUSES, Aggregates, Trace

__all__ = [
    "PEERS", "POLICIES", "STALL_CAUSES", "Aggregates", "KernelDescription", "Loop", "ModelPrediction",
    "PipelineOverrides", "Run", "SimulationResult", "StaticInstruction", "Trace", "all_peers",
    "build_description", "cost_table", "describe_kernel", "make_instruction",
    "ratio_memory_cost", "simulate",
]
