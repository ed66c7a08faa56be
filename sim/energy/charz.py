"""Characterisation of an arch's tile kinds for the energy shortcut (docs/energy.md
"Shortcut"): each tile module of the arch's generated Verilog (``cgra_pe_tile``,
``cgra_io_tile``, ``cgra_mem_tile``: the modules the array instantiates) is run on its own, with
random stimulus, twice from one testbench: at gate level with its switching counted
(:mod:`sim.energy.gates`, the same Yosys mapping as the whole-array model, hierarchy kept) and as
RTL with Verilator's toggle coverage (:mod:`sim.energy.events`). Per block (RTL module) of the
tile, the energy of one RTL signal toggle is fitted as the block's gate-level data energy over
its RTL toggles summed over the runs (least squares through the origin, each run weighted by its
toggles); per kind, the input load per input-port toggle likewise. The flip-flops per kind come
from the same netlist (exact clock energy); the top's flip-flops and macros from the top
synthesised with the tiles as black boxes.

Stimulus (one run = :data:`CYCLES` cycles with ``run`` high, counted): a random configuration
(every register of the kind written with probability ``cfg``/100, random values), then every
32-bit chunk of every incoming track (and the IO tile's GLB read data) takes a new random value
(masked by ``mask``) with probability ``density``/128 per cycle. :data:`STIMULI` spans idle to
saturated activity, a partial configuration and narrow data.

Cached per arch and RTL key in ``build/energy/charz-<arch>-<key>.json``.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
import time
from pathlib import Path

from ubgen.paths import build_dir

from .array import array_category
from .events import (COVERAGE_ARGS, instrument_events, instrument_memories, module_names,
                     parse_coverage, parse_events, port_toggles)
from .gates import EnergyError, emit_verilog, parse_counts, synthesize
from .model import Tech, energy, load_tech

__all__ = ["characterise", "tile_tb", "STIMULI", "CYCLES", "HOP_PORTS", "charz_key"]

BUILD = build_dir("energy")
FLAVOUR = "charz-2"       # 2: event counters (events.py) instead of toggle coverage
CYCLES = 300
HOP_PORTS = ("sb16_out", "sb1_out")
NOISE = ("sb16_in", "sb1_in", "glb__rdata")
# (seed, density of new values per cycle out of 128, % of registers configured, data mask)
STIMULI = [(1, 128, 100, 0xFFFFFFFF), (2, 64, 100, 0xFFFFFFFF), (3, 12, 100, 0xFFFFFFFF),
           (4, 128, 100, 0x000F000F), (5, 40, 30, 0xFFFFFFFF), (6, 0, 100, 0xFFFFFFFF),
           (7, 96, 60, 0x00FF00FF)]


def tile_tb(ports: dict, top: str, registers: list[int], rtl: bool) -> str:
    """The characterisation testbench of the tile module ``top`` (module docstring): ports
    ``{name: (direction, width)}``; ``registers``: the register offsets; ``rtl``: the RTL
    instance (its event counters' ports, and Verilator's toggle coverage zeroed and written
    around the window by ``$c``, for comparison) instead of the gate-level one (its counting
    ports)."""
    ins = [p for p, (d, _) in ports.items() if d == "input" and p not in ("clk", "rst")]
    decl = [f"  reg [{ports[p][1] - 1}:0] {p} = 0;" for p in ins]
    conns = [".clk(clk)", ".rst(rst)"] + ([".ubgen_ck(clk)", ".ubgen_en(en)"] if rtl
                                          else [".energy_clk(clk)", ".energy_en(en)"])
    conns += [f".{p}({p if p in ins else ''})" for p in ports if p not in ("clk", "rst")]
    noise = []
    for p in ins:
        if p not in NOISE:
            continue
        w = ports[p][1]
        for j in range(0, w, 32):
            n = min(32, w - j)
            noise += [f"      r = $random(seed); if ((r & 127) < density) "
                      f"{p}[{j} +: {n}] = $random(seed) & mask;"]
    cfg = [f"    r = $random(seed); if ((r % 100) < cfgp) begin cfg__we = 1; cfg__addr = {o}; "
           "cfg__wdata = $random(seed); @(negedge clk); end" for o in registers]
    cov = "Verilated::threadContextp()->coveragep()"
    return "\n".join([
        "`timescale 1ns/1ps", "module tb;", "  reg clk = 0, rst = 1, en = 0;",
        "  always #5 clk = ~clk;", *decl,
        "  integer i, seed, density, cfgp; reg [31:0] r, mask;",
        f"  {top} dut(" + ", ".join(conns) + ");",
        "  initial begin",
        '    if (!$value$plusargs("seed=%d", seed)) seed = 1;',
        '    if (!$value$plusargs("density=%d", density)) density = 128;',
        '    if (!$value$plusargs("cfgp=%d", cfgp)) cfgp = 100;',
        '    if (!$value$plusargs("mask=%h", mask)) mask = 32\'hffffffff;',
        "    repeat (3) @(negedge clk); rst = 0;", *cfg,
        "    cfg__we = 0; cfg__addr = 0; cfg__wdata = 0; @(negedge clk);",
        *([f'    $c("{cov}->zero();");'] if rtl else []),
        "    run = 1; en = 1;",
        f"    for (i = 0; i < {CYCLES}; i = i + 1) begin", *noise, "      @(negedge clk);",
        "    end",
        *([f'    $c("{cov}->write(\\"ecov.dat\\");");'] if rtl else []),
        "    en = 0; @(negedge clk); $finish;", "  end", "endmodule", ""])


def charz_key(arch) -> tuple[Path, str]:
    """(the arch's generated Verilog directory, the characterisation's cache key: the
    Verilog's digest, the stimuli, the assumptions and this flow's version)."""
    from sim.array_run import generate_verilog
    from .model import TECH_FILE
    rtl, vkey, _ = generate_verilog(arch)
    h = hashlib.sha256(json.dumps([vkey, FLAVOUR, STIMULI, CYCLES,
                                   TECH_FILE.read_text()]).encode())
    return rtl, h.hexdigest()[:16]


def _registers(rtl: Path, top: str, kind: str) -> list[int]:
    amap = json.loads((rtl / f"{top}.json").read_text())
    try:
        return [r["offset"] for r in amap["tiles"]["kinds"][kind]["registers"]]
    except KeyError:
        raise EnergyError(f"the address map has no registers of tile kind {kind!r}") from None


def _tile_models(kind: str, arch, rtl: Path, work: Path, log) -> dict:
    """The gate-level and the toggle-counting RTL testbench models of one tile kind."""
    from sim.runner import build_model
    from ubgen.array import tile_module
    from ubgen.top import top_module
    top = tile_module(kind)
    src = rtl / f"{top}.v"
    log(f"energy: characterising {arch.name}'s {top}: Yosys mapping and two Verilator builds")
    netlist = synthesize([src], top, work / "synth")
    ports = {n: (d["direction"], len(d["bits"]))
             for n, d in netlist["modules"][top]["ports"].items()}
    files, infos = emit_verilog(netlist, top, work / "gl", tiles={top},
                                hop_ports={top: set(HOP_PORTS) & set(ports)})
    regs = _registers(rtl, top_module(arch), kind)
    (work / "tb_gate.v").write_text(tile_tb(ports, top, regs, rtl=False))
    name = f"energy-charz/{work.parent.name}-{work.name}"
    gate = build_model(name=f"{name}-gate", top="tb", timing=True,
                       sources=[*files, work / "tb_gate.v"], opt="-O0", rebuild=False)
    text, macros = instrument_memories(src.read_text())
    (work / "rtl.v").write_text(instrument_events(text, module_names(text),
                                                  port_modules=frozenset({top})))
    (work / "tb_rtl.v").write_text(tile_tb(ports, top, regs, rtl=True))
    rtlm = build_model(name=f"{name}-rtl", top="tb", timing=True,
                       sources=[work / "rtl.v", work / "tb_rtl.v"], opt="-O0",
                       args=COVERAGE_ARGS, rebuild=False)
    return {"top": top, "ports": ports, "infos": infos, "gate": gate.binary,
            "rtl": rtlm.binary, "macros": macros,
            "build_seconds": gate.total_s + rtlm.total_s}


def _run_pair(m: dict, stim: tuple, tech: Tech) -> dict:
    """One stimulus on both models: per RTL module, the gate-level data energy and the RTL
    toggles; the tile's input load, hops and clock."""
    seed, dens, cfgp, mask = stim
    args = [f"+seed={seed}", f"+density={dens}", f"+cfgp={cfgp}", f"+mask={mask:x}"]
    out = subprocess.run([str(m["gate"]), *args], capture_output=True, text=True,
                         check=True).stdout
    b = energy(parse_counts(out), m["infos"], tech, array_category)
    with tempfile.TemporaryDirectory() as d:
        ev = subprocess.run([str(m["rtl"]), *args], cwd=d, capture_output=True, text=True,
                            check=True).stdout
        ref = parse_coverage((Path(d) / "ecov.dat").read_text())
    cov = parse_events(ev)
    blocks: dict[str, dict] = {}
    for inst in b.instances.values():
        info = m["infos"][inst["module"]]
        e = blocks.setdefault(info.orig, {"pj": 0.0, "toggles": 0})
        e["pj"] += inst["data_pj"]
        e["gates"] = info.gates + info.ffs
    ins = [p for p, (d, _) in m["ports"].items() if d == "input" and p not in ("clk", "rst")]
    tin = thop = 0
    for h, c in cov.items():
        if not h.startswith("tb.dut"):
            continue
        e = blocks.setdefault(c["module"], {"pj": 0.0, "toggles": 0, "coverage_toggles": 0})
        e["toggles"] += sum(n for s, n in c["signals"].items() if not s.startswith("ubgen_"))
        e["bits"] = c["bits"]
    tin_cov = 0
    for h, c in ref.items():            # the first method's counts, compared in the record
        e = blocks.get(c["module"])
        if h.startswith("tb.dut") and e is not None:
            e["coverage_toggles"] = e.get("coverage_toggles", 0) + sum(
                n for s, n in c["signals"].items() if not s.startswith("ubgen_"))
        if h.startswith("tb.dut") and c["module"] == m["top"]:
            tin_cov += sum(port_toggles(c["signals"], p) for p in ins)
        if c["module"] == m["top"]:
            tin += sum(port_toggles(c["signals"], p) for p in ins)
            thop += sum(port_toggles(c["signals"], p) for p in HOP_PORTS)
    inst = list(b.instances.values())
    return {"stimulus": list(stim), "blocks": blocks,
            "input_pj": sum(i["input_pj"] for i in inst), "input_toggles": tin,
            "input_toggles_coverage": tin_cov,
            "hop_pj": sum(i["hop_pj"] for i in inst),
            "hop_bits_gate": sum(i["thop"] for i in inst), "hop_bits_rtl": thop,
            "clock_pj": sum(i["clock_pj"] for i in inst),
            "ffs": sum(i["ffs"] for i in inst), "cycles": b.cycles}


