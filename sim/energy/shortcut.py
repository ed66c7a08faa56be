"""The energy shortcut (docs/energy.md "Shortcut"): an application's energy from the events of
its ordinary RTL run (:mod:`sim.energy.events`), priced per event class with the energies the
arch's characterisation fitted on gate-level runs of single tiles (:mod:`sim.energy.charz`).

Per module instance of the RTL run:

* data energy: inside a tile, the toggles of the block's RTL signals x the block's fitted energy
  per toggle (the block = the RTL module; its category as at gate level,
  :func:`sim.energy.array.array_category`); outside the tiles (global buffer, AXI slaves,
  counters, the array's glue) the toggles x the mean energy per toggle of all tile blocks;
* input load: a tile's input-port toggles x the kind's fitted energy per input toggle
  (interconnect, as the gate-level ``tin``);
* routing hops: the toggles of a tile's ``sb16_out`` / ``sb1_out`` bits x the hop energy, exact;
* clock: the flip-flops of the tile kind's (or the top's) gate-level netlist x the window's
  cycles, exact;
* SRAM: each macro's read and write accesses (exact) x the SRAM model's energy per access.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

from ubgen.paths import build_dir

from .array import CATEGORIES, array_category, tile_of, timed_run
from .events import (SRAM_PREFIX, WINDOW_CYCLES, instrument, parse_coverage, parse_events,
                     port_toggles)
from .gates import EnergyError
from .model import Tech, load_tech

__all__ = ["event_model", "event_options", "run_events", "price_events", "shortcut_run",
           "shortcut_energy", "coverage_charz", "coverage_reference"]

BUILD = build_dir("energy")
FLAVOUR = "events-5"       # 5: the toggles the window's edges make (events.py), no coverage
# The counters of every module the top inlines (the array's tile wrappers, the glue) are small
# when Verilator orders them and large once their wide vectors are expanded, so its default
# split (20000 nodes per function) left cgra_16x32's in one 118k-line function that -O2 did not
# compile in 23 minutes: split ten times finer, and any file still over 4 MB at -O1
# (sim.array_run.ModelOptions; docs/energy.md "Cost")
COMPILE_LIMITS = {"split_cfuncs": 2000, "big_file_bytes": 4_000_000, "opt_big": "-O1"}


def event_model(arch, log=print, reference: bool = False, rewrite: bool = True) -> dict:
    """The event-counting RTL model of ``arch``'s ``cgra_top`` (built when missing, cached by
    the Verilog's digest and the build options): a :func:`sim.array_run.model_for`-shaped dict
    plus ``macros``. ``rewrite``: the tiles' wrappers rewritten as in the plain model
    (:mod:`sim.hier_memo`: a tile evaluated only when an input changed, not on a falling edge
    of its clocks, without its input region on a rising one), exact for the counters too, which
    are clocked registers of the RTL (docs/energy.md "Cost"); ``False``: Verilator's own
    wrappers (the equality check's reference). ``reference``: with Verilator's toggle coverage
    as well (the first method, to compare the counts: :func:`coverage_reference`), which
    counts what each evaluation changes and so keeps Verilator's wrappers."""
    from sim.array_run import _arch, _verilate, generate_verilog, model_key
    from sim.runner import locked, setup_verilator
    from ubgen.array import KINDS, tile_module
    from ubgen.top import top_module, verilog_sources
    arch = _arch(arch)
    rtl, vkey, vsec = generate_verilog(arch)
    top = top_module(arch)
    opts = event_options(reference, rewrite)
    name = f"events{'-ref' if reference else ''}-{arch.name}"
    seconds = 0.0
    with locked(BUILD / f".{name}.lock"):
        src = BUILD / f"{name}-rtl"
        files = [p.name for p in verilog_sources(rtl, arch)]
        digest, macros = _instrumented(rtl, vkey, src, files, top,
                                       frozenset(tile_module(k) for k in KINDS), reference)
        key = model_key(f"{digest}:{FLAVOUR}", opts, False)[:16]
        work = BUILD / f"{name}-{key}"
        model_dir, stamp = work / "model", work / "model" / "model.json"
        if not (stamp.exists() and json.loads(stamp.read_text()).get("key") == key):
            log(f"energy: Verilator build of {arch.name}'s RTL with event counters (cold: "
                f"about the plain model's build; cached in {model_dir})")
            t = time.perf_counter()
            setup_verilator()
            if work.exists():
                shutil.rmtree(work)
            shutil.copytree(src, work / "rtl")
            shutil.copy(rtl / f"{top}.json", work / "rtl" / f"{top}.json")
            model_dir.mkdir(parents=True)
            big = _verilate(model_dir, work / "rtl", arch, False, opts)
            seconds = time.perf_counter() - t
            stamp.write_text(json.dumps({"key": key, "seconds": round(seconds, 1),
                                         f"at {opts.opt_big}": big}))
    amap = json.loads((rtl / f"{top}.json").read_text())
    return {"build_dir": model_dir, "rtl": work / "rtl", "sha256": key, "top": top,
            "address_map": amap, "verilog_seconds": vsec, "verilator_build_seconds": seconds,
            "cached": seconds == 0.0, "macros": macros, "options": opts}


def event_options(reference: bool = False, rewrite: bool = True):
    """The build options of :func:`event_model`'s model (part of its cache key): the
    construction code unoptimised (it builds much faster; the evaluation code is -O2), the
    C++ functions split finer (:data:`COMPILE_LIMITS`); the tiles' wrappers rewritten unless
    ``rewrite`` is off or the model has the toggle coverage (``reference``)."""
    from sim.array_run import ModelOptions
    memo = rewrite and not reference
    return ModelOptions(opt_slow="-O0", coverage=reference, hier_memo=memo,
                        hier_fall_skip=memo, hier_rise_no_ico=memo, **COMPILE_LIMITS)


def _instrumented(rtl: Path, vkey: str, src: Path, files: list[str], top: str,
                  ports: frozenset[str], coverage: bool) -> tuple[str, list[dict]]:
    """The generated Verilog ``rtl`` (content digest ``vkey``) with the event counters in
    ``src`` (:func:`sim.energy.events.instrument`): (the SHA-256 of the instrumented files, the
    macros found). Made again only when the Verilog, the files, the options or the
    instrumentation's code (``events.py``, ``gates.py``) changed: a warm run reads the stamp
    ``src/instrumented.json`` instead of rewriting ten megabytes of Verilog."""
    here = Path(__file__).parent
    code = hashlib.sha256(b"".join((here / f).read_bytes() for f in ("events.py", "gates.py")))
    ikey = hashlib.sha256(json.dumps([vkey, files, top, sorted(ports), coverage,
                                      code.hexdigest()]).encode()).hexdigest()
    stamp = src / "instrumented.json"
    if stamp.exists():
        old = json.loads(stamp.read_text())
        if old.get("key") == ikey and all((src / f).exists() for f in files):
            return old["digest"], old["macros"]
    stamp.unlink(missing_ok=True)
    macros = instrument(rtl, src, files, top, ports, coverage=coverage)
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(src.glob("*.v"))))
    stamp.write_text(json.dumps({"key": ikey, "digest": digest.hexdigest(), "macros": macros}))
    return digest.hexdigest(), macros


