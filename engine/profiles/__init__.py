"""GPU profiles: device figures, functional units, model parameters and per-instruction costs.

A profile is one TOML file (``profiles/<name>.toml``, format in ``profiles/README.md``).
:func:`load_profile` validates it (:mod:`engine.profile_schema`) and returns a frozen
:class:`Profile`; :meth:`Profile.cost` turns an instruction into the numbers both models need.

* :mod:`engine.profiles.sections`: the plain records a profile is made of (``Device``,
  ``UnitSpec``, ``ManyBspParams``, ``PipelineParams``, ``InstructionRule``, ``InstructionCost``);
* :mod:`engine.profiles.profile`: :class:`Profile` and its look-ups;
* :mod:`engine.profiles.cost_rules`: the cost rules (matching rule over the unit's class defaults,
  001's memory mapper);
* :mod:`engine.profiles.parsing`: one file's text, TOML and schema into a :class:`Profile`;
* :mod:`engine.profiles.discovery`: the search folders, :func:`list_profiles` (with its
  per-file cache and :func:`profile_problems`) and :func:`load_profile` by name or path.

The Many-BSP figures of a profile without a ``[manybsp]`` section are derived in
``engine.manybsp.device_figures``, a layer up, beside the model that needs them.
"""

from engine.profiles.cost_rules import OFF_CHIP_SPACES
from engine.profiles.discovery import (
    PATH_ENV,
    SHIPPED_DIR,
    USER_DIR,
    list_profiles,
    load_profile,
    profile_dirs,
    profile_problems,
)
from engine.profiles.parsing import MAX_PROFILE_BYTES, parse_profile, read_profile, read_profile_text
from engine.profiles.profile import Profile
from engine.profiles.sections import (
    ASSUMED,
    DERIVED,
    MISSING,
    PLACEHOLDER,
    ClassificationLike,
    DerivedValue,
    Device,
    InstructionCost,
    InstructionLike,
    InstructionRule,
    ManyBspParams,
    PipelineParams,
    Provenance,
    UnitSpec,
)

__all__ = [
    "ASSUMED", "DERIVED", "MAX_PROFILE_BYTES", "MISSING", "OFF_CHIP_SPACES", "PATH_ENV", "PLACEHOLDER",
    "SHIPPED_DIR", "USER_DIR", "ClassificationLike", "DerivedValue", "Device", "InstructionCost",
    "InstructionLike", "InstructionRule", "ManyBspParams", "PipelineParams", "Profile", "Provenance", "UnitSpec",
    "list_profiles", "load_profile", "parse_profile", "profile_dirs", "profile_problems", "read_profile",
    "read_profile_text",
]