def _fit(runs: list[dict]) -> tuple[dict, float]:
    """Per block, pJ per RTL toggle (summed gate-level data energy / summed RTL toggles; a
    block that never toggles in RTL gets none), and the input load per input-port toggle."""
    blocks: dict[str, dict] = {}
    for r in runs:
        for mod, e in r["blocks"].items():
            s = blocks.setdefault(mod, {"pj": 0.0, "toggles": 0, "gates": e.get("gates", 0),
                                        "bits": e.get("bits", 0)})
            s["pj"] += e["pj"]
            s["toggles"] += e["toggles"]
            s["coverage_toggles"] = s.get("coverage_toggles", 0) + e.get("coverage_toggles", 0)
    for s in blocks.values():
        s["pj_per_toggle"] = s["pj"] / s["toggles"] if s["toggles"] else None
    tin = sum(r["input_toggles"] for r in runs)
    k_in = sum(r["input_pj"] for r in runs) / tin if tin else 0.0
    return blocks, k_in


def _residuals(runs: list[dict], blocks: dict, k_in: float) -> list[dict]:
    """Per run: the tile's data energy (own switching, input load, hops) at gate level and as
    the fit predicts it from the RTL toggles; and the total with the (exact) clock."""
    out = []
    for r in runs:
        gate = sum(e["pj"] for e in r["blocks"].values()) + r["input_pj"] + r["hop_pj"]
        pred = sum((blocks[m]["pj_per_toggle"] or 0.0) * e["toggles"]
                   for m, e in r["blocks"].items()) + k_in * r["input_toggles"] + r["hop_pj"]
        out.append({"stimulus": r["stimulus"], "gate_data_pj": round(gate, 2),
                    "shortcut_data_pj": round(pred, 2),
                    "data_error_pct": round(100 * (pred - gate) / gate, 2) if gate else None,
                    "total_error_pct": round(100 * (pred - gate) / (gate + r["clock_pj"]), 2),
                    "hop_bits_gate": r["hop_bits_gate"], "hop_bits_rtl": r["hop_bits_rtl"]})
    return out


