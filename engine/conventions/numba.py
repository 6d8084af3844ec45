"""numba's array arguments: each is passed as ``meminfo, parent, nitems, itemsize, data,
shape[ndim], strides[ndim]`` (strides in bytes). One value fixes the rest:

* ``itemsize`` is the element type's size, which the mangled signature names (exact);
* a C-order array (layout ``C``) has ``strides[k] = itemsize · Π shape[k+1:]``, a Fortran-order
  one (``F``) ``itemsize · Π shape[:k]`` (exact, given the shape);
* layout ``A`` (numba's "any": what ``cuda.jit`` gives every array argument unless told
  otherwise) allows any strides; they are taken as C order, the layout of every array numba
  allocates and of ``cuda.to_device`` copies: an assumption, listed;
* ``nitems = Π shape`` (exact, given the shape);
* a shape no guard bounds is taken as the shape of an array of the same rank that one does
  (arguments of one kernel usually match), an assumption listed with that array's.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from engine.conventions.params import ArraySlots, ParamFacts
from engine.conventions.records import CONVENTION, COVERAGE, DERIVED, SuppliedValue

Supply = Callable[[SuppliedValue], None]
LAYOUT_GROUP = "layout: numba arrays"


def shapes_from_siblings(facts: ParamFacts, known: dict[int, int | float], groups: dict[int, str],
                         supply: Supply) -> None:
    """Shapes that nothing bounds, from an array of the same rank whose shape is known."""
    for array in facts.arrays:
        for k in range(array.array.ndim):
            slot = array.shape(k)
            if slot in known or not _needed(facts, array, slot):
                continue
            donor = next((other for other in facts.arrays if other.array.ndim == array.array.ndim
                          and other.shape(k) in known), None)
            if donor is None:
                continue
            source = donor.shape(k)
            supply(SuppliedValue(slot, int(known[source]), COVERAGE,
                                 f"taken as the shape of {donor.label} (arrays of one kernel usually match)",
                                 _label(facts, slot), groups.get(source, f"size: {source}"), "shape"))


def fields_from_shapes(facts: ParamFacts, known: dict[int, int | float], supply: Supply) -> None:
    """itemsize, strides and nitems of every array whose shape is known."""
    for array in facts.arrays:
        itemsize = array.array.itemsize
        if itemsize is None:
            continue
        if array.itemsize not in known and array.itemsize in facts.read:
            supply(SuppliedValue(array.itemsize, itemsize, DERIVED,
                                 f"{array.array.element} elements (the kernel's signature)",
                                 _label(facts, array.itemsize), f"derived: {array.itemsize}", "itemsize"))
        ndim = array.array.ndim
        shape = [known.get(array.shape(k)) for k in range(ndim)]
        for k in range(ndim):
            slot = array.stride(k)
            if slot in known:
                continue
            inner = range(k + 1, ndim) if array.array.layout in ("C", "A") else range(k)
            if any(shape[j] is None for j in inner):
                continue
            value = itemsize * math.prod(int(shape[j]) for j in inner)   # type: ignore[arg-type]
            order = "Fortran" if array.array.layout == "F" else "C"
            if array.array.layout == "A":
                supply(SuppliedValue(slot, value, CONVENTION,
                                     "layout A (any strides) taken as contiguous C order, as numba "
                                     "allocates arrays and copies them to the device", _label(facts, slot),
                                     LAYOUT_GROUP, "stride"))
            else:
                supply(SuppliedValue(slot, value, DERIVED, f"layout {array.array.layout}: contiguous "
                                     f"{order} order", _label(facts, slot), f"derived: {slot}", "stride"))
        if array.nitems not in known and array.nitems in facts.read and all(s is not None for s in shape):
            supply(SuppliedValue(array.nitems, math.prod(int(s) for s in shape), DERIVED,   # type: ignore[arg-type]
                                 "the product of the shape", _label(facts, array.nitems),
                                 f"derived: {array.nitems}", "nitems"))


def needed_shapes(facts: ParamFacts) -> list[int]:
    """Shape parameters the kernel reads or whose value its strides need."""
    return [a.shape(k) for a in facts.arrays for k in range(a.array.ndim) if _needed(facts, a, a.shape(k))]


def _needed(facts: ParamFacts, array: ArraySlots, slot: int) -> bool:
    if slot in facts.read or array.nitems in facts.read:
        return True
    # the strides that depend on this dimension: the outer ones in C order, the inner in Fortran
    k = slot - array.shape(0)
    ndim = array.array.ndim
    dependent = range(k) if array.array.layout in ("C", "A") else range(k + 1, ndim)
    return any(array.stride(j) in facts.read for j in dependent)


def _label(facts: ParamFacts, index: int) -> str:
    return (facts.field_of or {}).get(index, f"argument {index}")
