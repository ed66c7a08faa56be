"""Energy per access of the memory designs of thesis Table 7.2 (docs/energy.md "Table 7.2"):
each buffer mapped to gates (:mod:`sim.energy.gates`), simulated in Verilator through its cocotb
testbench with the 3x3 convolution's line buffer (docs/design.md §4: a 64x64 image in, two rows
delayed by 64 and 128 cycles out), switching counted while ``run`` is high, priced by
``ubgen/constraints/energy.toml`` (:mod:`sim.energy.model`).

Every design runs the line buffer as the compiler maps gaussian 64x64 onto it
(:mod:`sim.energy.workload`), with the same image, the same writes and reads at the same cycles:

* ``pub``: one PUB serves the whole line buffer (one write port, two read ports);
* ``dp``, ``dppe``, ``buffet``: the dual-port mapping gives one memory block per delayed row
  (thesis Table 7.3): ``dp`` runs each
  block's configuration on the DP-SRAM + AG (one run per block, summed); ``dppe`` the plain
  dual-port SRAM cores with the controllers the compiler builds from PEs for ``dp-pe``
  (:class:`sim.energy.harness.DPPELineBuffer`, both memories in one run; the PEs'
  interconnect is not counted); ``buffet`` the buffets with the blocks' fills and reads
  (:class:`sim.energy.harness.WindowedBuffet`; no address generation, as a buffet has none --
  its read requests' index and shrink come from outside).

Energy per access = the design's energy / the words its ports moved (words written + words
read); the SRAM share is the macros' part of that energy.
"""
from __future__ import annotations

import hashlib
import json
import pickle
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ubgen.paths import build_dir

from .gates import EnergyError, emit_verilog, parse_counts, synthesize
from .workload import PE_MODULE
from .model import Tech, energy, load_tech

__all__ = ["DESIGNS", "Design", "block_counts", "design_energy", "block_category",
           "design_cases", "simulate", "stimulus"]

BUILD = build_dir("energy")


@dataclass(frozen=True)
class Design:
    """One row of Table 7.2: the model's name (its top module), its cocotb module and label."""
    block: str
    module: str
    label: str


# Table 7.2 rows built here, in the thesis's order (bottom up)
DESIGNS = {
    "pub": Design("pub", "sim.tb.test_pub", "4 Wide SP SRAM +AGG +TB +AGs (PUB)"),
    "dp": Design("dpbuf", "sim.tb.test_dpbuf", "DP SRAM + AG"),
    "dppe": Design("dppe", "sim.tb.test_dppe", "DP SRAM + PEs"),
    "buffet": Design("buffet_energy", "sim.tb.test_buffet", "Buffet"),
}

_CONTROLLERS = ("in2agg", "agg2sram", "sram2tb", "tb2out", "wr", "rd", "counter")


def block_category(path: str, module: str, part: str) -> str:
    """Table 7.2 breakdown of a buffer: SRAM macro, clock, controllers (iteration domains,
    address and schedule generators, the cycle counter; the PEs of DP-SRAM + PEs), AGG, TB,
    configuration registers, the buffet's control (head, occupancy, checks, response FIFO),
    and the rest (SRAM port logic, chaining, top-level glue)."""
    if part in ("sram", "clock"):
        return {"sram": "SRAM", "clock": "clock"}[part]
    leaf = module.split(".")
    sub = leaf[1] if len(leaf) > 1 else ""
    if sub.startswith(_CONTROLLERS) or leaf[0] == PE_MODULE:
        return "controllers"
    if sub.startswith("agg"):
        return "aggregators"
    if sub.startswith("tb"):
        return "transpose buffers"
    if sub.startswith("config"):
        return "config registers"
    if sub.startswith("buffet"):
        return "buffet control"
    return "SRAM port + glue"


def design_cases(design: str, zero: bool = False) -> list[str]:
    """The runs of a design (their figures are summed): one per dual-port block for ``dp``,
    one run of the whole line buffer for the others."""
    if design == "dp":
        from .workload import line_buffer_blocks
        return [b.name + ("_zero" if zero else "") for b in line_buffer_blocks()]
    if design in DESIGNS:
        return ["line" + ("_zero" if zero else "")]
    raise EnergyError(f"no Table 7.2 design {design!r} (has {', '.join(DESIGNS)})")


