"""Events of an ordinary RTL run, counted for the energy shortcut (docs/energy.md "Shortcut").

The RTL model of ``make sim`` is built once more from the generated Verilog with counters added
to every module (:func:`instrument`, :func:`instrument_events`):

* every module gets two inputs, ``ubgen_ck`` (the clock) and ``ubgen_en`` (the energy window:
  the top's ``run & ~done``), wired through every instance; so, as in the gate-level run,
  configuration, loads and read-back are not counted;
* per module, the toggles of its signals (every declared signal of at most :data:`MAX_WIDTH`
  bits, memories and clocks apart) are counted in every window cycle: the signals' values are
  sampled at each clock edge and the bits that differ from the previous edge's are added
  (``$countones`` of the XOR); a tile module (``port_modules``) counts each port apart (the
  input load and the routing hops are priced per port), the rest together;
* in the array's model (a ``top`` whose ``run & ~done`` opens the window: :func:`instrument`)
  the toggles counted are the changes the window's clock edges make: each edge's are counted
  at the next edge, so the changes the edge *before* the window makes (the host's write of
  ``RUN``: ``run`` rising, and its copies in every tile's modules) are not counted and those
  of the window's last edge are, as Verilator's toggle coverage zeroed at the window's first
  edge and written at the edge after its last one counted them. In a tile's characterisation
  the testbench opens the window and changes the inputs between edges, so the changes seen at
  an edge are the window's own (no lag). Without the lag an unused tile's `run` copies (pure
  wires at gate level) were counted once per run as its blocks' data;
* the top counts the window's cycles (:data:`WINDOW_CYCLES`);
* every SRAM macro (a memory of at least :data:`~sim.energy.gates.MACRO_MIN_DEPTH` words, as at
  gate level) counts its read and write accesses in the window, exactly.

At the end of the simulation every module instance prints one ``UBGEN_EVENTS`` line
(:func:`parse_events`); :mod:`sim.energy.shortcut` prices them. Sampling once per clock edge is
the gate-level counting's own rule (zero delay, no glitches). The first version of the shortcut
counted with Verilator's toggle coverage (``--coverage-toggle``, a counter per signal bit,
evaluated whenever the model evaluates, over the whole host session): 14x slower than the plain
model; :func:`parse_coverage` still reads its files (the characterisation compares both counts).
"""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from .gates import MACRO_MIN_DEPTH, EnergyError

__all__ = ["port_toggles", "instrument", "instrument_events", "instrument_memories",
           "coverage_window", "parse_events", "parse_coverage", "module_names",
           "counted_signals", "port_groups", "COVERAGE_ARGS", "WINDOW_CYCLES", "SRAM_PREFIX",
           "MAX_WIDTH", "REST"]

# signals of at most 64 bits: Verilator's toggle counts of wider ones (its multi-word values)
# are wrong (a tile's 320-bit track bus counted 5-8x the toggles of its twenty 16-bit tracks);
# the generated RTL names every wide bus's parts (tracks, fields) as signals of their own, and
# memories stay out (counted by their accesses)
MAX_WIDTH = 64
COVERAGE_ARGS = ["--coverage-toggle", "--coverage-max-width", str(MAX_WIDTH)]
REST = "~rest"
WINDOW_CYCLES = "ubgen_cyc"
SRAM_PREFIX = "ubgen_sram_"
_SKIP = {"clk", "energy_clk", "ubgen_win", "ubgen_nwin"}

_MEM = re.compile(r"^\s*reg \[(\d+):0\] (\\?\S+) \[(\d+):0\];", re.M)
_MODULE = re.compile(r"^module (\\?\S+?)\s*\(", re.M)


def _insert_before_end(text: str, module: str, block: str) -> str:
    """``block`` inserted before the ``endmodule`` of ``module`` in ``text``."""
    m = re.search(rf"^module {re.escape(module)}\s*\(", text, re.M)
    if not m:
        raise EnergyError(f"no module {module} in the generated Verilog")
    end = text.index("\nendmodule", m.end())
    return text[:end] + "\n" + block + text[end:]


