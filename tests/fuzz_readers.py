"""Fuzzing every reader of user files: what is fuzzed, from which seeds, and how inputs are mutated.

One :class:`Reader` per kind of file Warpline reads: PTX, launch TOML, profile TOML, session
JSON, Nsight Compute CSV, the BLOCK-table CSV and the superstep CSV. Each has

* seeds: real files of the repository (the samples, the parser corpus, the shipped profiles, the
  measured Nsight Compute exports) or files written by Warpline itself from the samples (sessions,
  the Many-BSP tables);
* ``read``: the reader as the CLI and the window call it, on a file, with what the program does
  next with what it read where that is cheap (a profile's Many-BSP derivation, a BLOCK table's
  prediction, a measured-cycles look-up);
* a dictionary of tokens that mean something in the format, or that readers get wrong (NaN,
  infinities, 1e308, integers past 64 bits, Unicode digits, NUL, byte-order marks, lone
  surrogates), plus words taken from its seeds.

:func:`mutations` draws a list of edits; :func:`apply` applies them to a seed's bytes: byte
edits (delete, duplicate, truncate, insert), replacing a value-like token of the format, line
edits (drop, repeat, swap) and whole-file changes of encoding or line ends. The contract checked
on every input (:func:`check`): the reader returns, or raises WarplineError; any other exception
or an input that takes longer than :data:`HANG_SECONDS` is a failure. The tests
(tests/test_fuzz_readers.py), the replay of kept cases (tests/test_fuzz_cases.py) and the long
run (tools/fuzz_long.py) all use this module.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import re
import signal
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from engine.errors import WarplineError

ROOT = Path(__file__).resolve().parents[1]
CASES = Path(__file__).resolve().parent / "fuzz_cases"
# Seeds larger than this are left out: every example copies and mutates one, and a few large
# files would dominate the time without reaching code the small ones do not.
MAX_SEED_BYTES = 48 << 10
# An edit that would make an input larger than this is skipped (two "repeat this line 64
# times" on a file whose line ends were all turned into CRs would make it tens of MB).
MAX_INPUT_BYTES = 1 << 20
# An input that takes more CPU time than this to read is a hang (the readers are linear; the
# inputs are at most 1 MB, read in well under a second). CPU time, not wall time: on a loaded
# machine a process may wait far longer than it runs.
HANG_SECONDS = 30.0


# Hypothesis settings of the reader fuzzers (tests/test_fuzz_readers.py picks one by the
# environment variable WARPLINE_FUZZ_PROFILE, "ci" by default):
# * ci: what ./test.sh runs: a fixed number of examples per reader, derandomized (the same inputs
#   on every run, so CI never fails on an input it did not fail on before), a deadline per example;
# * dev: the same bound with fresh random inputs on every run (what a developer runs now and then);
# * long: tools/fuzz_long.py: generation only (no shrinking: a failure is kept as found and the
#   run goes on), no deadline (the hang bound still applies), the example count from its options.
CI_EXAMPLES = 400
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
          HealthCheck.large_base_example]
settings.register_profile("warpline-fuzz-ci", max_examples=CI_EXAMPLES, derandomize=True, database=None,
                          deadline=10_000, print_blob=True, suppress_health_check=_QUIET)
settings.register_profile("warpline-fuzz-dev", max_examples=CI_EXAMPLES, derandomize=False, database=None,
                          deadline=10_000, print_blob=True, suppress_health_check=_QUIET)
settings.register_profile("warpline-fuzz-long", max_examples=100_000, derandomize=False, database=None,
                          deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))


class ReaderHang(AssertionError):
    """A reader ran past :data:`HANG_SECONDS` on one input."""


@dataclass(frozen=True)
class Reader:
    name: str
    suffix: str
    seeds: Callable[[], dict[str, bytes]]
    read: Callable[[Path], object]
    tokens: tuple[bytes, ...]
    # A value-like token of the format: what a "replace" edit swaps for a dictionary token.
    value: re.Pattern[bytes]
    # What the program does next with what was read (its errors need not name the file).
    use: Callable[[object], object] = lambda _read: None


# ---------------------------------------------------------------------------- the contract


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise ReaderHang in the block once it has used ``seconds`` of CPU time (the process's,
    SIGPROF, handled on the main thread). A reader blocked without using the CPU is left to
    the wall-clock bounds around it (Hypothesis's deadline, tools/fuzz_long.py's watchdog)."""
    def expired(_signum: int, _frame: object) -> None:
        raise ReaderHang(f"still reading after {seconds:g} s of CPU time")

    previous = signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def check(reader: Reader, data: bytes, folder: Path, limit: float = HANG_SECONDS) -> str:
    """Read ``data`` as a file of ``reader``'s kind: "read" or "refused" (a WarplineError, which
    must name the file). Any other exception escapes; so does ReaderHang."""
    path = folder / f"input{reader.suffix}"
    path.write_bytes(data)
    with time_limit(limit):
        try:
            read = reader.read(path)
        except WarplineError as exc:
            message = str(exc)
            assert message.strip(), "a WarplineError without a message"
            assert str(path) in message, f"the error does not name the file: {message}"
            return "refused"
        try:
            reader.use(read)
        except WarplineError:
            return "refused"
    return "read"