@dataclass
class _Model:
    files: list[Path]
    infos: dict
    name: str
    seconds: float
    hier: tuple[str, ...] = ()          # modules Verilator builds as hierarchical blocks


def _verilog(design: str, arch: str) -> str:
    """The Verilog of a design's block, its top module named ``DESIGNS[design].block``."""
    from amaranth.back import verilog
    from ubgen.arch import load_arch
    from ubgen.blocks import block_verilog
    a, top = load_arch(arch), DESIGNS[design].block
    if design in ("pub", "dp"):
        return block_verilog(a, top)
    if design == "dppe":
        from .harness import DPPELineBuffer, pe_verilog
        from .workload import dppe_controllers
        return pe_verilog() + "\n" + verilog.convert(DPPELineBuffer(a, dppe_controllers()),
                                                     name=top, emit_src=False)
    from ubgen.buffet.spec import BuffetParams
    from .harness import WindowedBuffet
    return verilog.convert(WindowedBuffet(BuffetParams.from_dpbuf(a.dpbuf)), name=top,
                           emit_src=False)


def _model(design: str, arch: str, log) -> _Model:
    block = DESIGNS[design].block
    text = _verilog(design, arch)
    sha = hashlib.sha256(text.encode()).hexdigest()[:16]
    work = BUILD / f"{block}-{arch}-{sha}"
    src = work / f"{block}.v"
    work.mkdir(parents=True, exist_ok=True)
    if not src.exists():
        src.write_text(text)
    t = time.perf_counter()
    log(f"gates: {block} ({arch}) -> Yosys CMOS mapping (cached in {work.name})")
    netlist = synthesize([src], block, work / "synth")
    # the controller PEs share one PE module: Verilated once as a hierarchical block (flat,
    # the 24 inlined PEs had not left Verilator's front end after 15 min on a loaded machine)
    hier = (PE_MODULE,) if design == "dppe" else ()
    files, infos = emit_verilog(netlist, block, work / "gl", window="run", keep=set(hier),
                                files={m: f"{m}.v" for m in hier})
    return _Model(files, infos, f"energy/{block}-{arch}-{sha}" + ("-hier" if hier else ""),
                  time.perf_counter() - t, hier)


def stimulus(design: str, case: str, work: Path) -> tuple[str, dict, int]:
    """``(cocotb test, environment, words the ports move)`` of one run of ``design``."""
    from .workload import buffet_jobs, dp_case, dppe_case, line_buffer_blocks, pub_case
    zero = case.endswith("_zero")
    work.mkdir(parents=True, exist_ok=True)
    if design == "buffet":
        jobs = buffet_jobs(zero)
        path = work / f"{case}.jobs.json"
        path.write_text(json.dumps([asdict(j) for j in jobs]))
        env = {"UBGEN_BUFFET_JOBS": str(path),
               "UBGEN_BUFFET_RESULTS": str(work / f"{case}.results.json")}
        return "buffet_jobs", env, sum(len(j.fills) + len(j.expected) for j in jobs)
    if design == "dppe":
        writes, c = dppe_case(zero)
        # the input stream is written into every memory
        payload = (writes, c)
        words = len(c.expected) * len(c.inputs[0]) + sum(len(s) for s in c.expected.values())
    elif design == "pub":
        payload = c = pub_case(zero)
        words = _words(c)
    else:
        blocks = {b.name: b for b in line_buffer_blocks()}
        name = case.removesuffix("_zero")
        if name not in blocks:
            raise EnergyError(f"no energy case {case!r} for dp (has {', '.join(blocks)})")
        c = dp_case(blocks[name], zero)
        payload, words = c, _words(c)
    path = work / f"{case}.case.pickle"
    path.write_bytes(pickle.dumps(payload))
    return "energy_file", {"UBGEN_ENERGY_CASE": str(path)}, words


def _words(case) -> int:
    """Words a case's ports move: every input word and every expected output word."""
    return (sum(len(s) for s in case.inputs.values())
            + sum(len(s) for s in case.expected.values()))