def run_events(bundle: dict, arch, log=print, reference: bool = False, rewrite: bool = True,
               progress=None) -> dict:
    """``bundle`` on the event-counting RTL model (:func:`event_model`): the run's verdict
    (the same host testbench and checks as ``make sim``'s), its toggles per module instance
    inside the energy window(s) and the seconds spent (``reference``: on the model with toggle
    coverage too, whose counts come as ``coverage``; ``progress``: the live progress's
    stream). A passing run that printed no window's counts is an :class:`EnergyError`; a
    failing one keeps its run directory and whatever counts it printed."""
    t0 = time.perf_counter()
    model, res, sim_seconds = timed_run(
        bundle, arch, lambda a, lg: event_model(a, lg, reference=reference, rewrite=rewrite),
        log, progress=progress)
    run_dir = Path(res["run_dir"])
    log_path = run_dir / "sim.log"
    inst = parse_events(log_path.read_text()) if log_path.exists() else {}
    if res["passed"] and not any(WINDOW_CYCLES in i["signals"] for i in inst.values()):
        raise EnergyError(f"the RTL run printed no energy window's counts ({run_dir})")
    cov: dict = {}
    for f in sorted(run_dir.glob("energy_cov_*.dat")) if reference else []:
        parse_coverage(f.read_text(), cov)
    if res["passed"]:
        shutil.rmtree(run_dir, ignore_errors=True)
        res.pop("run_dir")
    return {"result": res, "instances": inst, "coverage": cov, "model": model,
            "sim_seconds": round(sim_seconds, 1),
            "model_seconds": round(time.perf_counter() - t0 - sim_seconds, 1)}


def _blocks(charz: dict) -> tuple[dict, dict]:
    """(tile module -> kind, RTL module -> its characterisation) of a characterisation."""
    kinds = {k["module"]: name for name, k in charz["kinds"].items()}
    per = {m: b for k in charz["kinds"].values() for m, b in k["blocks"].items()}
    return kinds, per


