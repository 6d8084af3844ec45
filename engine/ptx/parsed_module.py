"""Plain-data model of a parsed PTX module.

The parser (``engine.ptx.parser``) produces these objects; every later stage (CFG, def-use,
classification, both models) reads them. They hold no behaviour beyond small conveniences.
The per-instruction classes use ``__slots__`` (a kernel may have 10^6 instructions), and the
parser shares equal operands and equal ``.loc`` positions between instructions: treat them as
immutable (``dataclasses.replace`` to change one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """A position in the PTX text: file name, 1-based line and column."""

    file: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class CudaLocation:
    """A ``.loc`` position: the CUDA (or other high-level) source file, line and column.

    ``inlined_at`` is the call site when the code was inlined (``.loc 2 388 5, function_name
    $L__info_string0, inlined_at 1 7 5``): usually the user's own kernel line.
    """

    file: str
    line: int
    column: int
    inlined_at: CudaLocation | None = None


class OperandKind(StrEnum):
    """What an :class:`Operand` is. A member equals its value (``OperandKind.REGISTER ==
    "register"``), which is what JSON, CSV and text show."""

    REGISTER = "register"
    SPECIAL = "special"
    PREDICATE = "predicate"
    IMMEDIATE = "immediate"
    SYMBOL = "symbol"
    LABEL = "label"
    ADDRESS = "address"
    VECTOR = "vector"
    PLACEHOLDER = "placeholder"
    PAIR = "pair"
    LIST = "list"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Operand:
    """One instruction operand.

    ``kind`` (an :class:`OperandKind`) is one of:
      ``register``   ``%r1``, ``%f2``, ``%rd3`` (``name`` is the register)
      ``special``    ``%tid.x``, ``%ctaid.y``, ``%laneid``, ``%clock64`` ... (``name``)
      ``predicate``  a predicate source written ``!%p1`` (``name`` = ``%p1``, ``negated``)
      ``immediate``  integer or floating literal (``value``; ``0f3F800000`` decoded to a float)
      ``symbol``     a variable, function or parameter name (``name``)
      ``label``      a branch target (``name``)
      ``address``    ``[base+offset]``: ``base`` is an Operand (register, symbol or immediate),
                     ``offset`` an int (``[%rd1+-12]`` gives -12); ``elements`` holds any
                     further comma-separated parts (``[tex, {%f1, %f2}]``: the coordinates)
      ``vector``     ``{%f1, %f2}``: ``elements`` holds the parts (``_`` is a ``placeholder``)
      ``placeholder`` the sink ``_``
      ``pair``       ``%r17|%p3`` destination pair: ``elements`` holds both registers
      ``list``       a parenthesised ``call`` list ``(a, b)``: ``elements``
      ``other``      anything the parser keeps verbatim (``text``)
    """

    kind: OperandKind
    text: str
    name: str | None = None
    value: int | float | None = None
    negated: bool = False
    base: Operand | None = None
    offset: int = 0
    elements: tuple[Operand, ...] = ()

    def registers(self) -> tuple[str, ...]:
        """Every register (not special register) named inside this operand, in order."""
        if self.kind in (OperandKind.REGISTER, OperandKind.PREDICATE):
            return (self.name,) if self.name else ()
        if self.kind == OperandKind.ADDRESS:
            # ``elements`` holds the extra parts of a multi-part address (``[tex, {%f1, %f2}]``).
            head = self.base.registers() if self.base is not None else ()
            return head + tuple(r for element in self.elements for r in element.registers())
        if self.kind in (OperandKind.VECTOR, OperandKind.PAIR, OperandKind.LIST):
            out: list[str] = []
            for element in self.elements:
                out.extend(element.registers())
            return tuple(out)
        return ()


@dataclass(slots=True)
class Instruction:
    """One PTX instruction statement.

    ``opcode`` is the base name (``ld``), ``modifiers`` the dot-suffixes in order
    (``("global", "nc", "v4", "f32")``; ``::`` stays inside a modifier: ``"shared::cta"``).
    ``dests`` / ``srcs`` are the registers written and read (predicates included; the guard
    predicate is in ``srcs``; address registers are sources; ``_`` is dropped).
    ``index`` is the position in the function body's instruction list (labels excluded).
    """

    index: int
    opcode: str
    modifiers: tuple[str, ...]
    operands: tuple[Operand, ...]
    dests: tuple[str, ...]
    srcs: tuple[str, ...]
    text: str
    location: SourceLocation
    guard: str | None = None
    guard_negated: bool = False
    cuda_location: CudaLocation | None = None
    labels: tuple[str, ...] = ()  # labels that name this instruction (placed just before it)

    @property
    def full_opcode(self) -> str:
        """``ld.global.f32`` style: opcode and modifiers joined with dots."""
        return ".".join((self.opcode, *self.modifiers))

    @property
    def branch_target(self) -> str | None:
        """The label a ``bra``/``brx`` jumps to, if it names one."""
        if self.opcode in ("bra", "brx"):
            for operand in self.operands:
                if operand.kind in (OperandKind.LABEL, OperandKind.SYMBOL):
                    return operand.name
        return None


@dataclass
class Param:
    """A kernel or function parameter: ``.param .align 8 .b8 p[16]``, ``.param .u64 .ptr .global p``."""

    name: str
    type: str                       # ``u64``, ``b8``, ``f32``, ...
    size_bytes: int                 # total size (array included)
    align: int | None = None
    array_size: int | None = None
    pointer_space: str | None = None  # ``global``/``shared``/... from ``.ptr``
    pointer_align: int | None = None
    state_space: str = "param"      # ``param`` or ``reg`` (``.func`` may use ``.reg`` params)


@dataclass
class Variable:
    """A state-space declaration: ``.shared .align 4 .b8 tile[1024];``, ``.extern .shared ...``,
    ``.global``, ``.const``, ``.local`` (module or function scope)."""

    name: str
    state_space: str                # ``shared``, ``global``, ``const``, ``local``, ``tex`` ...
    type: str
    size_bytes: int | None          # None for ``.extern`` arrays of unknown size (dynamic smem)
    align: int | None = None
    array_dims: tuple[int | None, ...] = ()
    initializer: str | None = None  # kept as text
    linkage: str | None = None      # ``extern``, ``visible``, ``weak``, ``common``
    location: SourceLocation | None = None


@dataclass
class RegisterDeclaration:
    """``.reg .b32 %r<21>;`` (``count`` = 21, names ``%r0``..``%r20``) or ``.reg .f32 %f;``."""

    type: str
    name: str
    count: int | None = None        # None for a single register

    def names(self) -> list[str]:
        if self.count is None:
            return [self.name]
        return [f"{self.name}{i}" for i in range(self.count)]


class FunctionKind(StrEnum):
    """A :class:`Function` is a kernel (``.entry``) or a device function (``.func``)."""

    ENTRY = "entry"
    FUNC = "func"


@dataclass
class Function:
    """An ``.entry`` (kernel) or ``.func``. ``body`` is None for declarations and prototypes."""

    name: str
    kind: FunctionKind
    params: list[Param]
    return_params: list[Param] = field(default_factory=list)
    linkage: str | None = None      # ``visible``, ``extern``, ``weak``, ``weak_odr`` ...
    body: list[Instruction] | None = None
    labels: dict[str, int] = field(default_factory=dict)  # label -> index of the next instruction
    registers: list[RegisterDeclaration] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)   # function-scope .shared/.local
    directives: dict[str, tuple[int, ...]] = field(default_factory=dict)  # maxntid, reqntid, ...
    location: SourceLocation | None = None
    end_location: SourceLocation | None = None

    @property
    def is_kernel(self) -> bool:
        return self.kind == FunctionKind.ENTRY

    @property
    def is_definition(self) -> bool:
        return self.body is not None

    @property
    def instructions(self) -> list[Instruction]:
        return self.body or []


@dataclass
class Module:
    """A whole PTX file."""

    filename: str
    version: str | None = None            # ``"9.0"``
    target: tuple[str, ...] = ()          # ``("sm_90",)`` or ``("sm_90", "debug")``
    address_size: int | None = None
    functions: list[Function] = field(default_factory=list)
    variables: list[Variable] = field(default_factory=list)   # module-scope declarations
    files: dict[int, str] = field(default_factory=dict)        # ``.file`` table for ``.loc``
    prototypes: list[str] = field(default_factory=list)        # ``.callprototype`` labels

    @property
    def kernels(self) -> list[Function]:
        """Kernel definitions in file order."""
        return [f for f in self.functions if f.is_kernel and f.is_definition]

    @property
    def sm_version(self) -> int | None:
        """``sm_90a`` -> 90; None if the target names no ``sm_``."""
        for t in self.target:
            if t.startswith("sm_"):
                digits = "".join(ch for ch in t[3:] if ch.isdigit())
                if digits:
                    return int(digits)
        return None

    def kernel(self, name: str | None = None) -> Function:
        """The named kernel, or the only/first one when ``name`` is None. KeyError if absent."""
        kernels = self.kernels
        if name is None:
            if not kernels:
                raise KeyError("the module defines no kernel")
            return kernels[0]
        for k in kernels:
            if k.name == name:
                return k
        raise KeyError(name)


# Fast constructors for the parser's hot path: a frozen dataclass's __init__ sets each field with
# object.__setattr__; writing the slots through their descriptors builds the same (equal,
# hashable, immutable) object in half the time.
_new = object.__new__
_OPERAND_SET = tuple(Operand.__dict__[f].__set__ for f in
                     ("kind", "text", "name", "value", "negated", "base", "offset", "elements"))
# (public: the parser's hot loop builds locations inline with them)
LOCATION_SETTERS = tuple(SourceLocation.__dict__[f].__set__ for f in ("file", "line", "column"))


def named_operand(kind: OperandKind, text: str) -> Operand:
    """``Operand(kind, text, name=text)``, built faster."""
    o = _new(Operand)
    s_kind, s_text, s_name, s_value, s_negated, s_base, s_offset, s_elements = _OPERAND_SET
    s_kind(o, kind)
    s_text(o, text)
    s_name(o, text)
    s_value(o, None)
    s_negated(o, False)
    s_base(o, None)
    s_offset(o, 0)
    s_elements(o, ())
    return o


def source_location(file: str, line: int, column: int) -> SourceLocation:
    """``SourceLocation(file, line, column)``, built faster."""
    loc = _new(SourceLocation)
    s_file, s_line, s_column = LOCATION_SETTERS
    s_file(loc, file)
    s_line(loc, line)
    s_column(loc, column)
    return loc
