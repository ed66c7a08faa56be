"""Energy of an application on the whole accelerator (docs/energy.md "Per application"):
``cgra_top`` of the arch mapped to gates (:mod:`sim.energy.gates`, the tile modules kept as
Verilator hierarchical blocks as in the RTL model), built once per arch and cached, then the
application's bundle run on it through the same cocotb host testbench as ``make sim``
(:func:`sim.array_run.run_bundle`: configure over AXI4-Lite, load the GLB, run, read back and
compare). Switching is counted from the cycle ``START`` is written to the cycle ``DONE`` rises
(the top's ``run & ~done``), so the host's configuration and loads are not part of the figure.

Categories (thesis Figs. 7.3 / 7.10): PE logic (the PE tiles' cores and tile logic), MEM logic
(the MEM tiles' cores: controllers, aggregators, transpose buffers, register files, SRAM port),
SRAM (the MEM tiles' macro accesses), interconnect (switch boxes, connection boxes, their
configuration and the routing hops between tiles), GLB/IO (the IO tiles' cores, the global
buffer's logic and bank accesses, the AXI slave and the counters) and clock (every flip-flop in
every counted cycle).
"""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

from ubgen.paths import build_dir

from .gates import EnergyError, emit_verilog, parse_counts, synthesize
from .model import Tech, energy, load_tech

__all__ = ["gate_model", "array_category", "run_energy", "CATEGORIES", "tile_of", "timed_run"]

BUILD = build_dir("energy")
CATEGORIES = ("PE logic", "MEM logic", "SRAM", "interconnect", "GLB/IO", "clock")
FLAVOUR = "gates-v2"
_KIND_CAT = {"cgra_pe_tile": "PE logic", "cgra_mem_tile": "MEM logic", "cgra_io_tile": "GLB/IO"}
_INTERCONNECT = ("sb16", "sb1", "cb_", "ic_regs")


def _gate_model_options():
    """The C++ of the gate-level model unoptimised: it builds in about half the time of -O1
    (the build dominates; a run is a few minutes either way). The tiles' wrappers as Verilator
    generates them (no :mod:`sim.hier_memo`): the switching counters inside the tiles count
    per evaluation."""
    from sim.array_run import ModelOptions
    return ModelOptions(opt_fast="-O0", opt_slow="-O0", opt_global="-O1", hier_memo=False,
                        hier_fall_skip=False, hier_rise_no_ico=False)


def array_category(path: str, module: str, part: str) -> str:
    """The category (:data:`CATEGORIES`) of a module instance's data, hop, clock or SRAM
    energy."""
    if part == "clock":
        return "clock"
    if part in ("hop", "input"):
        return "interconnect"
    if part == "sram":
        # a macro's owner may have no gates (no counts, module unknown): its path decides
        in_mem = module.split(".")[0] == "cgra_mem_tile" or "cgra_mem_tile" in path.split(".")
        return "SRAM" if in_mem else "GLB/IO"
    kind = module.split(".")[0]
    if kind not in _KIND_CAT:
        return "GLB/IO"                    # top level: global buffer, AXI slave, counters
    leaf = module.split(".")
    if len(leaf) > 2 and leaf[2].startswith(_INTERCONNECT):
        return "interconnect"
    return _KIND_CAT[kind]


def tile_of(path: str) -> str | None:
    """``tile_r<r>_c<c>`` of an instance path inside a tile, else None."""
    for part in path.split("."):
        i = part.find("tile_r")
        if i >= 0:
            return part[i:]
    return None


def _stamp_ok(stamp: Path, key: str) -> bool:
    return stamp.exists() and json.loads(stamp.read_text()).get("key") == key


def gate_model(arch, log=print) -> dict:
    """The gate-level Verilator model of ``arch``'s ``cgra_top`` (built when missing): a
    :func:`sim.array_run.model_for`-shaped dict plus ``infos`` (per-module
    :class:`~sim.energy.gates.ModuleInfo`) and the seconds each step took (0 when cached)."""
    from ubgen.array import KINDS, tile_module
    from sim.array_run import _arch, _verilate, generate_verilog
    from sim.runner import locked, setup_verilator
    arch = _arch(arch)
    rtl, sha, _ = generate_verilog(arch)
    top = f"cgra_top_{arch.name}"
    key = hashlib.sha256(f"{sha}:{FLAVOUR}".encode()).hexdigest()[:16]
    work = BUILD / f"{arch.name}-{key}"
    gl, model_dir = work / "gl", work / "model"
    tiles = {tile_module(k) for k in KINDS}
    seconds = {"synthesis": 0.0, "verilator_build": 0.0}
    with locked(BUILD / f".{work.name}.lock"):
        infos_path = gl / "infos.json"
        if not _stamp_ok(work / "gates.json", key):
            t = time.perf_counter()
            log(f"energy: mapping {arch.name}'s cgra_top to gates (Yosys; ~10 min for cgra_4x4, "
                f"once per arch, cached in {work})")
            sources = sorted(p for p in rtl.glob("*.v") if p.name != "cgra_array.v")
            netlist = synthesize(sources, top, work / "synth", keep_nets=("run", "done"))
            run_done = _window(netlist, top)
            if gl.exists():
                shutil.rmtree(gl)
            files, infos = emit_verilog(
                netlist, top, gl, files={t_: f"{t_}.v" for t_ in tiles} | {top: f"{top}.v"},
                keep=tiles, hop_ports={t_: {"sb16_out", "sb1_out"} for t_ in tiles},
                window=run_done, tiles=tiles)
            shutil.copy(rtl / f"{top}.json", gl / f"{top}.json")
            infos_path.write_text(json.dumps({k: vars(v) for k, v in infos.items()}))
            seconds["synthesis"] = time.perf_counter() - t
            (work / "gates.json").write_text(json.dumps({"key": key}))
        stamp = model_dir / "model.json"
        if not _stamp_ok(stamp, key):
            t = time.perf_counter()
            log(f"energy: Verilator build of the gate-level {arch.name} (cold; tens of minutes "
                f"on a loaded machine, cached in {model_dir})")
            setup_verilator()
            # an interrupted build of the same key resumes: Verilator skips identical output,
            # make keeps the compiled objects
            model_dir.mkdir(parents=True, exist_ok=True)
            _verilate(model_dir, gl, arch, False, _gate_model_options())
            seconds["verilator_build"] = time.perf_counter() - t
            stamp.write_text(json.dumps({"key": key, "seconds": round(seconds[
                "verilator_build"], 1)}))
    from .gates import ModuleInfo
    infos = {k: ModuleInfo(**v) for k, v in json.loads(infos_path.read_text()).items()}
    amap = json.loads((gl / f"{top}.json").read_text())
    return {"build_dir": model_dir, "rtl": gl, "sha256": key, "top": top, "address_map": amap,
            "verilog_seconds": 0.0, "verilator_build_seconds": seconds["verilator_build"],
            "cached": not any(seconds.values()), "infos": infos, "seconds": seconds}


