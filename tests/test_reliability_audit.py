"""Cases an item-by-item audit of issue 14 found still open, each kept fixed here:

* a folder given as a PTX file, Nsight Compute CSV or launch file; launch files that are not
  UTF-8, nest too deeply or hold a number of thousands of digits; argument values that do not
  fit their parameter (1e308 or 1.5 for a ``.u32``, 1e39 for a ``.f32``, a name the kernel does
  not have) in launch files, on the command line and in sessions: one located line each;
* trip counts whose product leaves 64 bits, and a cycle budget of 1e308: a bounded result;
* unwritable outputs of ``trace --chrome-trace`` and ``batch --plot``: a one-line error (the plot
  used to say "wrote" and write nothing); CSV exports escape formula-like text cells and read
  them back;
* ptxas is run once per file and remembered on disk across commands;
* Ctrl+C while Python is still importing the engine: exit 130, no traceback;
* pictures are drawn offscreen even when DISPLAY names a display that cannot be reached, and
  the window started without a display says so in one line instead of Qt aborting;
* closing a window never waits on a computation stage that cannot be interrupted.
"""

from __future__ import annotations

import csv
import io
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from engine import resources
from engine.cli import main as cli_main
from engine.errors import LaunchError
from engine.evaluation import state_for
from engine.fileio import csv_safe, csv_unescape
from engine.inputs import resolve_inputs
from engine.launch import Launch, load_launch_file
from engine.session_file import check_launch

ROOT = Path(__file__).resolve().parents[1]
HOTSPOT = ROOT / "samples" / "ptx" / "hotspot.sm_90.ptx"
LOOP = "$L__BB0_5"

NESTED = """.version 8.4
.target sm_90
.address_size 64

.visible .entry nest2(.param .u64 out)
{
\t.reg .pred \t%p<3>;
\t.reg .b32 \t%r<8>;
\t.reg .f32 \t%f<4>;
\t.reg .b64 \t%rd<4>;
\tld.param.u64 \t%rd1, [out];
\tcvta.to.global.u64 \t%rd2, %rd1;
\tmov.u32 \t%r3, %tid.x;
\tmul.wide.u32 \t%rd3, %r3, 4;
\tadd.s64 \t%rd2, %rd2, %rd3;
\tmov.f32 \t%f1, 0f00000000;
\tmov.u32 \t%r1, 0;
$L__BB0_1:
\tmov.u32 \t%r2, 0;
$L__BB0_2:
\tld.global.f32 \t%f2, [%rd2];
\tadd.f32 \t%f1, %f1, %f2;
\tst.global.f32 \t[%rd2], %f1;
\tadd.s32 \t%r2, %r2, 1;
\tsetp.lt.u32 \t%p1, %r2, 4;
\t@%p1 bra \t$L__BB0_2;
\tadd.s32 \t%r1, %r1, 1;
\tsetp.lt.u32 \t%p2, %r1, 4;
\t@%p2 bra \t$L__BB0_1;
\tret;
}
"""