def keep_failure(reader: Reader, data: bytes, where: Path) -> Path:
    """Write a failing input to ``where/<reader>/<hash>.<suffix>`` (the form of tests/fuzz_cases)."""
    import hashlib

    target = where / reader.name / f"{hashlib.sha256(data).hexdigest()[:16]}{reader.suffix}"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


# ---------------------------------------------------------------------------- mutation

_COMMON_TOKENS = (
    b"nan", b"NaN", b"-nan", b"inf", b"-inf", b"Infinity", b"-Infinity", b"1e308", b"1e309", b"-1e308",
    b"1e-320", b"0", b"-0", b"-1", b"0.5", b"2147483648", b"4294967296", b"9223372036854775808",
    b"18446744073709551616", b"9" * 40, b"1" + b"0" * 400, b"0x7fffffffffffffff", b"1_0", b"+1",
    "\u00b2".encode(), "\u0663\u0664".encode(), "\uff11".encode(), b"\x00", b"\xff", b"\xc3\x28",
    b"\xed\xa0\x80", b"\xef\xbb\xbf", "\u202e".encode(), b'"', b"'", b"\\", b"\n", b"\r", b"\t", b"",
    b"[", b"]", b"{", b"}", b",", b";", b"=", b"#", b"true", b"false", b"null", b"n/a",
)
_ENCODINGS = ("utf-16", "latin-1-upper", "bom", "crlf", "cr", "nul-every-line")


def _insertion(reader_tokens: tuple[bytes, ...]) -> st.SearchStrategy[bytes]:
    return st.one_of(st.sampled_from(reader_tokens), st.binary(min_size=1, max_size=6))


def mutations(reader: Reader) -> st.SearchStrategy[list[tuple]]:
    """A list of 1..5 edits for :func:`apply` (positions are taken modulo the length)."""
    position = st.integers(0, 1 << 24)
    token = _insertion(reader.tokens)
    edit = st.one_of(
        st.tuples(st.just("delete"), position, st.integers(1, 64)),
        st.tuples(st.just("duplicate"), position, st.integers(1, 256)),
        st.tuples(st.just("truncate"), position, st.just(0)),
        st.tuples(st.just("insert"), position, token),
        st.tuples(st.just("replace"), position, token),
        st.tuples(st.just("replace"), position, token),            # the edit that finds most
        st.tuples(st.just("drop_line"), position, st.just(0)),
        st.tuples(st.just("repeat_line"), position, st.integers(1, 64)),
        st.tuples(st.just("swap_lines"), position, position),
        st.tuples(st.just("encode"), st.sampled_from(_ENCODINGS), st.just(0)),
    )
    return st.lists(edit, min_size=1, max_size=5)


