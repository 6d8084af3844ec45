"""Suite v3 (application-style kernels, six compiled by Triton): its files agree with their
generator, the held-out split is the sha256 rule, Triton's launch metadata is what the launch
files say, validating it before it is measured says so, and a measurement cut short keeps what
ncu profiled."""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import subprocess
import sys
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from engine.cli import main
from engine.launch import load_launch_file
from engine.validation import SUITES

ROOT = Path(__file__).resolve().parent.parent
V3 = ROOT / "samples" / "v3"
GEN = ROOT / "tools" / "device" / "suite_v2" / "gen_suite.py"


def _kernels() -> list[str]:
    kernels: list[str] = []
    for launch_file in sorted(V3.glob("*.launch.toml")):
        family = launch_file.name.split(".")[0]
        kernels += sorted({f"{family}/{x.name.split('/')[0]}" for x in load_launch_file(launch_file).launches})
    return kernels


def test_split_is_the_sha256_rule_over_51_kernels_and_209_launches() -> None:
    kernels = _kernels()
    ranked = sorted(kernels, key=lambda k: hashlib.sha256(k.split("/")[1].encode()).hexdigest())
    assert len(kernels) == len(set(k.split("/")[1] for k in kernels)) == 51
    assert SUITES["v3"].held_out() == frozenset(ranked[:17])
    launches = [x for f in V3.glob("*.launch.toml") for x in load_launch_file(f).launches]
    assert len(launches) == 209
    per_kernel: dict[str, int] = {}
    for x in launches:
        per_kernel[x.name.split("/")[0]] = per_kernel.get(x.name.split("/")[0], 0) + 1
    assert min(per_kernel.values()) >= 3


