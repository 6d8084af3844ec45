"""SASS opcodes sorted into Warpline's unit classes (the values of ``engine.units.Unit``).

The sorting follows the PTX classification's conventions (``engine.analysis.classify``) so that
a PTX instruction and the SASS it becomes land on the same pipeline: conversions between integer
and floating types share the SFU's issue rate, shuffles go through the LSU, anything with a
64-bit float operand runs on the FP64 units. Uniform-datapath instructions (``U*``, ``ULDC``) are
charged to ``alu``: they take an issue slot but no LSU or SFU bandwidth.
"""

from __future__ import annotations

from functools import lru_cache

_CONTROL = frozenset("BRA BRX JMP JMX CALL RET EXIT BSSY BSYNC BREAK BMOV KILL NANOSLEEP YIELD BPT RPCMOV "
                     "WARPSYNC NOP ACQBULK PREEXIT".split())
_BARRIER = frozenset("BAR MEMBAR ERRBAR CGAERRBAR DEPBAR FENCE SYNCS ARRIVES WARPGROUP".split())
_TENSOR = frozenset("HMMA IMMA DMMA BMMA HGMMA IGMMA QGMMA BGMMA OMMA UTCHMMA UTCIMMA UTCQMMA UTCOMMA".split())
_LDST = frozenset("LD ST LDG STG LDS STS LDL STL LDC LDSM STSM ATOM ATOMG ATOMS RED REDG LDGSTS LDGDEPBAR "
                  "TEX TLD TLD4 TXQ TMML TXD SULD SUST SUATOM SURED SHFL CCTL UBLKCP UTMALDG UTMASTG UTMAPF "
                  "UTMACCTL UTMAREDG".split())
_FP64 = frozenset("DADD DFMA DMUL DSETP DMNMX DSET".split())
_CONVERSIONS = frozenset("F2I I2F F2F FRND".split())
CLASSES = ("alu", "fp64", "sfu", "ldst", "tensor", "control", "barrier")


@lru_cache(maxsize=1024)
def sass_class(opcode: str) -> str:
    """``MUFU.SIN`` -> ``sfu``; ``LDS.128`` -> ``ldst``; ``FFMA`` -> ``alu``."""
    parts = opcode.upper().split(".")
    base = parts[0]
    if base in _CONTROL:
        return "control"
    if base in _BARRIER:
        return "barrier"
    if base in _TENSOR:
        return "tensor"
    if base in _LDST:
        return "ldst"
    if base in _FP64:
        return "fp64"
    if base in _CONVERSIONS:
        return "fp64" if "F64" in parts[1:] else "sfu"
    if base == "MUFU":
        return "sfu"
    return "alu"


_WIDTHS = {"64": 8, "128": 16, "U8": 1, "S8": 1, "U16": 2, "S16": 2}


def access_bytes(opcode: str) -> int | None:
    """Bytes one thread moves with a SASS load or store (``LDS.128`` -> 16); None for other
    instructions. Without a width suffix a SASS access is 32 bits."""
    parts = opcode.upper().split(".")
    if parts[0] not in ("LD", "ST", "LDG", "STG", "LDS", "STS", "LDL", "STL"):
        return None
    width = 4
    for part in parts[1:]:
        width = _WIDTHS.get(part, width)
    return width