def _memory_ports(body: str, name: str) -> tuple[str, str, str]:
    """(clock, read enable, write enable) of the memory ``name`` in a module's ``body``, from
    the Yosys-written processes that read and write it."""
    n = re.escape(name)
    wr = re.findall(rf"if \((.+?)(?:\[\d+\])?\)\s*\n\s*{n}\[", body)
    rd = re.findall(rf"if \((.+?)\) begin\s*\n\s*\S+ ?<= {n}\[", body)
    clk = re.findall(rf"always @\(posedge (\\?\S+?) ?\) begin\s*\n\s*if \([^\n]*\)\s*\n\s*{n}\[",
                     body)
    if not wr or not rd or not clk:
        raise EnergyError(f"memory {name}: no synchronous read and write processes found; the "
                          "shortcut cannot count its accesses")
    wes = sorted(set(w.strip() for w in wr))
    we = "|{" + ", ".join(f"{w} " if w.startswith("\\") else w for w in wes) + "}"
    re_ = rd[0].strip()
    return clk[0].strip(), (re_ + " " if re_.startswith("\\") else re_), we


def instrument_memories(text: str) -> tuple[str, list[dict]]:
    """Every macro memory of ``text`` with its access counters (counting in the window,
    ``ubgen_en``); returns the new text and one ``{"module", "memory", "depth", "width"}`` per
    macro."""
    out, found = text, []
    for mod_m in list(_MODULE.finditer(text)):
        start = mod_m.end()
        end = text.index("\nendmodule", start)
        body = text[start:end]
        module = mod_m.group(1).lstrip("\\")
        block = []
        for m in _MEM.finditer(body):
            width, name, depth = int(m.group(1)) + 1, m.group(2), int(m.group(3)) + 1
            if depth < MACRO_MIN_DEPTH:
                continue
            clk, rd, we = _memory_ports(body, name)
            c = f"{SRAM_PREFIX}{name.lstrip(chr(92))}"
            ck = f"{clk} " if clk.startswith("\\") else clk
            block += [f"  reg [63:0] {c}_rd = 64'd0, {c}_wr = 64'd0;",
                      f"  always @(posedge {ck}) if (ubgen_en) begin",
                      f"    if ({rd}) {c}_rd <= {c}_rd + 64'd1;",
                      f"    if ({we}) {c}_wr <= {c}_wr + 64'd1;", "  end",
                      f'  final $display("UBGEN_EVENTS %m {module} 0 {c}_rd=%0d {c}_wr=%0d", '
                      f"{c}_rd, {c}_wr);"]
            found.append({"module": module, "memory": name.lstrip("\\"), "depth": depth,
                          "width": width})
        if block:
            out = _insert_before_end(out, mod_m.group(1), "\n".join(block) + "\n")
    return out, found


_DECL = re.compile(r"^\s*(?:input|output|inout|wire|reg)\s+(?:signed\s+)?(?:\[(\d+):(\d+)\]\s+)?"
                   r"(\\\S+ |[A-Za-z_][\w$]*)\s*(\[[^\]]*\])?\s*(?:=[^;]*)?;", re.M)
_INST = re.compile(r"^(\s+)(\\\S+ |[A-Za-z_][\w$]*)\s+(\\\S+ |[A-Za-z_][\w$]*)\s*\(\s*$", re.M)
_CHUNK = 1024           # bits per sampled vector (Verilator's wide values stay moderate)