def _line_spans(data: bytes) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in re.finditer(rb"\n", data):
        spans.append((start, match.end()))
        start = match.end()
    if start < len(data):
        spans.append((start, len(data)))
    return spans


def _encode(data: bytes, how: str) -> bytes:
    text = data.decode("utf-8", errors="surrogateescape")
    if how == "utf-16":
        return text.encode("utf-16", errors="surrogatepass")
    if how == "latin-1-upper":       # an editor that saved the file as Latin-1, with a non-ASCII name
        return data.replace(b"e", b"\xe9", 3)
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "crlf":
        return data.replace(b"\n", b"\r\n")
    if how == "cr":
        return data.replace(b"\n", b"\r")
    return data.replace(b"\n", b"\x00\n")


def apply(reader: Reader, data: bytes, edits: list[tuple]) -> bytes:
    for edit in edits:
        edited = _apply_one(reader, data, *edit)
        if len(edited) <= MAX_INPUT_BYTES:
            data = edited
    return data


def _apply_one(reader: Reader, data: bytes, op: str, a: Any, b: Any) -> bytes:
    if op == "encode":
        return _encode(data, a)
    if not data:
        return b if op in ("insert", "replace") else data
    at = a % len(data)
    if op == "delete":
        return data[:at] + data[at + b:]
    if op == "duplicate":
        return data[:at + b] + data[at:at + b] + data[at + b:]
    if op == "truncate":
        return data[:at]
    if op == "insert":
        return data[:at] + b + data[at:]
    if op == "replace":
        values = [m.span() for m in reader.value.finditer(data)]
        if not values:
            return data
        start, end = values[a % len(values)]
        return data[:start] + b + data[end:]
    lines = _line_spans(data)
    i = a % len(lines)
    start, end = lines[i]
    if op == "drop_line":
        return data[:start] + data[end:]
    if op == "repeat_line":
        return data[:end] + data[start:end] * b + data[end:]
    j = b % len(lines)
    pieces = [data[s:e] for s, e in lines]
    pieces[i], pieces[j] = pieces[j], pieces[i]
    return b"".join(pieces)


def words(seeds: dict[str, bytes], pattern: bytes, limit: int = 200) -> tuple[bytes, ...]:
    """The distinct words of the seeds that match ``pattern``, most frequent first."""
    counts: dict[bytes, int] = {}
    for data in seeds.values():
        for match in re.finditer(pattern, data):
            counts[match.group()] = counts.get(match.group(), 0) + 1
    return tuple(sorted(counts, key=lambda w: -counts[w])[:limit])


# ---------------------------------------------------------------------------- seeds


def _files(patterns: tuple[str, ...], keep: Callable[[Path], bool] = lambda _p: True) -> dict[str, bytes]:
    found = {}
    for pattern in patterns:
        for path in sorted(ROOT.glob(pattern)):
            if path.is_file() and path.stat().st_size <= MAX_SEED_BYTES and keep(path):
                found[str(path.relative_to(ROOT))] = path.read_bytes()
    return found


@functools.cache
def ptx_seeds() -> dict[str, bytes]:
    return _files(("samples/ptx/*.ptx", "samples/v2/**/*.ptx", "samples/v2x/**/*.ptx",
                   "tests/corpus/**/*.ptx", "tests/data/ptx/*.ptx"))


@functools.cache
def launch_seeds() -> dict[str, bytes]:
    return _files(("samples/*.launch.toml", "samples/v2/*.launch.toml", "samples/v2x/*.launch.toml"))


@functools.cache
def profile_seeds() -> dict[str, bytes]:
    return _files(("profiles/*.toml",))


def _is_ncu_table(path: Path) -> bool:
    head = path.read_bytes()[:4096]
    return b'"ID"' in head and b'"Kernel Name"' in head


