"""Whether an evaluation's figures rest on a guess, and the one way every front end says so.

Every model reads every input, so a guessed input (:mod:`engine.evaluation.assumptions`) is
under every figure of the evaluation: the results table, the headline, ``predict`` (its first
line, text and JSON), the CSV headers, the chart and curve titles, exported pictures included,
all take their mark from :func:`figure_caveats`. A GPU profile whose figures were not measured on
that GPU is named with its provenance beside them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MARK = "≈"            # put before a figure that rests on a guess


@dataclass(frozen=True)
class Caveats:
    assumptions: tuple[Any, ...]      # the guessed inputs (Assumption)
    profile: str                      # "" or the profile's "not measured here" statement

    @property
    def guessed(self) -> bool:
        return bool(self.assumptions)

    @property
    def count(self) -> int:
        return len(self.assumptions)

    def mark(self, text: str) -> str:
        """A figure's text with the mark when it rests on a guess."""
        return f"{MARK} {text}" if self.guessed else text

    def short(self) -> str:
        """A few words for titles and headers: "rests on 3 assumed inputs"."""
        if not self.guessed:
            return ""
        return f"rests on {self.count} assumed input{'s' if self.count != 1 else ''}"

    def title_suffix(self) -> str:
        """What a chart's title line adds: the mark and the profile's statement."""
        parts = []
        if self.guessed:
            parts.append(f"{MARK} {self.short()}")
        if self.profile:
            parts.append(self.profile)
        return " · " + " · ".join(parts) if parts else ""

    def csv_header(self, column: str) -> str:
        """A figure column's CSV header, marked: ``kernel_cycles (rests on 3 assumed inputs)``."""
        return f"{column} ({self.short()})" if self.guessed else column

    def first_line(self) -> str:
        """The sentence a report starts with; "" when nothing is guessed or unmeasured."""
        parts = []
        if self.guessed:
            names = "; ".join(a.subject for a in self.assumptions[:4])
            more = f"; and {self.count - 4} more" if self.count > 4 else ""
            parts.append(f"{MARK} These figures rest on {self.count} assumed input"
                         f"{'s' if self.count != 1 else ''} ({names}{more}): see 'assumptions' below, "
                         "and give the real values to remove the guess.")
        if self.profile:
            parts.append(f"Profile {self.profile}.")
        return " ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {"rests_on_assumptions": self.guessed, "assumed_inputs": self.count,
                "mark": MARK if self.guessed else "", "profile": self.profile or None,
                "summary": self.first_line() or None}


def profile_statement(profile: Any) -> str:
    """"b200: from specifications, not measured here" for a profile not measured on its GPU; ""
    for a measured one or one that says nothing about its provenance (a user's own)."""
    if profile is None or profile.provenance is None or profile.provenance.measured_here:
        return ""
    return f"{profile.name}: {profile.provenance.basis}, not measured here"


def figure_caveats(evaluation: Any) -> Caveats:
    """The caveats of every figure of ``evaluation`` (an Evaluation, or a snapshot of one)."""
    return Caveats(tuple(getattr(evaluation, "assumptions", ()) or ()),
                   profile_statement(getattr(evaluation, "profile", None)))