def counted_signals(body: str) -> dict[str, int]:
    """The signals of a module's ``body`` whose toggles count, with their widths: every
    declared signal (port, wire, register) of at most :data:`MAX_WIDTH` bits, not a memory,
    not a clock, not the instrumentation's own (the generated RTL names every wide bus's parts,
    tracks and fields, as signals of their own, so the parts count)."""
    out: dict[str, int] = {}
    for m in _DECL.finditer(body):
        if m.group(4):
            continue                                   # a memory: counted by its accesses
        name = m.group(3)
        base = name.lstrip("\\").strip()
        if base in _SKIP or base.endswith("__clk") or base.startswith("ubgen_"):
            continue
        width = abs(int(m.group(1)) - int(m.group(2))) + 1 if m.group(1) else 1
        if width <= MAX_WIDTH:
            out[name] = max(width, out.get(name, 0))
    return out


def port_groups(header: str, signals: dict[str, int]) -> dict[str, list[str]]:
    """A tile module's ports, each with the counted signals that make it up (its own signal
    when it is counted, else its named parts ``<port>_*``); the rest of the module's signals
    under :data:`REST`. Every signal belongs to one group."""
    ports = [p.strip().lstrip("\\").strip() for p in header.split(",")]
    plain = {s.lstrip("\\").strip(): s for s in signals}
    groups: dict[str, list[str]] = {}
    taken: set[str] = set()
    for p in sorted((p for p in ports if p and not p.startswith("ubgen_")), key=len, reverse=True):
        own = [plain[p]] if p in plain else [s for b, s in plain.items()
                                             if b.startswith(p + "_") and s not in taken]
        taken.update(own)
        if own:
            groups[p] = own
    groups[REST] = [s for s in signals if s not in taken]
    return groups


def _vec(names: list[str], signals: dict[str, int]) -> list[tuple[str, int]]:
    """Concatenations of ``names`` of at most about :data:`_CHUNK` bits, with their widths."""
    out, cur, w = [], [], 0
    for n in names:
        if cur and w + signals[n] > _CHUNK:
            out.append(("{" + ", ".join(cur) + "}", w))
            cur, w = [], 0
        cur.append(n)
        w += signals[n]
    if cur:
        out.append(("{" + ", ".join(cur) + "}", w))
    return out


def _counters(module: str, groups: dict[str, list[str]], signals: dict[str, int],
              top: bool, lag: bool = False) -> list[str]:
    """The counting logic of a module (module docstring): per group, the toggles of its
    signals between consecutive clock edges of the window (``lag``: the changes the window's
    edges make, counted at the edge after each: module docstring)."""
    out = ["  // ubgen energy events (sim/energy/events.py)"]
    en = "ubgen_en"
    if lag:
        en = "ubgen_en_q"
        out += ["  reg ubgen_en_q = 1'b0;", "  always @(posedge ubgen_ck) ubgen_en_q <= ubgen_en;"]
    upd, fmt, args = [], [], []
    for gi, (g, names) in enumerate(groups.items()):
        terms = []
        for ci, (vec, w) in enumerate(_vec(names, signals)):
            v = f"ubgen_v{gi}_{ci}"
            out += [f"  wire [{w - 1}:0] {v} = {vec};", f"  reg [{w - 1}:0] {v}_p = 0;",
                    f"  always @(posedge ubgen_ck) {v}_p <= {v};"]
            terms.append(f"64'($countones({v} ^ {v}_p))")
        out.append(f"  reg [63:0] ubgen_t{gi} = 64'd0;")
        if terms:
            upd.append(f"    ubgen_t{gi} <= ubgen_t{gi} + " + " + ".join(terms) + ";")
        fmt.append(f"{g}=%0d")
        args.append(f"ubgen_t{gi}")
    out += [f"  always @(posedge ubgen_ck) if ({en}) begin", *upd, "  end"]
    if top:
        out += [f"  reg [63:0] {WINDOW_CYCLES} = 64'd0;",
                f"  always @(posedge ubgen_ck) if (ubgen_en) {WINDOW_CYCLES} <= "
                f"{WINDOW_CYCLES} + 64'd1;"]
        fmt.append(f"{WINDOW_CYCLES}=%0d")
        args.append(WINDOW_CYCLES)
    bits = sum(signals.values())
    out.append(f'  final $display("UBGEN_EVENTS %m {module} {bits} {" ".join(fmt)}", '
               f'{", ".join(args)});')
    return out