@functools.cache
def ncu_seeds() -> dict[str, bytes]:
    """The measured Nsight Compute exports, each cut to its first 40 rows (after the ``==PROF==``
    lines ncu writes before the table): every layout and metric they hold, at a size that
    keeps an example fast."""
    found = {}
    for path in sorted((ROOT / "samples" / "measured").rglob("*.csv")):
        if not _is_ncu_table(path):
            continue
        lines = path.read_bytes().splitlines(keepends=True)
        header = next(i for i, line in enumerate(lines) if line.startswith(b'"ID"'))
        found[str(path.relative_to(ROOT))] = b"".join(lines[:header + 41])
    return found


# Sessions and Many-BSP tables are files Warpline writes: the seeds are written here from the
# samples, with edits of every kind a session stores.
_SESSION_SAMPLES = ("hotspot.sm_90.ptx", "mm.sm_90.ptx", "knn.sm_80.ptx")


@functools.cache
def _sample_evaluations() -> list[tuple[Path, object, object, object]]:
    from engine.evaluation import Evaluator, state_for
    from engine.inputs import resolve_inputs

    out = []
    for name in _SESSION_SAMPLES:
        path = ROOT / "samples" / "ptx" / name
        inputs = resolve_inputs(path, profile="h100", use_ptxas=False)
        state = state_for(inputs)
        evaluation = Evaluator().evaluate(inputs, state, only=["manybsp"], sweep=False, trace=False)
        out.append((path, inputs, state, evaluation))
    return out


@functools.cache
def session_seeds() -> dict[str, bytes]:
    from dataclasses import replace

    from engine.evaluation.compare import BaselineFigures
    from engine.session_file import (
        RecoveryOwner,
        StoredBaseline,
        fingerprint_for,
        session_to_dict,
    )
    from engine.state import with_cell_edit, with_iterations

    found = {}
    for path, inputs, state, _evaluation in _sample_evaluations():
        edited = with_cell_edit(with_cell_edit(state, 3, "lat_comm", 900.0), 2, "fu1", "4+1")
        edited = with_cell_edit(with_cell_edit(edited, 4, "n_ma", 3), 5, "comm", 12.5)
        edited = replace(with_iterations(edited, 1, 7), occupancy=2, policy="gto", measured_cycles=12345.0)
        figures = BaselineFigures({"manybsp": 1000.0, "pipeline": None}, {"issuing": 0.4, "memory": 0.6},
                                  "memory-bound", 990.0)
        baseline = StoredBaseline("before", path, "0" * 64, state, figures)
        for label, current, extra in (
            ("plain", state, {}),
            ("edited", edited, {"fingerprint": fingerprint_for(inputs, edited, "ab" * 32)}),
            ("autosave", edited, {"owner": RecoveryOwner("s1", 1, 2, "/opt/warpline", 1.7e9,
                                                         ("Set lat_comm of #3 to 900", "Set fu1 of #2 to 4+1")),
                                  "baselines": [baseline]}),
        ):
            data = session_to_dict(path, current, **extra)
            found[f"{path.stem}.{label}.warpline"] = json.dumps(data, indent=2).encode()
    return found


def _manybsp_tables(which: str) -> dict[str, bytes]:
    from engine.manybsp import export_block_table, export_supersteps

    found = {}
    for path, _inputs, _state, evaluation in _sample_evaluations():
        result = evaluation.manybsp
        text = export_block_table(result.block) if which == "block" else export_supersteps(result.level1)
        found[f"{path.stem}.{which}.csv"] = text.encode()
    return found


@functools.cache
def block_seeds() -> dict[str, bytes]:
    return _manybsp_tables("block")


@functools.cache
def superstep_seeds() -> dict[str, bytes]:
    return _manybsp_tables("supersteps")


# ---------------------------------------------------------------------------- the readers


def read_ptx(path: Path) -> None:
    """load_ptx (the whole file, as ``info`` and the window read a small one), then the kernel
    index and each kernel alone (as they read a large one)."""
    from engine.ptx import index_kernels, load_ptx, parse_kernel

    load_ptx(path)
    for entry in index_kernels(path)[:4]:
        parse_kernel(path, entry.name)


def read_launch(path: Path) -> None:
    from engine.launch import load_launch_file

    launches = load_launch_file(path)
    for launch in launches.launches:
        launches.get(launch.name)


