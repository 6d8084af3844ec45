"""``built(cls, **values)``: an instance of a frozen dataclass made without its generated
``__init__``, for the tables built once per instruction of a kernel.

The generated ``__init__`` of a frozen dataclass sets the fields one ``object.__setattr__`` at
a time: about twice the time of filling the instance's dict at once. On a 10^5-instruction
kernel the rows of the instruction table, the BLOCK table, the simulator's static instructions
and Many-BSP*'s level-2 costs are a few hundred thousand instances, and that difference half a
second. The instance has the same fields, so equality, hashing, ``repr`` and ``replace`` see
no difference. Only classes without ``__post_init__`` and without ``__slots__`` take the short
way; values that are not exactly the fields (a default left to apply, an unknown name) go to
``cls(**values)``, which applies or refuses them. A leaf: it imports no engine module.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

_T = TypeVar("_T")
_FIELDS: dict[type, frozenset[str] | None] = {}     # None: the class takes its own __init__


def built(cls: type[_T], **values: Any) -> _T:
    """``cls(**values)``, the instance's dict filled at once where that is the same thing."""
    if cls not in _FIELDS:
        plain = not hasattr(cls, "__post_init__") and "__slots__" not in vars(cls)
        _FIELDS[cls] = frozenset(f.name for f in fields(cls)) if plain else None  # type: ignore[arg-type]
    names = _FIELDS[cls]
    if names is None or len(values) != len(names) or values.keys() != names:
        return cls(**values)
    instance = object.__new__(cls)
    instance.__dict__.update(values)
    return instance
