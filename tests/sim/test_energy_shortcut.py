"""The energy shortcut's parts without a Verilator build (docs/energy.md "Shortcut"): the RTL
instrumentation (event counters, energy window, SRAM access counters), the parsers, the pricing of
events by a characterisation (an unused tile: clock and no data; a block the characterisation
never saw toggle, and an arch with no characterisation: one-line errors). Runs of the RTL and
the characterisation itself: tests/rtl/test_energy_rtl.py (regress)."""
import pytest

from sim.energy.events import (REST, counted_signals, instrument_events, instrument_memories,
                               parse_coverage, parse_events, port_groups)
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


def test_sram_access_counters_count_each_access_in_the_window():
    text, found = instrument_memories(MEM_V)
    assert found == [{"module": "m.sram", "memory": "mem", "depth": 512, "width": 32}]
    assert "always @(posedge clk) if (ubgen_en) begin" in text
    assert "if (rd__en) ubgen_sram_mem_rd <= ubgen_sram_mem_rd + 64'd1;" in text
    assert "if (|{wr__en}) ubgen_sram_mem_wr <= ubgen_sram_mem_wr + 64'd1;" in text
    assert ('$display("UBGEN_EVENTS %m m.sram 0 ubgen_sram_mem_rd=%0d ubgen_sram_mem_wr=%0d", '
            "ubgen_sram_mem_rd, ubgen_sram_mem_wr);") in text
    assert "ubgen_sram_small" not in text          # 16 words: flip-flops, not a macro


def test_a_memory_without_a_synchronous_read_is_a_one_line_error():
    bad = MEM_V.replace("    if (rd__en) begin\n      _0_ <= mem[wr__addr];\n    end\n", "")
    with pytest.raises(EnergyError) as e:
        instrument_memories(bad)
    assert "\n" not in str(e.value) and "memory mem" in str(e.value)


CHILD_V = """module \\t.core (clk, a, w);
  input clk;
  input [7:0] a;
  input [64:0] w;
  wire [63:0] \\$1 ;
  reg [3:0] small [15:0];
  reg \\$auto$x  = 0;
  assign \\$1  = {56'd0, a};
endmodule
"""
TOP_V = """module top(clk, sb16_out, sb16_out_sel);
  input clk;
  output [319:0] sb16_out;
  output sb16_out_sel;
  wire [15:0] sb16_out_N_0;
  wire [15:0] sb16_out_N_1;
  reg run = 1'h0;
  wire done;
  \\t.core  core (
    .a(sb16_out_N_0[7:0])
  );
  cell_lib  leaf (
    .a(done)
  );
endmodule
"""


def test_counted_signals_are_the_declared_ones_of_at_most_64_bits():
    sig = counted_signals(CHILD_V)
    assert sig == {"a": 8, "\\$1 ": 64, "\\$auto$x ": 1}
    # controls: 65 bits (w), a memory (small) and the clock are not counted
    assert "w" not in sig and "small" not in sig and "clk" not in sig


def test_a_tile_modules_ports_are_counted_apart_each_signal_once():
    sig = counted_signals(TOP_V)
    groups = port_groups(" clk, sb16_out, sb16_out_sel", sig)
    assert groups == {"sb16_out_sel": ["sb16_out_sel"],
                      "sb16_out": ["sb16_out_N_0", "sb16_out_N_1"],          # the named parts
                      REST: ["run", "done"]}
    flat = [s for g in groups.values() for s in g]
    assert sorted(flat) == sorted(sig) and len(flat) == len(set(flat)) == 5


def test_every_module_gets_the_window_and_counts_its_signals():
    text = instrument_events(CHILD_V + TOP_V, {"t.core", "top"}, top="top",
                             port_modules=frozenset({"top"}))
    child, top = text.split("endmodule")[:2]
    assert child.startswith("module \\t.core (ubgen_ck, ubgen_en, clk, a, w);\n  input ubgen_ck;")
    assert "always @(posedge ubgen_ck) if (ubgen_en) begin" in child
    assert "wire [72:0] ubgen_v0_0 = {a, \\$1 , \\$auto$x };" in child
    assert 'final $display("UBGEN_EVENTS %m t.core 73 ~rest=%0d", ubgen_t0);' in child
    assert "module top(clk, sb16_out, sb16_out_sel);\n  wire ubgen_ck;" in top
    assert "assign ubgen_en = run & ~done;" in top
    assert "  \\t.core  core (\n    .ubgen_ck(ubgen_ck),\n    .ubgen_en(ubgen_en)," in top
    assert "ubgen_cyc <= ubgen_cyc + 64'd1;" in top
    assert "sb16_out=%0d" in top and "sb16_out_sel=%0d" in top
    # control: an instance of a module the design does not define (a library cell) is left alone
    assert "  cell_lib  leaf (\n    .a(done)" in top


def test_the_arrays_window_counts_the_changes_its_edges_make():
    """The array's model (``instrument`` with a top) counts each module's toggles one edge late
    (the changes the window's edges make: not the RUN write's, docs/energy.md "Shortcut"); the
    window's cycles and the characterisation's tile models (no top) count at the edge itself."""
    lag = instrument_events(CHILD_V + TOP_V, {"t.core", "top"}, top="top", lag=True)
    child, top = lag.split("endmodule")[:2]
    for mod in (child, top):
        assert "  always @(posedge ubgen_ck) ubgen_en_q <= ubgen_en;" in mod
        assert "always @(posedge ubgen_ck) if (ubgen_en_q) begin\n    ubgen_t0 <=" in mod
    assert "always @(posedge ubgen_ck) if (ubgen_en) ubgen_cyc <= ubgen_cyc + 64'd1;" in top
    # control: without the lag (a tile's characterisation) no delayed window anywhere
    plain = instrument_events(CHILD_V + TOP_V, {"t.core", "top"}, top="top")
    assert "ubgen_en_q" not in plain and plain.count("if (ubgen_en) begin") == 2