def _per_toggle(mod: str, toggles: int, inst: dict, kinds: dict, per: dict,
                charz: dict) -> float:
    """pJ per RTL toggle of a module instance: a tile block's fitted one; a tile block that
    never toggled in the characterisation (e.g. the configuration's read path, which the host's
    polling during the run exercises), and the top's modules outside the tiles: the tile
    blocks' energy per toggle per gate per signal bit x the module's gates per bit."""
    dens = charz["pj_per_toggle_per_gate_per_bit"]
    if mod.split(".")[0] in kinds:
        b = per.get(mod)
        if b is None:
            if toggles:
                raise EnergyError(f"block {mod} toggles ({toggles}) but is not part of the "
                                  f"{charz['arch']} characterisation (a different RTL?)")
            return 0.0
        if b["pj_per_toggle"] is not None:
            return b["pj_per_toggle"]
        return dens * b.get("gates", 0) / b["bits"] if b.get("bits") else 0.0
    gates = charz["top"]["gates"].get(mod, 0)
    return dens * gates / inst["bits"] if inst.get("bits") else 0.0


def _sram(instances: dict, charz: dict, tech: Tech) -> dict:
    """Per macro instance: reads and writes counted in the window, and their energy."""
    shapes = {(m["module"], m["memory"]): m for m in charz["top"]["macros"]}
    for k in charz["kinds"].values():
        for m in k["macros"]:
            shapes.setdefault((m["module"], m["memory"]), dict(m, kind="sp"))
    out = {}
    for path, inst in instances.items():
        for sig, n in inst["signals"].items():
            if not sig.startswith(SRAM_PREFIX):
                continue
            mem, op = sig[len(SRAM_PREFIX):].rsplit("_", 1)
            shape = shapes.get((inst["module"], mem))
            if shape is None:
                raise EnergyError(f"no characterised shape for the macro {mem} of "
                                  f"{inst['module']}")
            d = out.setdefault(f"{path}.{mem}", {"module": inst["module"], "kind": shape["kind"],
                                                 "depth": shape["depth"],
                                                 "width": shape["width"], "reads": 0,
                                                 "writes": 0})
            d["reads" if op == "rd" else "writes"] += n
    for path, d in out.items():
        er, ew = tech.sram(d["kind"], d["depth"], d["width"])
        d["pj"] = round(d["reads"] * er + d["writes"] * ew, 3)
    return out


def price_events(instances: dict, charz: dict, tech: Tech) -> dict:
    """Energy of a run's toggles (:func:`run_events`) by the characterisation ``charz``: total,
    by category and by tile, the window's cycles and SRAM accesses (module docstring)."""
    kinds, per = _blocks(charz)
    half_v2 = 0.5 * tech.vdd ** 2 * 1e-3
    clock_ff = 2 * half_v2 * tech.c_clock
    cycles = sum(i["signals"].get(WINDOW_CYCLES, 0) for i in instances.values())
    cats = dict.fromkeys(CATEGORIES, 0.0)
    tiles: dict[str, dict] = {}
    for path, inst in instances.items():
        mod, sig = inst["module"], inst["signals"]
        inner = instances.get(f"{path}.{mod}")
        if inner is not None and inner["module"] == mod:
            continue        # a hierarchical block's interface scope: its ports, counted inside
        toggles = sum(n for s, n in sig.items() if not s.startswith("ubgen_"))
        k = _per_toggle(mod, toggles, inst, kinds, per, charz)
        parts = {"data": k * toggles}
        if mod in kinds:
            kd = charz["kinds"][kinds[mod]]
            parts["input"] = kd["input_pj_per_toggle"] * sum(port_toggles(sig, p)
                                                             for p in kd["inputs"])
            parts["hop"] = half_v2 * tech.c_hop * sum(port_toggles(sig, p)
                                                      for p in ("sb16_out", "sb1_out"))
            parts["clock"] = clock_ff * kd["ffs"] * cycles
        for part, pj in parts.items():
            cats[array_category(path, mod, part)] += pj
        tile = tile_of(path)
        if tile:
            d = tiles.setdefault(tile, {})
            for part, pj in parts.items():
                d[f"{part}_pj"] = d.get(f"{part}_pj", 0.0) + pj
    cats["clock"] += clock_ff * charz["top"]["ffs"] * cycles
    srams = _sram(instances, charz, tech)
    for path, d in srams.items():
        cats[array_category(path, d["module"], "sram")] += d["pj"]
        tile = tile_of(path)
        if tile:
            tiles.setdefault(tile, {})
            tiles[tile]["sram_pj"] = tiles[tile].get("sram_pj", 0.0) + d["pj"]
    return {"total_pj": round(sum(cats.values()), 3),
            "categories_pj": {c: round(v, 3) for c, v in cats.items()},
            "window_cycles": cycles, "sram_accesses": srams,
            "tiles": {t: {k: round(v, 3) for k, v in d.items()} for t, d in sorted(tiles.items())}}


