"""map_buffer end to end on the thesis/paper examples, checked by the register-driven model."""
from dataclasses import replace

import islpy as isl
import pytest

from compiler.ir.ubimpl import RegisterWidthError
from compiler.ir.ubuf import UnifiedBuffer
from compiler.mapping.chaining import chain_tiles, tile_maps
from compiler.mapping.common import MappingError
from compiler.mapping.hierarchy import select_level
from compiler.mapping.map_buffer import map_buffer
from compiler.mapping.merge import merge_banks
from compiler.mapping.pub_model import check_buffer
from ubgen.arch import load_arch

from .fixtures import brighten_buffer, port


def line_buffer(delays=(64, 128), n=64, rows=64, name="lb"):
    """docs/design.md §4 fixture: one input stream, full-frame reads delayed by one and two rows."""
    dom = f"{{ S[y, x] : 0 <= x < {n} and 0 <= y < {rows} }}"
    ports = [port("in", "in", dom.replace("S", "w"), f"{{ w[y, x] -> {name}[x, y] }}",
                  f"{{ w[y, x] -> [x + {n}y] }}")]
    for k, d in enumerate(delays):
        ports.append(port(f"out{k}", "out", dom.replace("S", f"r{k}"),
                          f"{{ r{k}[y, x] -> {name}[x, y] }}", f"{{ r{k}[y, x] -> [{d} + x + {n}y] }}"))
    return UnifiedBuffer(name, [n, rows], "temp", "u16", ports)


def test_brighten_paper_fig_8a():
    ub = brighten_buffer()
    impl = map_buffer(ub, "pub")
    st = impl.stats()
    # two shift registers, a wire and one memory delaying by 64 cycles (paper §V-C)
    assert (st["mems"], st["shift_registers"], st["register_delay"], st["wires"]) == (1, 2, 2, 1)
    assert impl.level == "MEM"
    (pub,) = impl.pubs
    assert pub.inputs == ["brighten"] and pub.outputs == ["blur_2"]
    # circular buffer of the 64 live pixels: (1, 64) mod 64 = (1, 0)
    assert pub.capacity_words == 64
    assert pub.configs["agg2sram_0"].addresses["sram"].strides == (1, 0)
    rep = check_buffer(ub, impl)
    assert rep.ok and rep.checked == 4 * 63 * 63, rep.summary()


def test_two_row_delays_share_one_memory():
    ub = line_buffer()
    impl = map_buffer(ub, "pub")
    assert impl.mems == 1 and len(impl.pubs[0].outputs) == 2
    c = impl.pubs[0].configs
    a2s = c["agg2sram_0"]
    assert (a2s.extents, a2s.schedule.start, a2s.schedule.strides) == ((16, 64), 4, (4, 64))
    assert a2s.addresses["sram"].strides == (1, 16)
    assert [c[f"tb2out_{q}"].schedule.start for q in (0, 1)] == [64, 128]
    rep = check_buffer(ub, impl)
    assert rep.ok and rep.checked == 2 * 64 * 64, rep.summary()


def test_chaining_paper_example():
    # capacity 32 words (ubgen/constraints/arch/pub_small.toml): the 64-delay line buffer of the
    # brighten-blur app needs two chained memories, TileID(x, y) = floor(x / 32)
    arch = load_arch("pub_small")
    ub = brighten_buffer()
    impl = map_buffer(ub, arch)
    (pub,) = impl.pubs
    assert pub.tiles == 2 and impl.mems == 2
    regs = pub.registers(arch.pub)
    assert [(r["chain_en"], r["tile_id"]) for r in regs] == [(1, 0), (1, 1)]
    lin = isl.Map("{ S[y, x] -> MEM[x] : 0 <= x < 64 and 0 <= y < 64 }")   # (1, 64) mod 64
    tid, phys = tile_maps(lin, 32)
    assert tid.is_equal(isl.Map("{ S[y, x] -> TileID[floor(x / 32)] : 0 <= x < 64 and 0 <= y < 64 }"))
    assert phys.is_equal(isl.Map("{ S[y, x] -> PhysicalAddress[x mod 32] : 0 <= x < 64 and 0 <= y < 64 }"))
    assert chain_tiles(63, 32, 4, "b").tiles == 2
    with pytest.raises(MappingError, match="more than the 16"):
        chain_tiles(32 * 16, 32, 4, "b")
    rep = check_buffer(ub, impl, arch.pub)
    assert rep.ok and rep.checked == 4 * 63 * 63, rep.summary()


def test_register_width_error_names_the_buffer():
    # a 2^20-cycle schedule overflows the 20-bit cycle registers
    ub = line_buffer(delays=(1 << 20,), name="late")
    impl = map_buffer(ub, "pub")
    with pytest.raises(RegisterWidthError, match="^buffer late: "):
        impl.pubs[0].registers(load_arch("pub").pub)


def test_extent_beyond_the_extent_registers_names_buffer_and_field():
    """A 5000-pixel row: a loop longer than the 12-bit extent registers is refused with one
    line naming the buffer, the controller and the register (never wrapped); an arch with
    13-bit extents takes the same buffer."""
    impl = map_buffer(line_buffer(delays=(64,), n=5000, rows=2, name="wide"), "pub")
    prm = load_arch("pub").pub
    with pytest.raises(RegisterWidthError, match=r"^buffer wide: in2agg_0: extent\[0\] = 5000 "
                                                 r"does not fit 12 bits \(in2agg_0_extent_m1_0\)$"):
        impl.pubs[0].registers(prm)
    wide = replace(prm, controller=replace(prm.controller, extent_width=13))
    regs = impl.pubs[0].registers(wide)[0]
    assert regs["in2agg_0_extent_m1_0"] == 4999 and regs["tb2out_0_extent_m1_0"] == 4999


def test_threshold_moves_delays_to_memory():
    ub = line_buffer(delays=(64, 80, 96))
    impl = map_buffer(ub, "pub", threshold=10)    # gaps of 16: three delay memories, two PUBs
    assert impl.mems == 2 and impl.stats()["shift_registers"] == 0
    assert check_buffer(ub, impl).ok
    impl = map_buffer(ub, "pub")                  # default 20: one memory and registers 16 + 16
    assert impl.mems == 1 and impl.stats()["register_delay"] == 32
    assert check_buffer(ub, impl).ok
    # a 1-cycle delay cannot go through the wide-fetch SRAM
    with pytest.raises(MappingError, match="brighten"):
        map_buffer(brighten_buffer(), "pub", threshold=0)


def test_levels_and_merging():
    assert select_level("a", "input", 0) == "GLB"
    assert select_level("a", "temp", 0) == "REG"
    assert select_level("a", "temp", 1) == "MEM"
    with pytest.raises(MappingError, match="stored in registers"):
        select_level("a", "temp", 1, "REG")
    ub = line_buffer(delays=(64, 128, 192))
    banks = [UnifiedBuffer(f"lb_d{k}", ub.shape, "temp", "u16", [ub.inputs[0], q])
             for k, q in enumerate(ub.outputs)]
    merged = merge_banks(banks, output_ports=2, input_ports=2)
    assert [[p.name for p in m.outputs] for m in merged] == [["out0", "out1"], ["out2"]]
    impl = map_buffer(UnifiedBuffer("x", [4], "input", "u16", ub.ports[:1]), "pub")
    assert impl.level == "GLB" and impl.mems == 0