def test_the_array_models_instrumentation_lags_and_a_modules_alone_does_not(tmp_path):
    from sim.energy.events import instrument
    (tmp_path / "top.v").write_text(CHILD_V + TOP_V)
    instrument(tmp_path, tmp_path / "array", ["top.v"], "top")
    assert (tmp_path / "array" / "top.v").read_text().count("if (ubgen_en_q) begin") == 2
    instrument(tmp_path, tmp_path / "alone", ["top.v"], None)
    assert "ubgen_en_q" not in (tmp_path / "alone" / "top.v").read_text()


def test_parse_events_adds_the_lines_of_an_instance():
    text = ("UBGEN_EVENTS TOP.top.core t.core 73 ~rest=5\nnoise\n"
            "UBGEN_EVENTS TOP.top.core t.core 0 ubgen_sram_mem_rd=3 ubgen_sram_mem_wr=2\n"
            "UBGEN_EVENTS TOP.top top 40 sb16_out=7 ~rest=1 ubgen_cyc=50\n")
    inst = parse_events(text)
    assert dict(inst["TOP.top.core"]["signals"]) == {"~rest": 5, "ubgen_sram_mem_rd": 3,
                                                     "ubgen_sram_mem_wr": 2}
    assert inst["TOP.top.core"]["bits"] == 73 and inst["TOP.top"]["bits"] == 40
    assert dict(inst["TOP.top"]["signals"]) == {"sb16_out": 7, "~rest": 1, "ubgen_cyc": 50}
    assert len(inst) == 2


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


def test_the_coverage_fit_divides_by_the_coverage_counts():
    """The first method's characterisation (the reference the counters are compared with):
    the same gate-level energy over the toggle coverage's counts of the same runs."""
    from sim.energy.shortcut import coverage_charz
    c = {"kinds": {"pe": {"input_pj": 3.0, "input_toggles": 30, "input_toggles_coverage": 60,
                          "input_pj_per_toggle": 0.1,
                          "blocks": {"a": {"pj": 8.0, "toggles": 4, "coverage_toggles": 2,
                                           "gates": 10, "bits": 5, "pj_per_toggle": 2.0},
                                     "b": {"pj": 0.0, "toggles": 0, "coverage_toggles": 0,
                                           "gates": 1, "bits": 1, "pj_per_toggle": None}}}}}
    r = coverage_charz(c)
    assert r["kinds"]["pe"]["blocks"]["a"]["pj_per_toggle"] == 4.0
    assert r["kinds"]["pe"]["blocks"]["b"]["pj_per_toggle"] is None
    assert r["kinds"]["pe"]["input_pj_per_toggle"] == 0.05
    assert r["pooled_pj_per_toggle"] == 4.0 and r["pj_per_toggle_per_gate_per_bit"] == 8.0 / 4
    # control: the characterisation given is left as it was (the counters' fit)
    assert c["kinds"]["pe"]["blocks"]["a"]["pj_per_toggle"] == 2.0


def test_the_instrumented_verilog_is_made_again_only_when_its_verilog_changes(tmp_path,
                                                                                monkeypatch):
    """A warm ``ENERGY=1`` run reads the instrumented Verilog's digest from its stamp instead
    of instrumenting again; another generated Verilog (its digest) instruments again."""
    from sim.energy import shortcut
    rtl, src = tmp_path / "rtl", tmp_path / "src"
    rtl.mkdir()
    (rtl / "top.v").write_text(CHILD_V + TOP_V)
    calls = []
    real = shortcut.instrument
    monkeypatch.setattr(shortcut, "instrument",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    args = (["top.v"], "top", frozenset({"top"}), False)
    first = shortcut._instrumented(rtl, "digest-1", src, *args)
    again = shortcut._instrumented(rtl, "digest-1", src, *args)
    assert again == first and len(calls) == 1
    assert "UBGEN_EVENTS %m top" in (src / "top.v").read_text()
    # control: the generator's Verilog changed (a new digest): instrumented again
    (rtl / "top.v").write_text(CHILD_V + TOP_V.replace("  wire done;\n",
                                                       "  wire done;\n  wire extra;\n"))
    other = shortcut._instrumented(rtl, "digest-2", src, *args)
    assert len(calls) == 2 and other[0] != first[0]
    assert "extra" in (src / "top.v").read_text()


def test_the_counting_models_key_follows_the_wrapper_rewrite():
    """The counting model with the rewrite has its own cache key (with the rewrite's source in
    it); without it (the equality check's reference) the key is that of the same build options
    without the rewrite; the coverage model never gets it."""
    from dataclasses import replace
    from sim.array_run import ModelOptions, model_key
    from sim.energy.shortcut import COMPILE_LIMITS, event_options
    new, old, ref = event_options(), event_options(rewrite=False), event_options(reference=True)
    assert (new.hier_memo, new.hier_fall_skip, new.hier_rise_no_ico) == (True, True, True)
    assert not (old.hier_memo or ref.hier_memo) and ref.coverage
    before = ModelOptions(opt_slow="-O0", hier_memo=False, hier_fall_skip=False,
                          hier_rise_no_ico=False, **COMPILE_LIMITS)
    assert old == before
    assert model_key("v", old, False) == model_key("v", before, False)
    assert model_key("v", new, False) != model_key("v", old, False)
    # control: the same options give the same key; another Verilog another one
    assert model_key("v", new, False) == model_key("v", replace(new), False)
    assert model_key("w", new, False) != model_key("v", new, False)