def _connect(body: str, known: set[str]) -> str:
    """Every instance of a module of ``known`` in ``body`` connected to ``ubgen_ck`` and
    ``ubgen_en``."""
    def sub(m):
        if m.group(2).lstrip("\\").strip() not in known:
            return m.group(0)
        ind = m.group(1)
        return f"{m.group(0)}\n{ind}  .ubgen_ck(ubgen_ck),\n{ind}  .ubgen_en(ubgen_en),"
    return _INST.sub(sub, body)


def _module_events(name: str, header: str, body: str, known: set[str], top: bool,
                   window: str, with_ports: bool, lag: bool) -> tuple[str, str]:
    """(header, body) of one module with the event counters (module docstring)."""
    signals = counted_signals(body)
    groups = (port_groups(header, signals) if with_ports
              else {REST: list(signals)})
    body = _connect(body, known)
    if top:
        decl = "\n  wire ubgen_ck;\n  wire ubgen_en;"
        tail = [f"  assign ubgen_ck = clk;", f"  assign ubgen_en = {window};"]
    else:
        header = "ubgen_ck, ubgen_en" + (", " + header if header.strip() else "")
        decl = "\n  input ubgen_ck;\n  input ubgen_en;"
        tail = []
    body = decl + body + "\n" + "\n".join(tail + _counters(name, groups, signals, top, lag)) + "\n"
    return header, body


def instrument_events(text: str, known: set[str], top: str | None = None,
                      port_modules: frozenset[str] = frozenset(),
                      window: str = "run & ~done", lag: bool = False) -> str:
    """``text`` (generated Verilog) with the event counters in every module (module
    docstring): ``known``, the modules of the design (their instances get the counters' clock
    and window); ``top``, the module whose ``window`` opens the window (every other module gets
    ``ubgen_ck`` and ``ubgen_en`` ports); ``port_modules``, the modules whose ports are counted
    apart (the tile modules: input load and routing hops); ``lag``: toggles counted one edge
    late (the array's window: module docstring)."""
    out, pos = [], 0
    for m in _MODULE.finditer(text):
        name = m.group(1).lstrip("\\")
        hdr_end = text.index(");", m.end())
        end = text.index("\nendmodule", hdr_end)
        header, body = _module_events(name, text[m.end():hdr_end], text[hdr_end + 2:end],
                                      known, name == top, window, name in port_modules, lag)
        out += [text[pos:m.end()], header, ");", body]
        pos = end
    return "".join(out) + text[pos:]



def coverage_window(text: str, top: str, window: str = "run & ~done") -> str:
    """``text`` with the first method's window in ``top`` (the reference the counters are
    compared with, a model built with :data:`COVERAGE_ARGS` as well): Verilator's toggle
    coverage zeroed when the window opens and written to ``energy_cov_<n>.dat`` when it closes
    (``$c``), per instance."""
    cov = "Verilated::threadContextp()->coveragep()"
    block = "\n".join([
        "  reg ubgen_win = 1'b0;", "  reg [31:0] ubgen_nwin = 32'd0;",
        "  always @(posedge clk) begin",
        f"    if (({window}) & !ubgen_win) $c(\"{cov}->forcePerInstance(true); {cov}->zero();\");",
        f"    if (!({window}) & ubgen_win) begin",
        f"      $c(\"{cov}->write(std::string(\\\"energy_cov_\\\") + std::to_string(\", "
        "ubgen_nwin, \") + \\\".dat\\\");\");",
        "      ubgen_nwin <= ubgen_nwin + 32'd1;", "    end",
        f"    ubgen_win <= {window};", "  end", ""])
    return _insert_before_end(text, top, block)


def module_names(text: str) -> set[str]:
    """The names of the modules ``text`` defines."""
    return {m.group(1).lstrip("\\") for m in _MODULE.finditer(text)}


