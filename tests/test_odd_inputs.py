"""No input too odd: PTX whose numbers do not fit 64-bit lanes (nvcc writes -1 as a u64 bound,
magic multipliers, large offsets), shifts out of the register, huge products, and files too big
to analyse kernel by kernel in ``info``. Every model gives a figure or a one-line reason; none
raises."""

from __future__ import annotations

import json
from pathlib import Path

from engine.cli import main
from engine.memory.affine import Affine
from tests import ptx_gen

DATA = Path(__file__).resolve().parent / "data" / "odd"
# A loop bound of -1 read as u64 (2^64 - 1, beyond int64: the numpy.full OverflowError of issue
# 35), a shift by 2^63, products of 2^63 - 1 twice, and address offsets of +-2^63.
HUGE = DATA / "huge_values.ptx"


def test_numbers_beyond_64_bit_lanes_give_reasons_not_tracebacks(capsys):
    assert main(["info", str(HUGE), "--no-ptxas", "--profile", "h100", "--json"]) == 0
    (kernel,) = json.loads(capsys.readouterr().out)["kernels"]
    (loop,) = kernel["loops"]
    assert "a number outside the signed 64-bit range, not evaluated per lane" in loop["trip_reason"]
    # The launch given: the loop never ends (its counter wraps), so the sampled run goes on to its
    # budget, and an assumed launch would make predict run it again for the launch's effect
    assert main(["predict", str(HUGE), "--no-ptxas", "--profile", "h100", "--grid", "1056", "--block", "256",
                 "--json"]) == 0
    models = json.loads(capsys.readouterr().out)["models"]
    assert models and all(m["error"] is None and m["kernel_cycles"] > 0 for m in models.values()), models


def test_affine_forms_beyond_64_bits_are_not_addresses():
    assert Affine(2**64 - 1, (("tid.x", -(2**63)),)).fits(64)
    assert not Affine(2**64).fits(64) and not Affine(0, (("tid.x", 2**70),)).fits(64)


def test_info_lists_a_library_from_its_index_and_analyses_one_kernel_on_request(tmp_path, capsys):
    path = tmp_path / "library.ptx"
    path.write_text(ptx_gen.library(kernels=40, instructions=60))
    assert main(["info", str(path), "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["analysed"] is False and listing["version"] == "8.4" and listing["target"] == ["sm_90"]
    assert len(listing["kernels"]) == 40
    first = listing["kernels"][0]
    assert first["name"] == "_Z14library_kernelILi0EEvPfS0_i" and first["parameters"] == 3
    assert first["display_name"] == "library_kernel<0>(float*, float*, int)" and first["line"] < first["end_line"]
    assert main(["info", str(path)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].endswith("40 kernels (listed from the index: --kernel NAME for one kernel's analysis, "
                            "--all for every one's)")
    assert text[1].startswith("kernel library_kernel<0>(float*, float*, int)  "
                              "[_Z14library_kernelILi0EEvPfS0_i]  lines ")
    assert main(["info", str(path), "--kernel", "library_kernel<7>", "--no-ptxas", "--json"]) == 0
    (one,) = json.loads(capsys.readouterr().out)["kernels"]
    assert one["name"] == "_Z14library_kernelILi7EEvPfS0_i" and one["instructions"]["total"] > 50

