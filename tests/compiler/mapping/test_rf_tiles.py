"""Register-file banks in MEM tiles (compiler/mapping/registers.py: placement and encoding with
ubgen's exported layouts; compiler/mapping/pub_model.py ``simulate_rf_tile``), and the encoded registers on
the MEM core's register-file gateware (ubgen/mem/register_file.py on the PUB's lent controllers)
giving the model's streams."""
from __future__ import annotations

import random
from dataclasses import replace

import pytest

from compiler.ir.ubimpl import RegisterFile, RegisterWidthError
from compiler.mapping.common import MappingError
from compiler.mapping.map_buffer import map_buffer
from compiler.mapping.registers import (RFTile, pack_register_files, rf_tile,
                                        rf_tile_registers)
from compiler.mapping.pub_model import check_buffer, port_points, run_impl, simulate_rf_tile
from tests.ubgen.test_mem_register_file import run_registers
from ubgen.arch import MemParams, PUBParams, load_arch
from ubgen.controller import AffineMap, ControllerConfig
from ubgen.mem.spec import RF_ENABLE, mem_regmap, rf_ports
from ubgen.regmap import RegisterMap

from .test_registers_lanes import accumulator, weights

PUB, MEM = PUBParams(), MemParams()
PORTS = rf_ports(PUB, MEM)


def bank(name: str, words: int, writes: list, reads: list, buffer: str = "b") -> RegisterFile:
    return RegisterFile(name, buffer, words, [f"{name}_in{k}" for k in range(len(writes))],
                        [f"{name}_out{q}" for q in range(len(reads))], writes, reads)


def stream(start: int, stride: int, n: int, addr: int, addr_stride: int) -> ControllerConfig:
    return ControllerConfig((n,), AffineMap(start, (stride,)),
                            {"addr": AffineMap(addr, (addr_stride,))})


def test_two_banks_share_a_tile_at_consecutive_bases():
    a = bank("a", 9, [stream(0, 1, 9, 0, 1)], [stream(20, 1, 9, 8, -1)])
    b = bank("b", 9, [stream(3, 2, 9, 0, 1)], [stream(30, 1, 9, 0, 1)])
    (tile,) = pack_register_files([a, b], PUB, MEM)
    assert tile.bases == [0, 9] and tile.inputs == ["a_in0", "b_in0"]
    assert tile.outputs == ["a_out0", "b_out0"] and tile.name == "a+b"
    regs = rf_tile_registers(tile, PUB, MEM)
    assert regs["rf_en"] == 1

    def start(port):
        return regs[PORTS[port].addr_register("start")]
    assert (start("rf_write_0"), start("rf_read_0")) == (0, 8)
    assert (start("rf_write_1"), start("rf_read_1")) == (9, 9)
    ag_width = PORTS["rf_read_0"].layout.addr_widths[PORTS["rf_read_0"].ag]
    assert regs[PORTS["rf_read_0"].addr_register("delta_0")] == (1 << ag_width) - 1   # -1
    # every register the tile needs, all in the MEM core's map: rf_en and the borrowed
    # controllers' registers; no other PUB register touched
    rm = mem_regmap(PUB, MEM)
    names = {r.name for r in rm.registers}
    lent = RegisterMap("lent")        # the registers of the borrowed controllers
    for layout in {lay.name: lay for p in PORTS.values() for lay in (p.layout, p.timing)
                   }.values():
        layout.add_registers(lent)
    borrowed = {r.name for r in lent.registers}
    assert set(regs) <= names and not set(regs) & {"mode", "chain_en", "tile_id"}
    assert set(regs) == {RF_ENABLE} | borrowed
    data = [{c: 100 + c for c in range(40)}, {c: 200 + c for c in range(40)}]
    run = simulate_rf_tile(regs, PUB, MEM, data)
    assert run.outputs[0] == {20 + i: 100 + (8 - i) for i in range(9)}
    assert run.outputs[1] == {30 + i: 200 + 3 + 2 * i for i in range(9)}
    assert run.conflicts == []


def test_packing_by_words_and_ports():
    one = [bank(f"w{i}", 1, [stream(i, 1, 1, 0, 0)], [stream(9, 1, 4, 0, 0)]) for i in range(5)]
    assert [len(t.banks) for t in pack_register_files(one, PUB, MEM)] == [2, 2, 1]
    big = [bank(f"r{i}", 18, [stream(0, 1, 18, 0, 1)], [stream(20, 1, 18, 0, 1)])
           for i in range(3)]
    assert [len(t.banks) for t in pack_register_files(big, PUB, MEM)] == [1, 1, 1]
    mixed = big[:1] + one[:1] + big[1:2] + one[1:3]
    # first fit in order: r0 + w0 (19 words), r1 + w1, w2 alone
    assert [t.name for t in pack_register_files(mixed, PUB, MEM)] == ["r0+w0", "r1+w1", "w2"]
    two_by_two = bank("acc", 16, [stream(0, 2, 4, 0, 1), stream(1, 2, 4, 4, 1)],
                      [stream(10, 1, 4, 0, 1), stream(20, 1, 4, 4, 1)])
    assert [len(t.banks) for t in pack_register_files([two_by_two] + one[:2], PUB, MEM)] == \
        [1, 2]


