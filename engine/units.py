"""Functional-unit classes shared by the classification, the profiles and both models."""

from __future__ import annotations

from enum import Enum, StrEnum


# str() and format() of these members give "Unit.ALU", a StrEnum's give "alu": kept as (str, Enum)
# until every text that formats a member is checked (the newer kinds are StrEnums).
class Unit(str, Enum):  # noqa: UP042
    """Where an instruction executes. The value is the name used in profile files."""

    ALU = "alu"          # integer and FP32 pipelines (Many-BSP: SPs, FU1)
    FP64 = "fp64"        # double-precision units (Many-BSP: DPU, FU2)
    SFU = "sfu"          # special functions, conversions that use the SFU (Many-BSP: SFU, FU3)
    LDST = "ldst"        # loads, stores, atomics (Many-BSP: LDST, FU4)
    TENSOR = "tensor"    # mma / wgmma
    CONTROL = "control"  # branches, calls, returns
    BARRIER = "barrier"  # bar.sync / barrier.sync and friends


# Many-BSP's four functional-unit columns. Units outside them are charged to FU1 (the SPs),
# which is what 000 does for branches and moves.
MANYBSP_FU_COLUMN: dict[Unit, int] = {
    Unit.ALU: 1,
    Unit.FP64: 2,
    Unit.SFU: 3,
    Unit.LDST: 4,
    Unit.TENSOR: 1,
    Unit.CONTROL: 1,
    Unit.BARRIER: 1,
}


class AccessKind(StrEnum):
    """What a memory instruction does with its address (``AccessInfo.kind``, the recorder's
    kinds). A member equals its value, which is what JSON, CSV and text show."""

    LOAD = "load"
    STORE = "store"
    ATOMIC = "atomic"


class MemorySpace(str, Enum):  # noqa: UP042 (see Unit)
    NONE = "none"
    GLOBAL = "global"
    SHARED = "shared"
    LOCAL = "local"
    CONST = "const"
    PARAM = "param"
    TEXTURE = "tex"
    GENERIC = "generic"  # no state space in the opcode: resolved at run time