def _one_line_error(capsys, *args: str) -> str:
    assert cli_main(list(args)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err


# ---------------------------------------------------------------------------- input files


def test_a_folder_given_as_an_input_file_is_one_line(tmp_path, capsys):
    folder = str(tmp_path)
    assert "a folder, not a file (a PTX file" in _one_line_error(capsys, "info", folder)
    assert "a folder, not a file" in _one_line_error(capsys, "predict", str(HOTSPOT), "--profile", "h100",
                                                     "--no-ptxas", "--import-ncu", folder)
    assert "a folder, not a file" in _one_line_error(capsys, "predict", str(HOTSPOT), "--profile", "h100",
                                                     "--no-ptxas", "--launch", folder)


@pytest.mark.parametrize("content, said", [
    (b'description = "\xff"\n', ":1: the launch file is not UTF-8 text (byte 0xff)"),
    (b"a = " + b"[" * 100_000 + b"1" + b"]" * 100_000, "nested too deeply"),
    (b"[[launch]]\ngrid = " + b"9" * 5000 + b"\nblock = [1]\n", "too many digits"),
    (b'[[launch]]\ngrid = 4\nblock = 256\n[launch.args]\n"0" = nan\n', "must be a finite number"),
    (b'[[launch]]\ngrid = 4\nblock = 256\n[launch.trip]\n"$L" = 9223372036854775808\n', "too large"),
])
def test_launch_files_that_cannot_be_used_are_one_located_line(tmp_path, content, said):
    path = tmp_path / "bad.launch.toml"
    path.write_bytes(content)
    with pytest.raises(LaunchError, match="bad.launch.toml") as info:
        load_launch_file(path)
    assert said in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("args, said", [
    ('"0" = 1e308', "argument 0: 1e+308 does not fit a .u32"),
    ('"0" = 1.5', "argument 0: .u32 takes an integer, got 1.5"),
    ('"8" = 1e39', "argument 8: 1e+39 does not fit a .f32"),
    ("nope = 3", "argument nope: no such parameter of _Z14calculate_tempiPfS_S_iiiifffff (indices 0..12"),
])
def test_launch_file_arguments_must_fit_the_kernel(tmp_path, capsys, args, said):
    path = tmp_path / "args.launch.toml"
    path.write_text(f'[[launch]]\ngrid = "43,43"\nblock = "16,16"\n[launch.args]\n{args}\n')
    err = _one_line_error(capsys, "predict", str(HOTSPOT), "--no-ptxas", "--launch", str(path))
    assert "launch file args.launch.toml" in err and said in err


@pytest.mark.parametrize("value, said", [("1e308", "does not fit a .u32"), ("1.5", "takes an integer"),
                                         ("5000000000", "does not fit a .u32 (-2147483648 to 4294967295)")])
def test_command_line_arguments_must_fit_their_parameter(capsys, value, said):
    err = _one_line_error(capsys, "predict", str(HOTSPOT), "--no-ptxas", "--arg", f"0={value}")
    assert "--arg 0: " in err and said in err


def test_an_integral_float_reaches_an_integer_parameter_as_an_integer():
    inputs = resolve_inputs(HOTSPOT, profile="h100", use_ptxas=False, args={0: 2.0})
    value = inputs.launch.args[0]
    assert value == 2 and type(value) is int        # 2.0 used to be read as "not evaluated"


def test_sessions_drop_arguments_and_trip_counts_that_do_not_fit_and_say_so():
    inputs = resolve_inputs(HOTSPOT, profile="h100", use_ptxas=False)
    state = state_for(inputs)
    launch = replace(state.launch, args={0: 1e308, "nope": 3, 8: 0.5, 1: 4.0},
                     trip_overrides={LOOP: 3, "NOPE": 5})
    kept, notes = check_launch(replace(state, launch=launch), inputs)
    assert kept.launch.args == {8: 0.5, 1: 4} and type(kept.launch.args[1]) is int
    assert kept.launch.trip_overrides == {LOOP: 3}
    assert len(notes) == 3 and all(n.endswith("not applied") for n in notes)
    assert any("argument 0: 1e+308 does not fit a .u32" in n for n in notes)
    assert any("argument nope: no such parameter" in n for n in notes)
    assert any("NOPE" in n for n in notes)
    assert check_launch(state, inputs) == (state, [])


# ---------------------------------------------------------------------------- bounded work


def test_a_thousand_nested_loops_end_in_a_bounded_result(tmp_path, capsys):
    # Control dependences were cubic in the nesting (a check per branch, dependent block and
    # loop): over 5 minutes. The simulation's path is recursive per level and refuses by name.
    from tests import ptx_gen

    ptx = tmp_path / "loops.ptx"
    ptx.write_text(ptx_gen.nested_loops(1000))
    assert cli_main(["predict", str(ptx), "--profile", "h100", "--no-ptxas"]) == 0
    out = capsys.readouterr().out
    assert "bounded: loops nested 1000 deep; the simulation follows at most 128 levels" in out
    assert "Traceback" not in out


def test_trip_counts_whose_product_leaves_64_bits_end_in_a_bounded_result(tmp_path, capsys):
    ptx = tmp_path / "nest2.ptx"
    ptx.write_text(NESTED)
    trips = ["--trip", "$L__BB0_1=10000000000", "--trip", "$L__BB0_2=10000000000"]
    assert cli_main(["predict", str(ptx), "--profile", "h100", "--no-ptxas", *trips]) == 0
    out = capsys.readouterr().out
    assert "more than 64-bit counts hold" in out and "memory traffic not computed (bounded)" in out
    assert "Many-BSP" in out
    with pytest.raises(LaunchError, match="too large"):
        Launch(grid=1, block=32, trip_overrides={LOOP: 2**63})
    assert "too large" in _one_line_error(capsys, "predict", str(HOTSPOT), "--no-ptxas", "--trip",
                                          f"{LOOP}={10**30}")


def test_a_cycle_budget_beyond_the_simulated_clock_is_no_limit(tmp_path, capsys):
    out = tmp_path / "t.csv"
    assert cli_main(["trace", str(HOTSPOT), "--profile", "h100", "--no-ptxas", "--csv", str(out),
                     "--cycle-budget", "1e308"]) == 0
    assert out.is_file() and "stopped early" not in capsys.readouterr().out


# ---------------------------------------------------------------------------- outputs


def test_an_unwritable_chrome_trace_is_one_line(capsys):
    err = _one_line_error(capsys, "trace", str(HOTSPOT), "--profile", "h100", "--no-ptxas",
                          "--chrome-trace", "/etc/hostname/trace.json")
    assert "/etc/hostname/trace.json: cannot write" in err


def test_an_unwritable_batch_plot_is_an_error_not_wrote(tmp_path, capsys):
    from gui.render import QtRenderer

    args = ["batch", str(HOTSPOT), "--profile", "h100", "--no-ptxas", "--grid", "64", "--grid", "128",
            "--block", "256", "--out", str(tmp_path / "o.csv"), "--quiet"]
    assert cli_main([*args, "--plot", "/etc/hostname/plot.png"], renderer=QtRenderer()) == 2
    err = capsys.readouterr().err
    assert "/etc/hostname/plot.png: cannot write" in err and "wrote /etc/hostname" not in err
    good = tmp_path / "plot.png"
    assert cli_main([*args, "--plot", str(good)], renderer=QtRenderer()) == 0
    assert good.read_bytes().startswith(b"\x89PNG")


def test_outputs_are_checked_before_any_work(tmp_path, capsys, monkeypatch):
    # validate --plot with a typo used to fail only after the whole suite had run
    import engine.validation

    def never(*_args, **_kwargs):
        raise AssertionError("validation ran before the output path was checked")

    monkeypatch.setattr(engine.validation, "run_validation", never)
    err = _one_line_error(capsys, "validate", "--plot", str(tmp_path / "missing" / "p.png"))
    assert f"{tmp_path / 'missing'} does not exist" in err
    err = _one_line_error(capsys, "export", str(HOTSPOT), "--no-ptxas", "--csv", str(tmp_path))
    assert "is a folder, not a file" in err


def test_an_unwritable_picture_says_so_without_qt_warnings(tmp_path, capfd):
    # Qt's own warnings (the offscreen plugin's, QSvgGenerator's) came before the one-line error,
    # after the chart had been laid out and painted; the renderer now refuses the path first
    from engine.errors import WarplineError
    from engine.evaluation import evaluate
    from gui.render import QtRenderer

    inputs = resolve_inputs(HOTSPOT, profile="h100", use_ptxas=False)
    ev = evaluate(inputs, trace=True, sweep=True)
    capfd.readouterr()
    renderer = QtRenderer()
    for suffix in (".svg", ".pdf", ".png"):
        target = tmp_path / "missing" / f"t{suffix}"
        with pytest.raises(WarplineError, match="No such file or directory"):
            renderer.timeline_image(ev, target, width=400, height=300, color_mode="class")
        with pytest.raises(WarplineError, match="No such file or directory"):
            renderer.curves_image(ev, target, width=400, height=300)
    out, err = capfd.readouterr()
    assert err == "" and out == ""


def test_csv_exports_escape_formula_cells_and_read_them_back(tmp_path, capsys):
    from engine.manybsp import export_block_table, import_block_table
    from engine.manybsp.rows import BlockRow

    table = tmp_path / "instructions.csv"
    assert cli_main(["table", str(HOTSPOT), "--profile", "h100", "--no-ptxas", "--what", "instructions",
                     "--csv", str(table)]) == 0
    cells = [c for row in csv.reader(table.open()) for c in row]
    guarded = [c for c in cells if c.startswith("'@%p")]
    assert guarded, "hotspot has guarded branches"
    assert not [c for c in cells if c.startswith(("=", "+", "-", "@")) and csv_safe(c) != c]
    row = BlockRow(index=1, op="@%p1 bra", issue=1.0, fu={}, warp_over_T=None, comm=0.0, ovh=0.0, sync=0.0,
                   u=0, d=0, p=0)
    text = export_block_table([row], tmp_path / "block.csv")
    assert ",'@%p1 bra," in text
    assert import_block_table(tmp_path / "block.csv")[0].op == "@%p1 bra"
    for cell in ("=1+1", "+cmd", "-x", "@SUM(A1)", "-3", "+1.5e3", "text"):
        assert csv_unescape(str(csv_safe(cell))) == cell
    assert csv_safe("-3") == "-3" and csv_safe("=1+1") == "'=1+1"


# ---------------------------------------------------------------------------- ptxas


FAKE_PTXAS = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0; fi
echo run >> "{calls}"
echo "ptxas info    : Compiling entry function 'k' for 'sm_90'" >&2
echo "ptxas info    : Function properties for k" >&2
echo "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" >&2
echo "ptxas info    : Used 42 registers, 360 bytes cmem[0]" >&2
"""

SMALL = """.version 8.4
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
\tret;
}
"""


def test_ptxas_runs_once_per_file_and_is_remembered_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    calls = tmp_path / "calls"
    exe = tmp_path / "ptxas"
    exe.write_text(FAKE_PTXAS.format(calls=calls))
    exe.chmod(0o755)
    text = SMALL.replace("ret;", f"// {tmp_path}\n\tret;")      # a text no other test assembles
    for _command in range(3):                                   # three commands: a fresh process each
        monkeypatch.setattr(resources, "_CACHE", {})
        found = resources.kernel_resources(text, "k", ptxas=str(exe))
        assert found.source == "ptxas" and found.registers == 42
    assert calls.read_text().splitlines() == ["run"]
    assert len(list(resources.ptxas_cache_dir().glob("*.json"))) == 1
    # a replaced ptxas is another key
    time.sleep(0.01)
    exe.write_text(FAKE_PTXAS.format(calls=calls) + "\n")
    monkeypatch.setattr(resources, "_CACHE", {})
    resources.kernel_resources(text, "k", ptxas=str(exe))
    assert calls.read_text().splitlines() == ["run", "run"]
    # a corrupt cache file is computed again
    for path in resources.ptxas_cache_dir().glob("*.json"):
        path.write_text("{not json")
    monkeypatch.setattr(resources, "_CACHE", {})
    assert resources.kernel_resources(text, "k", ptxas=str(exe)).registers == 42


# ---------------------------------------------------------------------------- processes


INTERRUPT_DURING_IMPORT = """
import runpy, sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "engine.ptx.parser":
            raise KeyboardInterrupt      # Ctrl+C while Python is still importing the engine
        return None
