"""Finding and reading the source files behind a kernel (engine.sources)."""

from __future__ import annotations

from pathlib import Path

from engine.inputs import resolve_inputs
from engine.ptx.parsed_module import CudaLocation
from engine.sources import (
    candidate_paths,
    cuda_sources,
    find_source_file,
    location_files,
    read_source,
    visible_location,
)

ROOT = Path(__file__).resolve().parents[1]


def test_relative_file_names_resolve_against_the_ptx_folder(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "ptx").mkdir()
    cu = tmp_path / "src" / "k.cu"
    cu.write_text("__global__ void k() {}\n")
    ptx = tmp_path / "ptx" / "k.ptx"
    ptx.write_text("")
    assert find_source_file("../src/k.cu", ptx) == cu
    # an absolute path from the machine that compiled it: found by its base name one folder up
    (tmp_path / "k2.cu").write_text("x\n")
    assert find_source_file("/build/elsewhere/k2.cu", ptx) == tmp_path / "k2.cu"


def test_a_missing_file_says_where_it_was_looked_for(tmp_path):
    ptx = tmp_path / "k.ptx"
    ptx.write_text("")
    tried = candidate_paths("gone/k.cu", ptx)
    source = read_source("gone/k.cu", find_source_file("gone/k.cu", ptx), tried)
    assert source.path is None and source.lines == []
    assert "not found" in source.problem and str(tmp_path / "gone" / "k.cu") in source.problem


def test_undecodable_bytes_are_shown_not_fatal(tmp_path):
    path = tmp_path / "latin1.cu"
    path.write_bytes(b"// caf\xe9\nint x;\n")
    source = read_source("latin1.cu", path)
    assert source.path == path and source.lines[1] == "int x;" and "\ufffd" in source.lines[0]


def test_sample_kernel_sources_are_found():
    inputs = resolve_inputs(ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx")
    names: set[str] = set()
    for ins in inputs.function.instructions:
        names |= location_files(ins.cuda_location)
    sources = cuda_sources(inputs.path, names)
    assert set(sources) == {"../hotspot.cu"}
    hotspot = sources["../hotspot.cu"]
    assert hotspot.path == (ROOT / "samples" / "hotspot.cu").resolve()
    assert hotspot.lines == (ROOT / "samples" / "hotspot.cu").read_text().splitlines()


def test_inlined_code_is_shown_at_the_first_call_site_whose_file_is_at_hand():
    user = CudaLocation("kernel.cu", 40, 5)
    header = CudaLocation("/usr/local/cuda/include/math.h", 900, 1, inlined_at=user)
    assert visible_location(header, {"kernel.cu"}) is user
    assert visible_location(header, {"kernel.cu", "/usr/local/cuda/include/math.h"}) is header
    assert visible_location(header, set()) is None
    assert location_files(header) == {"kernel.cu", "/usr/local/cuda/include/math.h"}