def _window(netlist: dict, top: str) -> str:
    """``energy_en`` of the top: ``run & ~done`` over the top's nets."""
    nets = netlist["modules"][top]["netnames"]
    bits = {}
    for name in ("run", "done"):
        if name not in nets or len(nets[name]["bits"]) != 1:
            raise EnergyError(f"{top}: no single-bit net {name!r} after synthesis; the energy "
                              "window (run & ~done) cannot be found")
        b = nets[name]["bits"][0]
        bits[name] = f"n{b}" if isinstance(b, int) else ("1'b1" if b == "1" else "1'b0")
    return f"{bits['run']} & ~{bits['done']}"


def _by_tile(b) -> dict[str, dict]:
    """Per tile: its own data switching, clock, the hops it drives, the load its incoming nets
    put on the neighbours' drivers (input), its macros' SRAM energy, and its data switching by
    block (switch boxes, connection boxes, core, ...)."""
    parts = ("data_pj", "clock_pj", "hop_pj", "input_pj")
    tiles: dict[str, dict] = {}
    for path, inst in b.instances.items():
        tile = tile_of(path)
        if tile is None:
            continue
        d = tiles.setdefault(tile, dict.fromkeys(parts, 0.0) | {"data_by_block": {}})
        for k in parts:
            d[k] += inst[k]
        leaf = inst["module"].split(".")
        block = leaf[2] if len(leaf) > 2 else "tile"
        d["data_by_block"][block] = d["data_by_block"].get(block, 0.0) + inst["data_pj"]
    for path, s in b.sram_accesses.items():
        tile = tile_of(path)
        if tile:
            d = tiles.setdefault(tile, dict.fromkeys(parts, 0.0) | {"data_by_block": {}})
            d["sram_pj"] = d.get("sram_pj", 0.0) + s["pj"]
    return {t: {k: ({kk: round(vv, 3) for kk, vv in v.items() if vv} if isinstance(v, dict)
                    else round(v, 3)) for k, v in d.items()} for t, d in tiles.items()}


def timed_run(bundle: dict, arch, model_of, log, progress=None) -> tuple[dict, dict, float]:
    """``bundle`` run, its directory kept, on the model ``model_of(arch, log)`` (built when
    missing): (the model, the run's result, the simulation's seconds); ``progress``: the
    stream of the run's live progress (:func:`sim.array_run.run_bundle`)."""
    from sim.array_run import run_bundle
    model = model_of(arch, log)
    t = time.perf_counter()
    res = run_bundle(bundle, arch, waves=False, log=log, model=model, keep=True,
                     progress=progress)
    return model, res, time.perf_counter() - t


def run_energy(bundle: dict, arch, tech: Tech | None = None, log=print) -> dict:
    """Run ``bundle`` on the gate-level model of ``arch``; returns the run's verdict (the
    gate-level netlist must reproduce the golden output in the predicted cycles) and the
    energy: total, by category, by tile, SRAM accesses, seconds."""
    tech = tech or load_tech()
    t0 = time.perf_counter()
    model, res, sim_seconds = timed_run(bundle, arch, gate_model, log)
    run_dir = Path(res["run_dir"])
    counts = parse_counts((run_dir / "sim.log").read_text())
    # the raw counts of the last run, to re-price or inspect without re-simulating
    (Path(model["build_dir"]).parent / "last_counts.json").write_text(json.dumps(counts))
    if res["passed"]:
        shutil.rmtree(run_dir, ignore_errors=True)
        res.pop("run_dir")
    if not counts["modules"]:
        raise EnergyError("the gate-level simulation printed no energy counts")
    b = energy(counts, model["infos"], tech, array_category)
    tiles = _by_tile(b)
    cats = {c: round(b.categories.get(c, 0.0), 3) for c in CATEGORIES}
    return {"passed": res["passed"], "failures": res["failures"], "match": res["match"],
            "cycles_measured": res["cycles_measured"], "window_cycles": b.cycles,
            "total_pj": round(b.total, 3), "categories_pj": cats,
            "tiles": tiles,
            "sram_accesses": b.sram_accesses, "technology": tech.name,
            "sram_scale": tech.sram_scale, "model_seconds": model["seconds"],
            "sim_seconds": round(sim_seconds, 1),
            "energy_seconds": round(time.perf_counter() - t0, 1)}