sys.meta_path.insert(0, Interrupt())
sys.argv = ["main.py", "info", sys.argv[1], "--no-ptxas"]
runpy.run_path("main.py", run_name="__main__")
"""


def test_ctrl_c_while_the_engine_is_imported_exits_130_without_a_traceback():
    done = subprocess.run([sys.executable, "-c", INTERRUPT_DURING_IMPORT, str(HOTSPOT)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "interrupted\n"


def _without_display() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 sockets are Linux's here")
def test_pictures_are_drawn_when_the_display_cannot_be_reached(tmp_path):
    assert not Path("/tmp/.X11-unix/X4242").exists()
    png = tmp_path / "t.png"
    done = subprocess.run([sys.executable, "main.py", "export", str(HOTSPOT), "--profile", "h100", "--no-ptxas",
                           "--png", str(png)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**_without_display(), "DISPLAY": ":4242"})
    assert done.returncode == 0, done.stderr
    assert png.read_bytes().startswith(b"\x89PNG")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display check is Linux's")
def test_the_window_without_a_display_says_so_in_one_line():
    for extra in ({}, {"DISPLAY": ":4242"}):
        done = subprocess.run([sys.executable, "main.py"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                              env={**_without_display(), **extra})
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("warpline: no display"), done.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="abstract UNIX sockets are Linux's")
def test_display_problem_names_what_cannot_be_reached():
    from gui.display import display_problem

    assert "neither DISPLAY nor WAYLAND_DISPLAY" in display_problem({})
    assert "DISPLAY=:4242" in display_problem({"DISPLAY": ":4242"})
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind("\0/tmp/.X11-unix/X4244")
    except OSError:
        pytest.skip("display :4244 is taken")
    server.listen(1)
    try:
        assert display_problem({"DISPLAY": ":4244"}) is None
        assert display_problem({"DISPLAY": "unix:4244.0"}) is None
    finally:
        server.close()


def test_stopping_the_worker_does_not_wait_for_a_stage_that_cannot_be_interrupted(qtbot, monkeypatch):
    from gui.worker import ComputeWorker

    release = threading.Event()
    entered = threading.Event()

    def stuck(self, *args, **kwargs):   # a stage that never polls the cancel flag
        entered.set()
        release.wait(60)
        raise LaunchError("released")

    worker = ComputeWorker()
    monkeypatch.setattr(worker.evaluator, "evaluate", stuck.__get__(worker.evaluator))
    inputs = resolve_inputs(HOTSPOT, profile="h100", use_ptxas=False)
    worker.submit(inputs, state_for(inputs))
    assert entered.wait(30)
    start = time.monotonic()
    worker.stop()
    try:
        assert time.monotonic() - start < 5          # it used to wait 10 s
    finally:
        release.set()


def test_profile_costs_are_remembered_and_unchanged():
    from engine.profiles import load_profile
    from engine.profiles.cost_rules import instruction_cost
    from engine.units import MemorySpace, Unit

    profile = load_profile("h100")
    first = profile.cost_for_opcode("add.f32", Unit.ALU)
    assert profile.cost_for_opcode("add.f32", Unit.ALU) is first
    assert first == instruction_cost(profile, "add.f32", Unit.ALU, MemorySpace.NONE, None, frozenset())
    assert profile.cost_for_opcode("add.f32", Unit.ALU, special_registers=("tid",)) is not first


def test_csv_text_is_read_back_by_the_standard_reader():
    from engine.fileio import csv_text

    text = csv_text(["a", "b"], [["=cmd", -3], ["@x", "1"]])
    assert list(csv.reader(io.StringIO(text))) == [["a", "b"], ["'=cmd", "-3"], ["'@x", "1"]]
