"""Energy per access of the memory designs of thesis Table 7.2 (docs/energy.md "Table 7.2"):
each generated buffer mapped to gates (:mod:`sim.energy.gates`), simulated in Verilator through
its cocotb testbench with the 3x3 convolution's line buffer (docs/design.md §4: a 64x64 image in,
two rows delayed by 64 and 128 cycles out; ``sim.tb.pub_cases.ENERGY_PUB_CASES`` /
``ENERGY_DP_CASES``), switching counted while ``run`` is high, priced by
``ubgen/constraints/energy.toml`` (:mod:`sim.energy.model`).

The PUB serves the whole line buffer (one write port, two read ports); the DP-SRAM + AG design
needs one dual-port buffer per delayed output (thesis Table 7.3), so its figures are the sum of
two runs (delay 64 and delay 128). Energy per access = the buffers' energy / the words their
ports moved (words written + words read); the SRAM share is the macro's part of that energy.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

from ubgen.paths import build_dir

from .gates import EnergyError, emit_verilog, parse_counts, synthesize
from .model import Tech, energy, load_tech

__all__ = ["DESIGNS", "block_counts", "design_energy", "block_category"]

BUILD = build_dir("energy")

# Table 7.2 rows built here: design -> (block, cocotb module, cases, label)
DESIGNS = {
    "pub": ("pub", "sim.tb.test_pub", ("gaussian",), "4 Wide SP SRAM +AGG +TB +AGs (PUB)"),
    "dp": ("dpbuf", "sim.tb.test_dpbuf", ("dp_line64", "dp_line128"), "DP SRAM + AG"),
}

_CONTROLLERS = ("in2agg", "agg2sram", "sram2tb", "tb2out", "wr", "rd", "counter")


def block_category(path: str, module: str, part: str) -> str:
    """Table 7.2 breakdown of a buffer: SRAM macro, clock, controllers (iteration domains,
    address and schedule generators, the cycle counter), AGG, TB, configuration registers, and
    the rest (SRAM port logic, chaining, top-level glue)."""
    if part in ("sram", "clock"):
        return {"sram": "SRAM", "clock": "clock"}[part]
    leaf = module.split(".")
    sub = leaf[1] if len(leaf) > 1 else ""
    if sub.startswith(_CONTROLLERS):
        return "controllers"
    if sub.startswith("agg"):
        return "aggregators"
    if sub.startswith("tb"):
        return "transpose buffers"
    if sub.startswith("config"):
        return "config registers"
    return "SRAM port + glue"


@dataclass
class _Model:
    files: list[Path]
    infos: dict
    name: str
    seconds: float


def _model(block: str, arch: str, log) -> _Model:
    from ubgen.arch import load_arch
    from ubgen.blocks import block_verilog
    text = block_verilog(load_arch(arch), block)
    sha = hashlib.sha256(text.encode()).hexdigest()[:16]
    work = BUILD / f"{block}-{arch}-{sha}"
    src = work / f"{block}.v"
    work.mkdir(parents=True, exist_ok=True)
    if not src.exists():
        src.write_text(text)
    t = time.perf_counter()
    log(f"gates: {block} ({arch}) -> Yosys CMOS mapping (cached in {work.name})")
    netlist = synthesize([src], block, work / "synth")
    files, infos = emit_verilog(netlist, block, work / "gl", window="run")
    return _Model(files, infos, f"energy/{block}-{arch}-{sha}", time.perf_counter() - t)


def block_counts(design: str, case: str, arch: str = "pub", log=print) -> dict:
    """One gate-level run of a Table 7.2 design on one energy case: its switching counts, the
    module infos and the words its ports moved."""
    from sim.runner import BUILD as SIM_BUILD, run_cocotb
    from sim.tb.pub_cases import ENERGY_DP_CASES, ENERGY_PUB_CASES
    block, module, _, _ = DESIGNS[design]
    cases = ENERGY_PUB_CASES if block == "pub" else ENERGY_DP_CASES
    if case not in cases:
        raise EnergyError(f"no energy case {case!r} for {design} (has {', '.join(cases)})")
    m = _model(block, arch, log)
    t = time.perf_counter()
    log(f"simulate: {design} gate level, case {case} (Verilator; the first build takes minutes)")
    test = f"energy_{case}"
    run_cocotb(name=m.name, sources=m.files, toplevel=block, test_module=module,
               testcase=[test], extra_env={"UBGEN_ARCH": arch}, build_args=["-CFLAGS", "-O0"])
    counts = parse_counts((SIM_BUILD / m.name / f"test_{test}.log").read_text())
    if not counts["modules"]:
        raise EnergyError(f"{design}: the simulation printed no energy counts")
    c = cases[case]
    accesses = (sum(len(s) for s in c.inputs.values())
                + sum(len(s) for s in c.expected.values()))
    return {"design": design, "case": case, "counts": counts, "infos": m.infos,
            "accesses": accesses, "ffs": sum(i.ffs for i in m.infos.values()),
            "gates": sum(i.gates for i in m.infos.values()),
            "sim_seconds": round(time.perf_counter() - t, 1)}


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
    runs = [block_counts(design, case + ("_zero" if zero else ""), log=log)
            for case in DESIGNS[design][2]]
    by_scale = {str(float(s)): _price(runs, tech.scaled(s)) for s in scales}
    one = by_scale.get("1.0") or next(iter(by_scale.values()))
    return {"design": design, "label": DESIGNS[design][3], "zero_image": zero,
            "cases": [r["case"] for r in runs], "ffs": runs[0]["ffs"],
            "gates": runs[0]["gates"], "sim_seconds": sum(r["sim_seconds"] for r in runs),
            **one, "by_scale": by_scale}
