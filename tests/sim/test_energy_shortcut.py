"""The energy shortcut's parts without a Verilator build (docs/energy.md "Shortcut"): the RTL
instrumentation (energy window, SRAM access counters), the coverage parser, the pricing of
events by a characterisation (an unused tile: clock and no data; a block the characterisation
never saw toggle, and an arch with no characterisation: one-line errors). Runs of the RTL and
the characterisation itself: tests/rtl/test_energy_rtl.py (regress)."""
import pytest

from sim.energy.events import instrument_memories, instrument_top, parse_coverage
from sim.energy.gates import EnergyError
from sim.energy.model import load_tech
from sim.energy.shortcut import price_events

MEM_V = """module \\m.sram (clk, rd__en, wr__en, wr__addr, wr__data, rdata);
  input clk;
  input rd__en;
  input [1:0] wr__en;
  input [8:0] wr__addr;
  input [31:0] wr__data;
  output [31:0] rdata;
  reg [31:0] mem [511:0];
  always @(posedge clk) begin
    if (wr__en[0])
      mem[wr__addr][15:0] <= wr__data[15:0];
    if (wr__en[1])
      mem[wr__addr][31:16] <= wr__data[31:16];
  end
  reg [31:0] _0_;
  always @(posedge clk) begin
    if (rd__en) begin
      _0_ <= mem[wr__addr];
    end
  end
  reg [7:0] small [15:0];
  assign rdata = _0_;
endmodule
"""


def test_sram_access_counters_flip_on_each_access():
    text, found = instrument_memories(MEM_V)
    assert found == [{"module": "m.sram", "memory": "mem", "depth": 512, "width": 32}]
    assert "if (rd__en) ubgen_sram_mem_rd <= ~ubgen_sram_mem_rd;" in text
    assert "if (|{wr__en}) ubgen_sram_mem_wr <= ~ubgen_sram_mem_wr;" in text
    assert "ubgen_sram_small" not in text          # 16 words: flip-flops, not a macro


def test_a_memory_without_a_synchronous_read_is_a_one_line_error():
    bad = MEM_V.replace("    if (rd__en) begin\n      _0_ <= mem[wr__addr];\n    end\n", "")
    with pytest.raises(EnergyError) as e:
        instrument_memories(bad)
    assert "\n" not in str(e.value) and "memory mem" in str(e.value)


def test_the_window_zeroes_and_writes_the_counts():
    text = instrument_top("module top (clk);\n  input clk;\nendmodule\n", "top")
    assert "coveragep()->zero();" in text and "coveragep()->write(" in text
    assert text.index("ubgen_cyc <= ~ubgen_cyc") < text.index("endmodule")
    with pytest.raises(EnergyError):
        instrument_top("module other (clk);\nendmodule\n", "top")


def _cov(h, page, sig, n01, n10):
    head = f"\x01t\x02toggle\x01page\x02v_toggle/{page}\x01o\x02{sig}:0->1\x01h\x02{h}"
    return (f"C '{head}' {n01}\n"
            f"C '{head.replace(':0->1', ':1->0')}' {n10}\n")


def test_parse_coverage_sums_bits_and_both_directions_without_clocks():
    text = "# SystemC::Coverage-3\n" + _cov("tb.dut", "t.core", "a[0]", 3, 2) + \
        _cov("tb.dut", "t.core", "a[1]", 1, 1) + _cov("tb.dut", "t.core", "clk", 9, 9) + \
        _cov("tb.dut", "t.core", "cfg___05Faddr[0]", 4, 4)
    inst = parse_coverage(text)
    assert dict(inst["tb.dut"]["signals"]) == {"a": 7, "cfg__addr": 8}     # demangled
    assert inst["tb.dut"]["bits"] == 3
    assert inst["tb.dut"]["module"] == "t.core"


CHARZ = {"arch": "toy", "pooled_pj_per_toggle": 0.5, "pj_per_toggle_per_gate_per_bit": 0.5,
         "kinds": {"pe": {"module": "cgra_pe_tile", "ffs": 100, "macros": [],
                          "inputs": ["sb16_in"], "input_pj_per_toggle": 0.25,
                          "blocks": {"cgra_pe_tile": {"pj_per_toggle": 0.1},
                                     "cgra_pe_tile.tile.core": {"pj_per_toggle": 2.0},
                                     "cgra_pe_tile.tile.sb16": {"pj_per_toggle": 1.0},
                                     "cgra_pe_tile.tile.idle": {"pj_per_toggle": None,
                                                                "gates": 6, "bits": 12}}}},
         "top": {"module": "top", "ffs": 10, "macros": [], "gates": {"top": 10, "wires": 0}}}


