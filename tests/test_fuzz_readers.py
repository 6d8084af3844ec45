"""Every reader of user files, fuzzed (tests/fuzz_readers.py): a mutated real file is read, or
refused with a WarplineError naming it; never another exception, never a hang.

The examples per reader and their randomness come from the Hypothesis profile named by
WARPLINE_FUZZ_PROFILE ("ci" by default: a fixed number of derandomized examples). A failing input
is written under the run's temporary folder (kept when the run fails; its path is printed with
the falsifying example): once the reader is fixed, copy it to tests/fuzz_cases/<reader>/, where
tests/test_fuzz_cases.py replays it on every run.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from tests.fuzz_readers import check, inputs, keep_failure, readers, scratch_folder

READERS = readers()
PROFILE = settings.get_profile("warpline-fuzz-" + os.environ.get("WARPLINE_FUZZ_PROFILE", "ci"))


@pytest.mark.parametrize("name", sorted(READERS))
def test_every_seed_reads_cleanly(name: str) -> None:
    reader = READERS[name]
    seeds = reader.seeds()
    assert len(seeds) >= 3, seeds.keys()
    with scratch_folder() as folder:
        for seed, data in seeds.items():
            assert check(reader, data, Path(folder)) == "read", seed


@pytest.mark.parametrize("name", sorted(READERS))
@settings(PROFILE)
@given(data=st.data())
def test_a_mutated_file_is_read_or_refused(name: str, data: st.DataObject) -> None:
    reader = READERS[name]
    raw = data.draw(inputs(reader), label="input")
    with scratch_folder() as folder:
        try:
            check(reader, raw, Path(folder))
        except BaseException:
            kept = keep_failure(reader, raw, Path(tempfile.gettempdir()) / "fuzz-failures")
            note(f"the failing input is kept at {kept} (move it to tests/fuzz_cases/{name}/ once fixed)")
            raise