@pytest.mark.parametrize("command", ["toml", "split"])
def test_launch_files_and_split_are_what_the_generator_writes(command: str) -> None:
    run = subprocess.run([sys.executable, str(GEN), "--suite", "v3", command, "--check"], capture_output=True,
                         text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr


def test_manifest_binds_every_pointer_and_gives_every_scalar() -> None:
    run = subprocess.run([sys.executable, str(GEN), "--suite", "v3", "manifest"], capture_output=True, text=True,
                         cwd=ROOT)
    assert run.returncode == 0, run.stderr
    launches = [line.split() for line in run.stdout.splitlines() if line.startswith("launch ")]
    assert len(launches) == 209
    for words in launches:
        tokens = words[11:]
        assert len(tokens) == int(words[10]) and all(":" in t for t in tokens)
        assert all(t.split(":")[0] in ("buf", "tex", "s32", "u32", "f32", "s64", "u64") for t in tokens)


def test_integer_buffers_that_kernels_index_with_declare_their_data() -> None:
    graph = {x.name: x for x in load_launch_file(V3 / "graph.launch.toml").launches}
    assert index_data(graph["bfs_level_expand/l3-b256"]) == {0: "offsets:2:14", 1: "random:0:4194304", 2: "random:-1:8"}
    assert index_data(graph["spmv_ell/w24-b256"]) == {0: "random:-262144:1048576"}
    cells = {x.name: x for x in load_launch_file(V3 / "particles.launch.toml").launches}
    assert index_data(cells["md_cells_lj/c40-b64"]) == {1: "offsets:24:40"}
    image = {x.name: x for x in load_launch_file(V3 / "image.launch.toml").launches}
    assert image["histeq_apply/g264-b256"].data[0] == "random:0:256"


def test_triton_launches_use_the_compiled_block_and_shared_memory() -> None:
    for meta_path in sorted((V3 / "ptx").glob("*.triton.json")):
        meta = json.loads(meta_path.read_text())
        family = meta["family"]
        ptx = (V3 / "ptx" / f"{family}.sm_90.ptx").read_text()
        assert f".entry {meta['entry']}(" in ptx and f".reqntid {meta['block'][0]}" in ptx
        assert [p["argument"] for p in meta["params"]][-2:] == ["global_scratch", "profile_scratch"]
        data = tomllib.loads((V3 / f"{family}.launch.toml").read_text())
        assert data["source"] == meta["source"] and (V3 / meta["source"]).is_file()
        for launch in data["launch"]:
            assert launch["kernel"] == meta["entry"]
            assert launch["block"] == meta["block"] and launch["smem_dynamic"] == meta["shared_bytes"]


def test_validate_says_when_a_suite_has_no_measurements_yet(tmp_path, monkeypatch, capsys) -> None:
    unmeasured = replace(SUITES["v3"], runs={"h100": (tmp_path / "v3-h100",), "h200": (tmp_path / "v3-h200",)})
    monkeypatch.setitem(SUITES, "v3", unmeasured)
    assert main(["validate", "--suite", "v3", "--profile", "h200"]) == 2
    err = capsys.readouterr().err
    assert "suite v3 has no measurements yet for h200" in err and "tools/device/suite_v3/measure.sh" in err
    assert main(["validate", "--suite", "v3", "--profile", "gtx1070"]) == 2
    assert "not measured yet; to be measured on: h100, h200" in capsys.readouterr().err


def test_validate_reports_v3_held_out_apart_once_measured(capsys) -> None:
    if not SUITES["v3"].measured("h100"):
        pytest.skip("suite v3 has not been measured yet (samples/measured/v3-h100)")
    assert main(["validate", "--suite", "v3", "--profile", "h100", "--only", "gemv/gemv_row_thread/b64",
                 "gemv/gemv_row_warp/b32x4", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert len(rows) == 2
    assert {r["held_out"] for r in rows if "gemv_row_warp" in r["configuration"]} == {True}
    assert {r["held_out"] for r in rows if "gemv_row_thread" in r["configuration"]} == {False}


def _merge_module():
    spec = importlib.util.spec_from_file_location("suite_merge", ROOT / "tools" / "device" / "suite_v2" / "merge.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_merge_keeps_the_launches_of_a_chunk_that_ncu_did_not_finish(tmp_path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    fields = ["order", "key", "repeat", "kernel", "grid", "block", "smem_dynamic"]
    with open(raw / "cycles_c0.order.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(fields)
        for i in range(3):
            writer.writerow([i, f"gemv/gemv_row_thread/b{64 << i}", 0, "_Z15gemv_row_threadPKfS0_Pfii",
                             f"{256 >> i}x1x1", f"{64 << i}x1x1", 0])
    head = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
            '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')
    rows = [f'"{i}","1","suite_v2","h","gemv_row_thread(const float *, const float *, float *, int, int)","1","7",'
            f'"({64 << i}, 1, 1)","({256 >> i}, 1, 1)","0","9.0","m","gpc__cycles_elapsed.max","cycle","{1000 + i}"'
            for i in range(2)]   # ncu was stopped after two of the three launches
    (raw / "cycles_c0.csv").write_text("\n".join([head, *rows]) + "\n")
    notes: list[str] = []
    joined = _merge_module().join_pass(raw, "cycles", tmp_path / "order.csv", tmp_path / "ncu.csv", notes)
    assert [row["key"] for row, _ in joined] == ["gemv/gemv_row_thread/b64", "gemv/gemv_row_thread/b128"]
    assert notes == ["cycles chunk 0: 2 launches joined (PARTIAL: ncu stopped before the end of its list)"]


def index_data(launch) -> dict:
    """A launch's declared data less its floating-point ranges (``uniform:LO:HI``, which the suite
    generator writes for every float buffer): the integers the kernels index with."""
    floats = {key: pattern for key, pattern in launch.data.items() if pattern.startswith("uniform:")}
    assert all(len(pattern.split(":")) == 3 for pattern in floats.values()), floats
    return {key: pattern for key, pattern in launch.data.items() if key not in floats}