def instrument(src: Path, dst: Path, files: list[str], top: str | None,
               port_modules: frozenset[str] = frozenset(), coverage: bool = False) -> list[dict]:
    """Copy the Verilog ``files`` from ``src`` to ``dst`` with the event counters
    (:func:`instrument_events`; ``top``'s window when ``top`` is given, else every module has
    the ``ubgen_ck`` and ``ubgen_en`` ports; ``coverage``: the first method's window too,
    :func:`coverage_window`); returns the macros found."""
    dst.mkdir(parents=True, exist_ok=True)
    texts = {f: (src / f).read_text() for f in files}
    known = set().union(*(module_names(t) for t in texts.values()))
    macros = []
    for f, text in texts.items():
        text, found = instrument_memories(text)
        macros += found
        text = instrument_events(text, known, top, port_modules, lag=top is not None)
        if coverage and top is not None and f == f"{top}.v":
            text = coverage_window(text, top)
        path = dst / f
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    return macros


_EVENTS = re.compile(r"UBGEN_EVENTS (\S+) (\S+) (\d+) ?(.*)$")


def parse_events(text: str, into: dict | None = None) -> dict:
    """The ``UBGEN_EVENTS`` lines of a simulation's output: ``{path: {"module", "signals":
    {group: toggles}, "bits": counted signal bits}}`` (a tile module's ports by name, the rest
    of a module's signals under :data:`REST`, the window's cycles, the macros' accesses),
    added to ``into`` when given."""
    out = into if into is not None else {}
    for line in text.splitlines():
        m = _EVENTS.search(line)
        if not m:
            continue
        path, module, bits, rest = m.groups()
        inst = out.setdefault(path, {"module": module, "signals": defaultdict(int), "bits": 0})
        for kv in rest.split():
            k, _, v = kv.rpartition("=")
            inst["signals"][k] += int(v)
        inst["bits"] = max(inst["bits"], int(bits))
    return out


_FIELD = re.compile("\x01([^\x02]+)\x02([^\x01']*)")


def parse_coverage(text: str, into: dict | None = None) -> dict:
    """Toggles per module instance of a Verilator coverage file: ``{hier: {"module", "signals":
    {signal: toggles}, "bits": covered signal bits}}`` (a signal's bits summed; clocks and
    window bookkeeping left out), added to ``into`` when given (several windows)."""
    out = into if into is not None else {}
    bits: dict[str, int] = defaultdict(int)
    for line in text.splitlines():
        if not line.startswith("C '"):
            continue
        head, _, count = line.rpartition(" ")
        f = dict(_FIELD.findall(head))
        if f.get("t") != "toggle":
            continue
        sig, _, edge = f["o"].partition(":")
        base = _demangle(sig.split("[")[0].lstrip("\\").strip())
        if base in _SKIP or base.endswith("__clk"):
            continue
        inst = out.setdefault(f["h"], {"module": _module(f["page"]), "signals": defaultdict(int),
                                       "bits": 0})
        inst["signals"][base] += int(count)
        bits[f["h"]] += edge == "0->1"
    for h, n in bits.items():
        out[h]["bits"] = max(out[h]["bits"], n)
    return out


def _demangle(name: str) -> str:
    """A signal name as the RTL spells it (Verilator writes ``__`` as ``___05F``, ``$`` as
    ``__024``)."""
    return re.sub(r"__0([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), name)


def _module(page: str) -> str:
    return page.split("/", 1)[1].lstrip("\\").strip() if "/" in page else page


def port_toggles(signals: dict, port: str) -> int:
    """Toggles of a tile port: the port's own count when it is covered (at most 64 bits), else
    the sum of its named parts (``sb16_out`` = ``sb16_out_N_0`` + ... + ``sb16_out_W_4``)."""
    if port in signals:
        return signals[port]
    return sum(n for s, n in signals.items() if s.startswith(port + "_"))