def read_profile(path: Path) -> object:
    from engine.profiles import load_profile

    return load_profile(path)


def use_profile(profile: object) -> None:
    from engine.manybsp.device_figures import derive_manybsp

    derive_manybsp(profile)


def read_session(path: Path) -> object:
    from engine.session_file import Orphan, load_session

    return Orphan(path, load_session(path))


def use_session(orphan: object) -> None:
    """What a start does with an autosave: is its owner alive, and what the recovery dialog says
    of it (the PTX file it names is hashed: any path a session may hold)."""
    from engine.recovery import describe_orphan
    from engine.session_file import owner_alive

    if orphan.data.owner is not None:
        owner_alive(orphan.data.owner)
    describe_orphan(orphan)


def read_ncu(path: Path) -> None:
    from engine.ncu import load_ncu_csv, measured_cycles

    launches = load_ncu_csv(path)
    for launch in launches[:2]:
        if launch.cycles is not None:
            measured_cycles(path, launch.kernel)


@functools.cache
def _manybsp_params() -> object:
    """The Many-BSP parameters of the first sample's launch on the H100 profile."""
    return _sample_evaluations()[0][3].manybsp.params


def read_block_table(path: Path) -> object:
    from engine.manybsp import import_block_table

    return import_block_table(path)


def use_block_table(block: object) -> None:
    """The Many-BSP prediction of an imported table (one superstep over every row, iterated
    twice): what an imported table is for. Finite cells give no NaN."""
    from engine.manybsp import Level1Spec, predict_from_block

    prediction = predict_from_block(block, _manybsp_params(), [Level1Spec(1, len(block), 2)])
    for value in prediction.prediction.as_dict().values():
        assert not isinstance(value, float) or not math.isnan(value), prediction.prediction.as_dict()


def read_supersteps(path: Path) -> None:
    from engine.manybsp import import_level1_specs

    import_level1_specs(path)


_NUMBER = rb"[-+]?(?:0[xX][0-9a-fA-F]+|[0-9][0-9_]*(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)"
_PTX_TOKENS = (
    b".entry", b".func", b".visible", b".reg .b32 %r<99999999999>;", b"%r<0>", b".param .u64 p", b"//",
    b"/*", b"*/", b";", b"@%p1 ", b"bra $L__BB0_1;", b"$L__BB0_1:", b".maxntid 0, 0, 0", b".maxntid 4294967296",
    b".reqntid 1025", b".version 99.9", b".version 1.0", b".target sm_1000", b".target sm_20", b"0f7F800000",
    b"0fFFC00000", b"0d7FF8000000000000", b"0d7FF0000000000000", b"-9223372036854775809",
    b".local .align 8 .b8 __local_depot[18446744073709551616];", b".shared .align 4 .b8 s[4294967296];",
    b".shared .align 0 .b8 s[8];", b".const .align 4 .b8 c[-1];", b"ld.global.v4.f32 {%f1,%f2,%f3,%f4}, [%rd1];",
    b"[%rd1+18446744073709551616]", b"[%rd1+-9223372036854775809]", b"bar.sync 4294967296;", b"ret;",
    b"exit;", b"call.uni (retval0), f, (param0);", b"mov.u32 %r1, %tid.x;", b".pragma \"nounroll\";",
    b"@%p1 bra $L__BB0_1;", b".loc 1 4294967296 1", b".file 1 \"x\"", b".section .debug_info {", b"}",
)
_TOML_TOKENS = (
    b"nan", b"+nan", b"inf", b"-inf", b"1e308", b"1e309", b"0x7FFFFFFFFFFFFFFF", b"-9223372036854775809",
    b"[]", b"[1]", b"[0, 0, 0]", b"[1024, 1024, 64]", b"[1, 2, 3, 4]", b'"1"', b'"x"', b"{}", b"{ a = 1 }",
    b"[[launch]]", b"[launch.args]", b"[launch.trip]", b"[launch.data]", b'"0" = 1', "\"\u00b2\" = 1".encode(),
    "\"\u0663\" = 1".encode(), b"[device]", b"[pipeline]", b"[manybsp]", b'"""', b"'''", b"true", b"1979-05-27",
    b"12:00:00", b"[" * 64, b"a.b.c = 1", b'"\\u0000"', b'"\\ud800"',
)
_JSON_TOKENS = (
    b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e999", b"1e308", b"null", b"true", b"[]", b"{}",
    b'"\\ud800"', b'"\\u0000"', b"[[[[[[[[", b'"lat_comm"', b'"fu1"', b'"4+1"', b'"1e308+1"', b'"nan"',
    b'"$L__BB0_5"', b'"/dev/zero"', b'"h100"', b'"lrr"', b"12345678901234567890123456789", b"-1", b"0",
)
_CSV_TOKENS = (
    b"nan", b"inf", b"-inf", b"1e308", b"1e309", b"-1", b"1e-320", b"", b"n/a", b"N/A", b'"', b'""', b",",
    b'"a,b"', b'"\n"', b"4+1", b"1e308+1", b"inf+1", b"nan+nan", b"4+-1", b"+", b"=1+1", b"-0",
    b"18446744073709551616", b"\x00", b"(1, 1, 1)", b"(0, 0, 0)", b"(4294967296, 1, 1)", b"(-1, 1, 1)",
    b"(1, 2, 3, 4)", b"()", b"102,217", b'"102,217"', b"gpc__cycles_elapsed.max", b'"gpc__cycles_elapsed.max"',
)


