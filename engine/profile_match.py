"""Opcode patterns of ``[[instruction]]`` rules in GPU profiles.

A pattern is matched against a *full* opcode (``ld.global.nc.v4.f32``), part by part
(parts are separated by dots):

* a literal part (``ld``, ``global``, ``f32``) matches exactly that part;
* ``{a,b,c}`` matches any one of the listed parts (``setp.{lt,le,gt,ge}.s32``);
* ``*`` matches any number (zero or more) of whole parts (``ld.global.*``, ``rcp.*.f32``).

The pattern must cover the whole opcode: ``add.f32`` does not match ``add.rn.f32``.

Specificity (the most specific matching rule wins): more literal parts first, then more
alternative parts, then fewer ``*``. Two rules with the same specificity that both match:
the one written first in the file wins, so general fall-backs go *after* specific rules
only for readability; order never overrides specificity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PART_RE = re.compile(r"^(\*|\{[A-Za-z0-9_:]+(,[A-Za-z0-9_:]+)*\}|[A-Za-z0-9_:]+)$")


class PatternSyntaxError(ValueError):
    """A malformed opcode pattern (the profile loader turns it into a ProfileError)."""


@dataclass(frozen=True)
class OpcodePattern:
    """A compiled opcode pattern with its specificity key."""

    text: str
    regex: re.Pattern[str]
    literals: int
    alternatives: int
    wildcards: int

    @property
    def specificity(self) -> tuple[int, int, int]:
        return (self.literals, self.alternatives, -self.wildcards)

    def matches(self, full_opcode: str) -> bool:
        return self.regex.fullmatch(full_opcode) is not None


def compile_pattern(text: str) -> OpcodePattern:
    """Compile ``text``; raises :class:`PatternSyntaxError` with a reason when malformed."""
    if not text or text != text.strip():
        raise PatternSyntaxError("a pattern must be non-empty and have no surrounding spaces")
    parts = text.split(".")
    literals = alternatives = wildcards = 0
    # Each part becomes a regex fragment that includes its leading dot (except the first),
    # so that ``*`` can vanish entirely: ``rcp.*.f32`` also matches ``rcp.f32``.
    pieces: list[str] = []
    for i, part in enumerate(parts):
        if not _PART_RE.match(part):
            raise PatternSyntaxError(
                f"bad part {part!r}: use letters/digits/_/::, '*' or '{{a,b}}' between dots"
            )
        if part == "*":
            if i == 0:
                raise PatternSyntaxError("a pattern starts with the opcode, not '*'")
            wildcards += 1
            pieces.append(r"(?:\.[^.]+)*")
            continue
        if part.startswith("{"):
            alternatives += 1
            body = "(?:" + "|".join(re.escape(p) for p in part[1:-1].split(",")) + ")"
        else:
            literals += 1
            body = re.escape(part)
        pieces.append(body if i == 0 else r"\." + body)
    regex = re.compile("".join(pieces))
    return OpcodePattern(text, regex, literals, alternatives, wildcards)
