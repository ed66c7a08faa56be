"""A block whose streams are not wide-word streams becomes a register file when it fits one
(compiler.mapping.map_buffer, NotWideWord; docs/mapping.md "Retries before a refusal"): the
matrix-vector product kept in its written order (``reorder=False``: its accumulator read and
rewritten at one address after another) maps its 32 partial sums into a MEM tile's register
file, model-checked and bit-exact on the netlist model; with 64 outputs the accumulator does
not fit a register file and the PUB's refusal stands, one line naming the buffer (negative
control), as it does when the program asks for a memory tile."""
from __future__ import annotations

from pathlib import Path

import pytest

from compiler.frontend.source import load_app
from compiler.ir.hw import HwParams
from compiler.mapping.common import MappingError
from compiler.mapping.map_buffer import map_buffer
from compiler.mapping.pub_model import check_buffer
from compiler.pipeline import check_result, compile_app
from compiler.schedule.report import schedule_program
from ubgen.arch import load_arch

MATVEC = str(Path(__file__).resolve().parents[2] / "data" / "apps" / "matvec.py")
ARCH = load_arch("cgra_8x8")


def _written(m: int):
    program = load_app(MATVEC, {"n": 8, "m": m}).program
    return schedule_program(program, HwParams.from_arch(ARCH), reorder=False)


def test_an_accumulator_rewritten_address_after_address_goes_to_a_register_file():
    result = _written(32)
    impl = map_buffer(result.buffers["acc"], ARCH)
    assert not impl.pubs and [rf.words for rf in impl.register_files] == [32]
    assert any("register file of 32 words" in n for n in impl.notes)
    report = check_buffer(result.buffers["acc"], impl)
    assert report.checked > 0 and not report.mismatches


def test_the_register_file_runs_bit_exact_on_the_netlist_model():
    result = compile_app(MATVEC, ARCH, {"n": 8, "m": 32}, until="netlist", reorder=False)
    assert result.impls["acc"].register_files and not result.impls["acc"].pubs
    check = check_result(result)
    assert check.ok, check.summary()


def test_too_large_for_a_register_file_the_refusal_stands():
    result = _written(64)
    with pytest.raises(MappingError) as exc:
        map_buffer(result.buffers["acc"], ARCH)
    msg = str(exc.value)
    assert msg.startswith("buffer acc: input acc_u0_st: write addresses") and "\n" not in msg
    assert "not wide-word aligned" in msg


def test_a_memory_tile_asked_for_keeps_the_refusal():
    result = _written(32)
    with pytest.raises(MappingError, match="^buffer acc: .*not wide-word aligned"):
        map_buffer(result.buffers["acc"], ARCH, level="MEM")