@functools.cache
def readers() -> dict[str, Reader]:
    ptx_words = words(ptx_seeds(), rb"[.%$@]?[A-Za-z_][\w.:$]*")
    toml_words = words({**launch_seeds(), **profile_seeds()}, rb"(?m)^\s*\[*[\w.\"]+\]*")
    csv_words = words({**ncu_seeds(), **block_seeds()}, rb"[^,\n\"]{1,40}")
    return {reader.name: reader for reader in (
        Reader("ptx", ".ptx", ptx_seeds, read_ptx, _PTX_TOKENS + _COMMON_TOKENS + ptx_words,
               re.compile(rb"%\w+|" + _NUMBER + rb"|\$?\w[\w.$]*")),
        Reader("launch", ".launch.toml", launch_seeds, read_launch, _TOML_TOKENS + _COMMON_TOKENS + toml_words,
               re.compile(rb"(?<==)[^\n#]+|" + _NUMBER + rb'|"[^"\n]*"')),
        Reader("profile", ".toml", profile_seeds, read_profile, _TOML_TOKENS + _COMMON_TOKENS + toml_words,
               re.compile(rb"(?<==)[^\n#]+|" + _NUMBER + rb'|"[^"\n]*"'), use_profile),
        Reader("session", ".warpline", session_seeds, read_session, _JSON_TOKENS + _COMMON_TOKENS,
               re.compile(_NUMBER + rb'|"[^"\n]*"|null|true|false|\[\]|\{\}'), use_session),
        Reader("ncu", ".csv", ncu_seeds, read_ncu, _CSV_TOKENS + _COMMON_TOKENS + csv_words,
               re.compile(rb'"[^"\n]*"|[^,\n]+')),
        Reader("block_csv", ".csv", block_seeds, read_block_table, _CSV_TOKENS + _COMMON_TOKENS + csv_words,
               re.compile(rb'"[^"\n]*"|[^,\n]+'), use_block_table),
        Reader("superstep_csv", ".csv", superstep_seeds, read_supersteps, _CSV_TOKENS + _COMMON_TOKENS + csv_words,
               re.compile(rb'"[^"\n]*"|[^,\n]+')),
    )}


def inputs(reader: Reader) -> st.SearchStrategy[bytes]:
    """A seed of ``reader`` with a list of edits applied."""
    seeds = reader.seeds()
    return st.builds(lambda seed, edits: apply(reader, seeds[seed], edits),
                     st.sampled_from(sorted(seeds)), mutations(reader))


def scratch_folder() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="warpline-fuzz-")