def shortcut_run(bundle: dict, arch, tech: Tech | None = None, log=print,
                 progress=None) -> tuple[dict, dict, dict]:
    """``bundle``'s one run on the event-counting RTL model, after the arch's characterisation
    (made first when missing): ``(result, model, energy)``. ``result`` is the run's
    :func:`sim.array_run.run_bundle` result, the functional check of ``make sim`` (the same
    host testbench: bit-exact outputs, measured == predicted cycles, GLB writes, ERROR);
    ``model`` the model it ran on; ``energy`` its energy priced by the characterisation, with
    the verdict and the seconds each step took, in the shape of
    :func:`sim.energy.array.run_energy`'s result (only the verdict when the run failed)."""
    from .charz import characterise
    tech = tech or load_tech()
    t = time.perf_counter()
    charz = characterise(arch, tech, log=log)
    charz_s = time.perf_counter() - t
    ev = run_events(bundle, arch, log=log, progress=progress)
    t = time.perf_counter()
    res = ev["result"]
    e = price_events(ev["instances"], charz, tech) if res["passed"] else {}
    e.update(method="shortcut", passed=res["passed"], failures=res["failures"],
             match=res["match"], cycles_measured=res["cycles_measured"],
             technology=tech.name, sram_scale=tech.sram_scale,
             characterisation={"key": charz["key"], "seconds": charz["seconds"],
                               "max_fit_error_pct": {k: v["max_data_error_pct"] for k, v in
                                                     charz["kinds"].items()}},
             model_seconds={"characterisation": round(charz_s, 1),
                            "events_model": ev["model_seconds"]},
             sim_seconds=ev["sim_seconds"], pricing_seconds=round(time.perf_counter() - t, 2),
             energy_seconds=round(charz_s + ev["model_seconds"] + ev["sim_seconds"]
                                  + time.perf_counter() - t, 1))
    return res, ev["model"], e


def shortcut_energy(bundle: dict, arch, tech: Tech | None = None, log=print) -> dict:
    """The energy of :func:`shortcut_run` (its run's verdict included)."""
    return shortcut_run(bundle, arch, tech, log)[2]


def coverage_charz(charz: dict) -> dict:
    """The characterisation fitted on the first method's counts (toggle coverage, recorded
    beside the counters' in every characterisation run): per block the gate-level data energy
    over its coverage toggles, the input load over the input ports' coverage toggles."""
    out = json.loads(json.dumps(charz))
    pj = tg = dens = 0.0
    for k in out["kinds"].values():
        for b in k["blocks"].values():
            n = b.get("coverage_toggles", 0)
            b["toggles"], b["pj_per_toggle"] = n, (b["pj"] / n if n else None)
            pj, tg = pj + b["pj"], tg + n
            dens += n * b["gates"] / b["bits"] if b["bits"] else 0.0
        n = k["input_toggles_coverage"]
        k["input_pj_per_toggle"] = k["input_pj"] / n if n else 0.0
    out["pooled_pj_per_toggle"] = pj / tg if tg else 0.0
    out["pj_per_toggle_per_gate_per_bit"] = pj / dens if dens else 0.0
    return out


def coverage_reference(bundle: dict, arch, tech: Tech | None = None, log=print) -> dict:
    """One run on the model that counts both ways: the energy priced from the counters by the
    characterisation (the shortcut) and from the toggle coverage by the characterisation
    fitted on coverage (the first method); the window's cycles and the SRAM accesses, exact in
    both, from the counters."""
    from .charz import characterise
    tech = tech or load_tech()
    charz = characterise(arch, tech, log=log)
    ev = run_events(bundle, arch, log=log, reference=True)
    cov = {p: dict(i, signals={s: n for s, n in i["signals"].items()
                               if not s.startswith("ubgen_")})
           for p, i in ev["coverage"].items()}
    for p, i in ev["instances"].items():      # cycles and macro accesses: the counters'
        extra = {s: n for s, n in i["signals"].items() if s.startswith("ubgen_")}
        if extra:
            cov.setdefault(p, {"module": i["module"], "signals": {}, "bits": i["bits"]})
            cov[p]["signals"].update(extra)
    return {"passed": ev["result"]["passed"], "sim_seconds": ev["sim_seconds"],
            "counters": price_events(ev["instances"], charz, tech),
            "coverage": price_events(cov, coverage_charz(charz), tech)}
