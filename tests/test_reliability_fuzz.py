"""The reliability suite's generated inputs beyond ``parse_ptx`` (issue 14, item 7):

* mutated real PTX through the ``info`` and ``predict`` commands: exit 0, or exit 2 with one
  ``error:`` line; nothing else escapes (a traceback fails the test);
* generated sessions (a valid one with one value replaced by any JSON value, a key removed, or
  raw bytes): ``load_session`` gives a session or a one-line WarplineError naming the file, and a
  session that loads is opened for its kernel (``check_fingerprint``, ``check_launch``) and
  evaluated without any other exception.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli import main as cli_main
from engine.errors import WarplineError
from engine.evaluation import Evaluator, state_for
from engine.inputs import resolve_inputs
from engine.session_file import check_fingerprint, check_launch, fingerprint_for, load_session, session_to_dict
from engine.state import with_cell_edit
from tests.test_ptx_fuzz import _OPS, SEEDS, mutate

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"
FUZZ_SEEDS = {**SEEDS, "hotspot.sm_90.ptx": HOTSPOT.read_text()}
BUDGET = "200000"     # warp instructions a fuzzed kernel may simulate: bounded runs, fast examples


def _run(command: str, text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.ptx"
        path.write_text(text)
        args = [command, str(path), "--profile", "h100", "--no-ptxas"]
        if command == "predict":
            args += ["--max-warp-instructions", BUDGET]
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = cli_main(args)       # any exception but a WarplineError escapes and fails
    assert rc in (0, 2), rc
    if rc == 2:
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err.getvalue()


_FUZZ = settings(max_examples=60, derandomize=True, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow])


@_FUZZ
@given(seed=st.sampled_from(sorted(FUZZ_SEEDS)), ops=st.lists(_OPS, min_size=1, max_size=3))
def test_mutated_ptx_through_info_ends_cleanly(seed: str, ops: list[tuple]) -> None:
    _run("info", mutate(FUZZ_SEEDS[seed], ops))


# predict runs every model on each mutant (about 2 s each on two cores): half the examples of the
# other fuzz tests here; tools/fuzz_long.py runs thousands
@settings(_FUZZ, max_examples=30)
@given(seed=st.sampled_from(sorted(FUZZ_SEEDS)), ops=st.lists(_OPS, min_size=1, max_size=3))
def test_mutated_ptx_through_predict_ends_cleanly(seed: str, ops: list[tuple]) -> None:
    _run("predict", mutate(FUZZ_SEEDS[seed], ops))


# ---------------------------------------------------------------------------- sessions

_INPUTS = resolve_inputs(HOTSPOT, profile="h100", use_ptxas=False)
_STATE = with_cell_edit(with_cell_edit(state_for(_INPUTS), 47, "lat_comm", 900.0), 12, "fu1", "4+1")
_BASE = session_to_dict(HOTSPOT, _STATE, fingerprint=fingerprint_for(_INPUTS, _STATE, "0" * 64))


def _paths(value, prefix=()):
    """Every key path of a JSON value (the containers' own paths included)."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


_PATHS = [p for p in _paths(_BASE) if p]
_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**30), 10**30), st.sampled_from([0, -1, 2**63, 10**400]),
              st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
              st.sampled_from(["$L__BB0_5", "nope", "/dev/zero", "h100", "lat_comm", "fu1", "1e308+1"])),
    lambda children: st.one_of(st.lists(children, max_size=3),
                               st.dictionaries(st.sampled_from(["0", "1", "47", "nope", "lat_comm", "x"]),
                                               children, max_size=3)),
    max_leaves=8)


def _replaced(path, value, remove: bool):
    data = json.loads(json.dumps(_BASE))
    *parents, last = path
    node = data
    for key in parents:
        node = node[key]
    if remove and isinstance(node, dict):
        node.pop(last, None)
    else:
        node[last] = value
    return data


def _open_and_evaluate(path: Path) -> None:
    try:
        data = load_session(path)
    except WarplineError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc), str(exc)
        return
    try:
        inputs = resolve_inputs(data.ptx_path, kernel=data.state.kernel, profile=data.state.profile,
                                use_ptxas=False)
    except WarplineError:
        return                              # the session names a kernel, profile or file that is not there
    state, _notes = check_fingerprint(data, inputs, "1" * 64)
    state, _notes = check_launch(state, inputs)
    try:
        Evaluator().evaluate(inputs, state, sweep=False, trace=False, max_warp_instructions=int(BUDGET))
    except WarplineError:
        pass


@settings(max_examples=60, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(_PATHS), value=_JSON, remove=st.booleans())
def test_generated_sessions_load_or_fail_in_one_line(path, value, remove) -> None:
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "fuzz.warpline"
        target.write_text(json.dumps(_replaced(path, value, remove)))
        _open_and_evaluate(target)


@settings(max_examples=60, derandomize=True, deadline=None, database=None)
@given(st.binary(max_size=200) | st.builds(lambda cut: json.dumps(_BASE).encode()[:cut], st.integers(0, 4000)))
def test_session_bytes_load_or_fail_in_one_line(raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "raw.warpline"
        target.write_bytes(raw)
        _open_and_evaluate(target)