def _inst(module, bits=20, **signals):
    return {"module": module, "signals": signals, "bits": bits}


def _run(used_core_toggles=40):
    a = "TOP.top.array.tile_r0_c0"
    b = "TOP.top.array.tile_r0_c1"
    return {"TOP.top": _inst("top", ubgen_cyc=50, axi=8),
            "TOP.top.wires": _inst("wires", 1000, track=500),
            a: _inst("cgra_pe_tile", sb16_in=4, sb16_out=6),
            f"{a}.tile.core": _inst("cgra_pe_tile.tile.core", x=used_core_toggles),
            f"{a}.tile.sb16": _inst("cgra_pe_tile.tile.sb16", y=10),
            b: _inst("cgra_pe_tile"), f"{b}.tile.core": _inst("cgra_pe_tile.tile.core"),
            f"{b}.tile.idle": _inst("cgra_pe_tile.tile.idle")}


def test_an_unused_tile_gets_clock_energy_and_no_data_energy():
    tech = load_tech()
    e = price_events(_run(), CHARZ, tech)
    assert e["window_cycles"] == 50
    unused, used = e["tiles"]["tile_r0_c1"], e["tiles"]["tile_r0_c0"]
    clock = 2 * 0.5e-3 * tech.vdd ** 2 * tech.c_clock * 100 * 50
    assert unused == {"data_pj": 0.0, "input_pj": 0.0, "hop_pj": 0.0,
                      "clock_pj": round(clock, 3)}
    assert used["data_pj"] == round(2.0 * 40 + 1.0 * 10 + 0.1 * 10, 3)   # core, sb16, ports
    assert used["input_pj"] == 1.0 and used["hop_pj"] > 0
    c = e["categories_pj"]
    assert c["PE logic"] == round(2.0 * 40 + 0.1 * 10, 3)
    # the top's logic: 0.5 pJ per toggle per gate per bit x 10 gates / 20 bits; wiring: none
    assert c["GLB/IO"] == 0.5 * 10 / 20 * 8
    # control: fewer core toggles, less PE logic energy; clock unchanged
    quiet = price_events(_run(used_core_toggles=4), CHARZ, tech)["categories_pj"]
    assert quiet["PE logic"] < c["PE logic"] and quiet["clock"] == c["clock"]


def test_a_block_never_seen_toggling_is_priced_per_gate_per_bit():
    run = _run()
    run["TOP.top.array.tile_r0_c1.tile.idle"]["signals"] = {"z": 3}
    e = price_events(run, CHARZ, load_tech())
    assert e["tiles"]["tile_r0_c1"]["data_pj"] == 0.5 * 6 / 12 * 3


def test_a_block_unknown_to_the_characterisation_is_a_one_line_error():
    run = _run()
    run["TOP.top.array.tile_r0_c1.tile.new"] = _inst("cgra_pe_tile.tile.new", z=3)
    with pytest.raises(EnergyError) as e:
        price_events(run, CHARZ, load_tech())
    assert "\n" not in str(e.value) and "cgra_pe_tile.tile.new" in str(e.value)


def test_an_arch_without_characterisation_is_a_one_line_error():
    from sim.energy.charz import characterise
    with pytest.raises(EnergyError) as e:
        characterise("cgra_2x2", build=False)
    assert "\n" not in str(e.value) and "cgra_2x2" in str(e.value)


def test_a_hierarchical_blocks_interface_scope_is_not_counted_twice():
    """Verilator gives a hierarchical block's instance two scopes of the tile module (its
    interface, ``tile_r0_c0.tile``, and inside, ``tile_r0_c0.tile.cgra_pe_tile``): clock,
    input load and data count once."""
    tech = load_tech()
    run = _run()
    once = price_events(run, CHARZ, tech)
    run["TOP.top.array.tile_r0_c1.cgra_pe_tile"] = _inst("cgra_pe_tile")
    twice = price_events(run, CHARZ, tech)
    assert twice["categories_pj"] == once["categories_pj"]
    # control: the same scope under another tile is a tile of its own, with its own clock
    run["TOP.top.array.tile_r0_c2"] = _inst("cgra_pe_tile")
    assert price_events(run, CHARZ, tech)["categories_pj"]["clock"] > once["categories_pj"]["clock"]