def _kind(kind: str, arch, rtl: Path, work: Path, tech: Tech, log) -> dict:
    m = _tile_models(kind, arch, rtl, work, log)
    t = time.perf_counter()
    runs = [_run_pair(m, s, tech) for s in STIMULI]
    blocks, k_in = _fit(runs)
    res = _residuals(runs, blocks, k_in)
    # the relative error of a run that barely switches (the idle stimulus) says nothing
    errs = [abs(r["data_error_pct"]) for r in res if r["gate_data_pj"] >= 1.0]
    return {"module": m["top"], "ffs": runs[0]["ffs"], "macros": m["macros"],
            "inputs": [p for p, (d, _) in m["ports"].items()
                       if d == "input" and p not in ("clk", "rst")],
            "blocks": {k: {kk: (round(vv, 6) if isinstance(vv, float) else vv)
                           for kk, vv in v.items()} for k, v in sorted(blocks.items())},
            "input_pj_per_toggle": round(k_in, 6), "runs": res,
            "input_pj": round(sum(r["input_pj"] for r in runs), 6),
            "input_toggles": sum(r["input_toggles"] for r in runs),
            "input_toggles_coverage": sum(r["input_toggles_coverage"] for r in runs),
            "max_data_error_pct": max(errs) if errs else None,
            "build_seconds": round(m["build_seconds"], 1),
            "run_seconds": round(time.perf_counter() - t, 1)}


