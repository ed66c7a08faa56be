"""``make sim APP=... ENERGY=1`` (``ubc sim APP --energy``): the application's energy on the
gate-level accelerator, per output pixel and per operation, by category (docs/energy.md), added
to the run's JSON record under ``energy``; and the stacked-bar plot of several records (the
analogue of thesis Figs. 7.3 and 7.10).
"""
from __future__ import annotations

import math
from pathlib import Path

from .array import CATEGORIES, run_energy
from .model import load_tech

__all__ = ["operations", "energy_record", "checked_energy_run", "plot_breakdown", "HELP"]

HELP = ("also measure the run's energy (docs/energy.md). Default (shortcut): the same bundle "
        "on the RTL with event counters in every module (each signal's toggles per clock edge "
        "in the START..DONE window), each block's toggles priced by the arch's "
        "characterisation (gate-level runs of single tiles with random stimulus). The first "
        "run on an arch (or after an RTL change) characterises it, cached: per tile module "
        "not yet characterised (archs with the same tile text share it) a Yosys mapping, two "
        "Verilator builds and 14 runs of 300 cycles, about 1-15 min per tile kind on a loaded "
        "2-core machine (cgra_4x4, three kinds and the top, about 25 min at load 10-17), and "
        "builds the event-counting RTL model (about 11 min for cgra_4x4, 14 min for cgra_8x8 "
        "at load 13-17); later runs make one RTL run, on that model instead of the plain one "
        "(it is the functional check as well). "
        "'gate': the whole cgra_top mapped to gates and simulated with its switching counted "
        "(the shortcut's reference; its first build takes about an hour for cgra_4x4 on a "
        "loaded 2-core machine)")


def operations(program) -> int:
    """Kernel operations the application performs: every op instance (the product of its
    loops' extents) times the PE operations of its kernel (lookups count one each)."""
    from compiler.ir.expr import Call, Lookup
    total = 0
    for op in program.ops():
        if op.kernel is None:
            continue
        n = sum(isinstance(e, (Call, Lookup)) for e in op.kernel.nodes())
        total += n * math.prod(lp.extent for lp in op.loops)
    return total


def energy_record(bundle: dict, arch, program, sram_scale: float = 1.0, log=print,
                  method: str = "shortcut") -> dict:
    """The ``energy`` field of a ``make sim`` record: the energy run's verdict and energy
    (``method``: ``"shortcut"``, :func:`sim.energy.shortcut.shortcut_energy`, or ``"gate"``,
    :func:`sim.energy.array.run_energy`), per output pixel (the words the host reads back) and
    per operation."""
    from .shortcut import shortcut_energy
    tech = load_tech().scaled(sram_scale)
    if method == "gate":
        e = dict(run_energy(bundle, arch, tech, log=log), method="gate")
    else:
        e = shortcut_energy(bundle, arch, tech, log=log)
    return _per_unit(e, bundle, program)


def checked_energy_run(bundle: dict, arch, program, sram_scale: float = 1.0, log=print,
                       progress=None) -> tuple[dict, dict, dict]:
    """``make sim ... ENERGY=1`` in one run (:func:`sim.energy.shortcut.shortcut_run`): the
    bundle on the event-counting RTL model, whose host testbench is ``make sim``'s functional
    check; returns ``(result, model, energy)``: the run's :func:`sim.array_run.run_bundle`
    result, the model it ran on, and the ``energy`` field (as :func:`energy_record`'s; the
    verdict alone when the run failed)."""
    from .shortcut import shortcut_run
    res, model, e = shortcut_run(bundle, arch, load_tech().scaled(sram_scale), log=log,
                                 progress=progress)
    return res, model, _per_unit(e, bundle, program)


def _per_unit(e: dict, bundle: dict, program) -> dict:
    """``e`` with its energy per output pixel and per operation (when it has one)."""
    pixels = len(bundle["glb_outputs"])
    ops = operations(program)
    e.update(output_pixels=pixels, operations=ops)
    if "total_pj" in e:
        e.update(pj_per_pixel=round(e["total_pj"] / pixels, 3) if pixels else None,
                 pj_per_op=round(e["total_pj"] / ops, 4) if ops else None,
                 pj_per_pixel_by_category={c: round(v / pixels, 4) for c, v in
                                           e["categories_pj"].items()} if pixels else {})
    return e


def plot_breakdown(records: list[dict], path: Path, per: str = "pixel") -> Path:
    """Stacked bars of energy per output pixel (``per="pixel"``) or per operation, one bar per
    record (app on arch), one segment per category."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(records) + 2), 3.6))
    labels = [f"{r['app']}" + "".join(f" {k}={v}" for k, v in (r.get("sizes") or {}).items())
              + f"\n{r['arch']}" for r in records]
    bottom = [0.0] * len(records)
    for cat in CATEGORIES:
        vals = []
        for r in records:
            e = r["energy"]
            div = e["output_pixels"] if per == "pixel" else e["operations"]
            vals.append(e["categories_pj"].get(cat, 0.0) / div if div else 0.0)
        ax.bar(labels, vals, bottom=bottom, label=cat)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_ylabel(f"pJ per {'output pixel' if per == 'pixel' else 'operation'}")
    tech = records[0]["energy"]["technology"] if records else ""
    methods = {r["energy"].get("method", "gate") for r in records}
    how = "gate-level switching" if methods == {"gate"} else "switching, shortcut"
    ax.set_title(f"Energy per {'output pixel' if per == 'pixel' else 'operation'} "
                 f"({how}, {tech})", fontsize=9)
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