def simulate(design: str, test: str, env: dict, arch: str = "pub", log=print) -> dict:
    """Run cocotb ``test`` (with the environment ``env``: its stimulus) on the design's
    gate-level model (built when missing); the run's parsed counts, the module infos and the
    seconds. The testbench's check of the outputs failing raises (the cocotb runner's
    ``AssertionError`` or ``SystemExit``)."""
    from sim.runner import BUILD as SIM_BUILD, run_cocotb
    m = _model(design, arch, log)
    t = time.perf_counter()
    log(f"simulate: {design} gate level, {test} (Verilator; the first build takes minutes)")
    run_cocotb(name=m.name, sources=m.files, toplevel=DESIGNS[design].block,
               test_module=DESIGNS[design].module, testcase=[test],
               extra_env={"UBGEN_ARCH": arch, **env}, build_args=["-CFLAGS", "-O0"],
               hier_blocks=list(m.hier) or None)
    counts = parse_counts((SIM_BUILD / m.name / f"test_{test}.log").read_text())
    if not counts["modules"]:
        raise EnergyError(f"{design}: the simulation printed no energy counts")
    return {"counts": counts, "infos": m.infos, "sim_seconds": round(time.perf_counter() - t, 1)}


def block_counts(design: str, case: str, arch: str = "pub", log=print) -> dict:
    """One gate-level run of a Table 7.2 design on one energy case: its switching counts, the
    module infos and the words its ports moved."""
    if design not in DESIGNS:
        raise EnergyError(f"no Table 7.2 design {design!r} (has {', '.join(DESIGNS)})")
    cases = design_cases(design) + design_cases(design, zero=True)
    if case not in cases:
        raise EnergyError(f"no energy case {case!r} for {design} (has {', '.join(cases)})")
    test, env, accesses = stimulus(design, case, BUILD / "stimuli" / design)
    run = simulate(design, test, env, arch, log)
    infos, insts = run["infos"], run["counts"]["modules"].values()
    # per module instance (a PE module serves every controller PE of DP-SRAM + PEs)
    return {"design": design, "case": case, "counts": run["counts"], "infos": infos,
            "accesses": accesses, "ffs": sum(infos[c["module"]].ffs for c in insts),
            "gates": sum(infos[c["module"]].gates for c in insts),
            "sim_seconds": run["sim_seconds"]}


def _price(runs: list[dict], tech: Tech) -> dict:
    cats: dict[str, float] = {}
    for r in runs:
        b = energy(r["counts"], r["infos"], tech, block_category)
        for k, v in b.categories.items():
            cats[k] = cats.get(k, 0.0) + v
    total = sum(cats.values())
    accesses = sum(r["accesses"] for r in runs)
    logic = total - cats.get("SRAM", 0.0) - cats.get("clock", 0.0)
    return {"categories_pj": {k: round(v, 2) for k, v in sorted(cats.items())},
            "total_pj": round(total, 2), "accesses": accesses,
            "pj_per_access": round(total / accesses, 4),
            "dynamic_logic_pj": round(logic, 2),
            "sram_pct": round(100 * cats.get("SRAM", 0.0) / total, 1) if total else 0.0}


def design_energy(design: str, tech: Tech | None = None, zero: bool = False, log=print,
                  scales=(1.0,)) -> dict:
    """A design's Table 7.2 figures: its runs summed, pJ per port access and SRAM share at
    each SRAM-energy scale of ``scales`` (the same simulations re-priced); ``zero``: on the
    all-zero image (the control)."""
    tech = tech or load_tech()
    runs = [block_counts(design, case, log=log) for case in design_cases(design, zero)]
    by_scale = {str(float(s)): _price(runs, tech.scaled(s)) for s in scales}
    one = by_scale.get("1.0") or next(iter(by_scale.values()))
    return {"design": design, "label": DESIGNS[design].label, "zero_image": zero,
            "cases": [r["case"] for r in runs], "ffs": runs[0]["ffs"],
            "gates": runs[0]["gates"], "sim_seconds": sum(r["sim_seconds"] for r in runs),
            "srams": {r["case"]: r["counts"]["srams"] for r in runs},
            **one, "by_scale": by_scale}
