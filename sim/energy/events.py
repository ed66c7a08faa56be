"""Events of an ordinary RTL run, counted for the energy shortcut (docs/energy.md "Shortcut").

The RTL model of ``make sim`` is built once more with Verilator's toggle coverage
(``--coverage-toggle``: every bit of every RTL signal counts its 0->1 and 1->0 transitions) and
two additions to the generated Verilog (:func:`instrument`):

* the top's energy window: when ``run & ~done`` opens, the coverage counts are zeroed; when it
  closes, they are written to ``energy_cov_<n>.dat`` in the run directory (Verilator's
  ``$c``), per instance (Verilator otherwise merges the instances of a hierarchical block,
  ``tile_r0_c*``); so, as in the gate-level run, configuration, loads and read-back are not
  counted; a 1-bit register that flips in every window cycle counts the window's cycles;
* every SRAM macro (a memory of at least :data:`~sim.energy.gates.MACRO_MIN_DEPTH` words, as at
  gate level) gets two 1-bit registers that flip on every read and every write access, so their
  toggle counts are the macro's accesses, exactly.

:func:`parse_coverage` sums a coverage file into toggles per module instance (clocks and the
instrumentation's own signals apart); :mod:`sim.energy.shortcut` prices them.
"""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from .gates import MACRO_MIN_DEPTH, EnergyError

__all__ = ["port_toggles", "instrument", "instrument_top", "instrument_memories", "parse_coverage",
           "COVERAGE_ARGS", "WINDOW_CYCLES", "SRAM_PREFIX"]

# signals of at most 64 bits: Verilator's toggle counts of wider ones (its multi-word values)
# are wrong (a tile's 320-bit track bus counted 5-8x the toggles of its twenty 16-bit tracks);
# the generated RTL names every wide bus's parts (tracks, fields) as signals of their own, and
# memories stay out (counted by their accesses)
COVERAGE_ARGS = ["--coverage-toggle", "--coverage-max-width", "64"]
WINDOW_CYCLES = "ubgen_cyc"
SRAM_PREFIX = "ubgen_sram_"
_SKIP = {"clk", "energy_clk", "ubgen_win", "ubgen_nwin"}

_MEM = re.compile(r"^\s*reg \[(\d+):0\] (\\?\S+) \[(\d+):0\];", re.M)
_MODULE = re.compile(r"^module (\\?\S+?)\s*\(", re.M)


def _window_block(window: str, name: str = "energy_cov_") -> str:
    cov = "Verilated::threadContextp()->coveragep()"
    return "\n".join([
        "  // ubgen energy window (sim/energy/events.py)",
        "  reg ubgen_win = 1'b0;", f"  reg {WINDOW_CYCLES} = 1'b0;",
        "  reg [31:0] ubgen_nwin = 32'd0;",
        "  always @(posedge clk) begin",
        f"    if (({window}) & !ubgen_win) $c(\"{cov}->forcePerInstance(true); {cov}->zero();\");",
        f"    if (!({window}) & ubgen_win) begin",
        f"      $c(\"{cov}->write(std::string(\\\"{name}\\\") + std::to_string(\", ubgen_nwin, "
        "\") + \\\".dat\\\");\");",
        "      ubgen_nwin <= ubgen_nwin + 32'd1;", "    end",
        f"    ubgen_win <= {window};",
        f"    if ({window}) {WINDOW_CYCLES} <= ~{WINDOW_CYCLES};", "  end", ""])


def _insert_before_end(text: str, module: str, block: str) -> str:
    """``block`` inserted before the ``endmodule`` of ``module`` in ``text``."""
    m = re.search(rf"^module {re.escape(module)}\s*\(", text, re.M)
    if not m:
        raise EnergyError(f"no module {module} in the generated Verilog")
    end = text.index("\nendmodule", m.end())
    return text[:end] + "\n" + block + text[end:]


def instrument_top(text: str, top: str, window: str = "run & ~done") -> str:
    """The top's Verilog with the energy window (module docstring)."""
    return _insert_before_end(text, top, _window_block(window))


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
    """Every macro memory of ``text`` with its access-counting registers; returns the new text
    and one ``{"module", "memory", "depth", "width"}`` per macro."""
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
            block += [f"  reg {c}_rd = 1'b0, {c}_wr = 1'b0;",
                      f"  always @(posedge {ck}) begin",
                      f"    if ({rd}) {c}_rd <= ~{c}_rd;",
                      f"    if ({we}) {c}_wr <= ~{c}_wr;", "  end"]
            found.append({"module": module, "memory": name.lstrip("\\"), "depth": depth,
                          "width": width})
        if block:
            out = _insert_before_end(out, mod_m.group(1), "\n".join(block) + "\n")
    return out, found


def instrument(src: Path, dst: Path, files: list[str], top: str | None) -> list[dict]:
    """Copy the Verilog ``files`` from ``src`` to ``dst``, instrumented (the window in ``top``'s
    file when ``top`` is given); returns the macros found."""
    dst.mkdir(parents=True, exist_ok=True)
    macros = []
    for f in files:
        text, found = instrument_memories((src / f).read_text())
        macros += found
        if top is not None and f == f"{top}.v":
            text = instrument_top(text, top)
        path = dst / f
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    return macros


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