def _top(arch, rtl: Path, work: Path) -> dict:
    """The top's own flip-flops (the tiles as black boxes) and its macros, from the same
    Yosys mapping."""
    from ubgen.array import KINDS, tile_module
    from ubgen.top import top_module
    top = top_module(arch)
    tiles = {tile_module(k) for k in KINDS}
    netlist = synthesize([rtl / f"{top}.v"], top, work / "synth",
                         lib=tuple(rtl / f"{t}.v" for t in sorted(tiles)))
    _, infos = emit_verilog(netlist, top, work / "gl")
    by_orig = {i.orig: i for i in infos.values()}
    mods = netlist["modules"]

    def ffs(mod: str) -> int:
        own = by_orig[mod].ffs if mod in by_orig and mod not in tiles else 0
        return own + sum(ffs(c["type"]) for c in mods[mod]["cells"].values()
                         if c["type"] in mods and c["type"] not in tiles)
    macros = [{"module": i.orig, "memory": mc["cell"].lstrip("\\"), "kind": mc["kind"],
               "depth": mc["depth"], "width": mc["width"]}
              for i in infos.values() for mc in i.macros]
    # modules of wiring only (the array, the tiles' wrappers): no gates of their own, so no
    # data energy at gate level either (their nets' loads are the tiles' inputs)
    wiring = sorted(i.orig for i in infos.values()
                    if i.orig not in tiles and not (i.gates or i.ffs or i.macros))
    return {"module": top, "ffs": ffs(top), "macros": macros, "wiring": wiring,
            "gates": {i.orig: i.gates + i.ffs for i in infos.values() if i.orig not in tiles}}


def _kind_cached(kind: str, arch, rtl: Path, tech: Tech, log) -> dict:
    """One tile kind's characterisation, cached by its module's Verilog, its registers, the
    stimuli and the assumptions (archs whose tile modules are the same text share it)."""
    from sim.runner import locked
    from ubgen.array import tile_module
    from ubgen.top import top_module
    from .model import TECH_FILE
    top = tile_module(kind)
    h = hashlib.sha256((rtl / f"{top}.v").read_bytes())
    h.update(json.dumps([FLAVOUR, STIMULI, CYCLES, _registers(rtl, top_module(arch), kind),
                         TECH_FILE.read_text()]).encode())
    key = h.hexdigest()[:16]
    path = BUILD / f"charz-{top}-{key}.json"
    with locked(BUILD / f".charz-{top}-{key}.lock"):
        if not path.exists():
            out = _kind(kind, arch, rtl, BUILD / f"charz-{top}-{key}", tech, log)
            path.write_text(json.dumps(dict(out, key=key), indent=1))
    return json.loads(path.read_text())


def characterise(arch, tech: Tech | None = None, log=print, build: bool = True) -> dict:
    """The arch's characterisation (module docstring), from the cache or, with ``build``, made
    now (minutes: per tile kind not yet characterised, one Yosys mapping, two Verilator builds
    and 2 x len(STIMULI) short runs; the top's Yosys mapping); without ``build`` a missing one
    is a one-line error."""
    from sim.array_run import _arch
    from sim.runner import locked
    from ubgen.array import KINDS
    arch = _arch(arch)
    rtl, key = charz_key(arch)
    path = BUILD / f"charz-{arch.name}-{key}.json"
    with locked(BUILD / f".charz-{arch.name}.lock"):
        if path.exists():
            return json.loads(path.read_text())
        if not build:
            raise EnergyError(f"no energy characterisation of {arch.name} for its current RTL "
                              f"(key {key}); `ubc sim APP --arch {arch.name} --energy` makes it")
        t = time.perf_counter()
        tech = tech or load_tech()
        kinds = {k: _kind_cached(k, arch, rtl, tech, log) for k in KINDS}
        blocks = [b for k in kinds.values() for b in k["blocks"].values()]
        pj = sum(b["pj"] for b in blocks)
        tg = sum(b["toggles"] for b in blocks)
        dens = sum(b["toggles"] * b["gates"] / b["bits"] for b in blocks if b["bits"])
        out = {"arch": arch.name, "key": key, "technology": tech.name, "cycles": CYCLES,
               "stimuli": STIMULI, "kinds": kinds,
               "top": _top(arch, rtl, BUILD / f"charz-{arch.name}-{key}" / "top"),
               "pooled_pj_per_toggle": round(pj / tg, 6) if tg else 0.0,
               "pj_per_toggle_per_gate_per_bit": round(pj / dens, 6) if dens else 0.0,
               "seconds": round(time.perf_counter() - t, 1)}
        path.write_text(json.dumps(out, indent=1))
        return out