@pytest.mark.parametrize("banks, match", [
    ([bank("big", 40, [stream(0, 1, 1, 0, 0)], [stream(1, 1, 1, 0, 0)])],
     r"^buffer b: register-file bank\(s\) big need 40 words, 1 write and 1 read ports; a MEM "
     r"tile's register file has 32 words, 2 write and 2 read ports: a lower --threshold keeps the "
     r"bank in a memory tile instead$"),
    ([bank(f"w{i}", 1, [stream(0, 1, 1, 0, 0)], [stream(1, 1, 1, 0, 0)]) for i in range(3)],
     r"^buffer b: register-file bank\(s\) w0, w1, w2 need 3 words, 3 write and 3 read ports"),
    ([bank("acc", 4, [stream(0, 1, 1, 0, 0)] * 2, [stream(1, 1, 1, 0, 0)] * 2),
      bank("w", 1, [stream(0, 1, 1, 0, 0)], [stream(1, 1, 1, 0, 0)])],
     r"need 5 words, 3 write and 3 read ports"),
    ([bank("dead", 1, [stream(0, 1, 1, 0, 0)], [])], r"^buffer b: .*need a writer and a reader"),
])
def test_banks_that_do_not_fit_are_one_line_errors(banks, match):
    with pytest.raises(MappingError, match=match) as e:
        rf_tile_registers(RFTile(banks), PUB, MEM)
    assert "\n" not in str(e.value)
    with pytest.raises(MappingError, match=match):
        rf_tile(banks, PUB, MEM)
    if len(banks) == 1 and banks[0].outputs:
        with pytest.raises(MappingError, match=match):
            pack_register_files(banks, PUB, MEM)


def test_unencodable_stream_names_the_buffer():
    late = bank("w", 1, [stream(0, 1, 1, 0, 0)], [stream(1 << 20, 1, 1, 0, 0)], buffer="wts")
    with pytest.raises(RegisterWidthError, match=r"^buffer wts: rf_read_0: sram2tb_0: last fire at cycle"):
        rf_tile_registers(RFTile([late]), PUB, MEM)


def test_mapping_keeps_banks_within_the_register_file():
    """A bank above ``rf_words`` stays in a memory tile whatever the threshold."""
    ub = weights(4)
    impl = map_buffer(ub, "pub", threshold=20)
    assert [rf.words for rf in impl.register_files] == [1] * 4
    small = replace(load_arch("pub"), mem=MemParams(rf_words=2))
    acc = accumulator()
    impl = map_buffer(acc, arch=small, threshold=20)       # 16-word banks > 2 words
    assert not impl.register_files and impl.mems == 4
    assert check_buffer(acc, impl, small.pub, mem=small.mem).ok


def test_check_buffer_uses_the_tile_encoding(monkeypatch):
    """Negative control: the model check runs the registers the compiler encodes. Dropping the
    second bank's base (both banks of a tile on word 0) makes it fail."""
    ub = weights(4)
    impl = map_buffer(ub, "pub")
    assert [len(t.banks) for t in pack_register_files(impl.register_files, PUB, MEM)] == [2, 2]
    assert check_buffer(ub, impl).ok
    import compiler.mapping.pub_model as model
    good = model.rf_tile_registers

    def no_base(tile, params, mem):
        regs = good(tile, params, mem)
        for port in ("rf_write_1", "rf_read_1"):
            regs[PORTS[port].addr_register("start")] = 0
        return regs
    monkeypatch.setattr(model, "rf_tile_registers", no_base)
    rep = check_buffer(ub, impl)
    assert not rep.ok and rep.mismatches


@pytest.mark.parametrize("make", [weights, accumulator])
def test_encoded_tiles_on_the_gateware_match_the_model(make):
    """The registers the compiler encodes, loaded into the register file's gateware, give the
    model's output streams cycle for cycle (with stalls): the one encoding both consume."""
    ub = make()
    impl = map_buffer(ub, "pub")
    tiles = pack_register_files(impl.register_files, PUB, MEM)
    assert tiles
    rng = random.Random(1)
    inputs = {}
    for p in ub.inputs:
        inputs[p.name] = {int(r[0]): rng.randrange(1 << 16) for r in port_points(p)}
    streams = run_impl(impl, PUB, inputs, MEM).streams
    compared = 0
    for tile in tiles:
        regs = rf_tile_registers(tile, PUB, MEM)
        data_in = [streams[n] for n in tile.inputs]
        model = simulate_rf_tile(regs, PUB, MEM, data_in)
        last = max(c for out in model.outputs for c in out)
        (hw,) = run_registers([(regs, data_in, [False, False, True], last)])
        assert hw.stalled_valid == 0
        for q, out in enumerate(model.outputs):
            assert set(hw.reads[q]) == set(out)
            known = {c: v for c, v in out.items() if v is not None}
            assert {c: hw.reads[q][c] for c in known} == known
            compared += len(known)
    assert compared >= 64
