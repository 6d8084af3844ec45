"""Every input that ever made a reader fail (tests/fuzz_cases/<reader>/, found by the fuzzers
of tests/test_fuzz_readers.py and tools/fuzz_long.py) is read again on every run: read, or
refused with a WarplineError naming the file, within the hang bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz_readers import CASES, check, readers, scratch_folder

READERS = readers()
KEPT = sorted(p for p in CASES.glob("*/*") if p.is_file())


def test_every_case_folder_is_a_reader() -> None:
    assert KEPT, f"no cases under {CASES}"
    assert {p.parent.name for p in KEPT} <= set(READERS)


@pytest.mark.parametrize("case", KEPT, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_kept_case_is_read_or_refused(case: Path) -> None:
    reader = READERS[case.parent.name]
    with scratch_folder() as folder:
        check(reader, case.read_bytes(), Path(folder))
