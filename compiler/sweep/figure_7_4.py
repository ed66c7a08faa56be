"""Thesis Figure 7.4 (§7.2.2): the area an application takes on each memory implementation,
stacked as MEM addressing and control, SRAM macros, and the PEs of the computation.

Per app (the Table 7.5 points of :mod:`.evaluate`) and implementation, from figures measured
elsewhere, nothing fitted here:

* memories: the implementation's own mapping (``backend dp|dp-pe <label>`` points, the PUB's
  netlist MEM tiles of ``table <label>``; register-file tiles are MEM tiles too);
* the area of one memory: ``bench/area.py`` (Yosys generic synthesis of the generated block,
  transistors x the assumed um2 per transistor, the SRAM macro modelled; thesis Table 7.2's
  method): ``pub`` and ``dp`` (DP-SRAM + AG) blocks; for DP-SRAM + PEs the plain dual-port core
  (``dpram``) plus the app's controller PEs (``controller_pes`` of its ``dp-pe`` mapping, the
  PE core with the STEP op: the thesis's implementation (2), PEs optimised for address
  generation);
* the computation: the PUB netlist's PEs (the same on every implementation) x the PE core.

The thesis's implementation (1), PEs without an address-generation op, is not built here (the
STEP op is; docs/pe.md), so it has no bar. Interconnect is not counted, as in Table 7.2.
"""
from __future__ import annotations

import os
from pathlib import Path

IMPLS = ("DP + PEs (STEP)", "DP + AG", "PUB")
PARTS = ("MEM control", "SRAM macros", "compute PEs")
TEXT = ("Per app (the Table 7.5 points) and memory implementation: memories from the "
        "implementation's own mapping (`ubc map --backend dp|dp-pe`; the PUB: the netlist's MEM "
        "tiles, register-file tiles included), the area of one memory from `bench/area.py` "
        "(Table 7.2's method: Yosys generic synthesis, an assumed um2 per transistor, SRAM "
        "macros modelled): the PUB block, the DP-SRAM + AG block, and for DP + PEs the plain "
        "dual-port core plus the app's controller PEs (its `dp-pe` mapping; PE core with the "
        "STEP op: the thesis's implementation (2)); compute PEs: the PUB netlist's, the same on "
        "every implementation, times the PE core. The thesis's implementation (1), PEs without "
        "an address-generation op, is not built (no bar). Interconnect is not counted "
        "(`compiler/sweep/figure_7_4.py`).")


def app_areas(table: dict, dp: dict, dp_pe: dict, blocks: dict) -> dict[str, dict | str]:
    """Area (um2) of one app on each implementation: ``{impl: {part: um2}}``, or a one-line
    reason instead of the dict when the implementation has no mapping of the app.
    ``table``/``dp``/``dp_pe``: the app's ``table``, ``backend dp`` and ``backend dp-pe``
    points; ``blocks``: ``bench/area.py``'s ``blocks``."""
    pe = blocks["pe"]["logic_um2"]
    compute = (table.get("pes") or 0) * pe
    out: dict[str, dict | str] = {}
    for impl, point, block in ((IMPLS[0], dp_pe, "dpram"), (IMPLS[1], dp, "dp"),
                               (IMPLS[2], table, "pub")):
        mems = point.get("mems")
        if point.get("error") or mems is None:
            out[impl] = f"no mapping: {point.get('error') or 'not run'}"
            continue
        ctl = mems * blocks[block]["logic_um2"]
        if impl == IMPLS[0]:
            ctl += (point.get("controller_pes") or 0) * pe
        out[impl] = {PARTS[0]: ctl, PARTS[1]: mems * blocks[block]["sram_um2"],
                     PARTS[2]: compute}
    return out


def _stacked(areas: dict[str, dict], path: Path) -> None:
    """Stacked bars: one group per app, one bar per implementation, parts stacked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    apps = list(areas)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.3 * len(apps) + 2), 3.6))
    width = 0.8 / len(IMPLS)
    colors = {PARTS[0]: "tab:orange", PARTS[1]: "tab:gray", PARTS[2]: "tab:blue"}
    for k, impl in enumerate(IMPLS):
        xs = [i + (k - (len(IMPLS) - 1) / 2) * width for i in range(len(apps))]
        bottom = [0.0] * len(apps)
        for part in PARTS:
            vals = [areas[a][impl][part] / 1e6 if isinstance(areas[a][impl], dict) else 0.0
                    for a in apps]
            ax.bar(xs, vals, width, bottom=bottom, color=colors[part], edgecolor="black",
                   linewidth=0.3, label=part if k == 0 else None)
            bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(len(apps)), apps, fontsize=8)
    ax.set_ylabel("area (mm2)")
    ax.set_title("Fig. 7.4: bars per app: " + ", ".join(IMPLS), fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _total(a) -> float | None:
    return sum(a.values()) if isinstance(a, dict) else None


def figure_7_4(res: dict, area: dict, labels: list[str], img: Path, doc_dir: Path) -> list[str]:
    """The section of docs/evaluation.md: the plot and its table (``labels``: the points'
    labels, e.g. the Table 7.5 apps)."""
    lines = ["## Thesis Figure 7.4: area per application and memory implementation", ""]
    if "error" in area or "blocks" not in area:
        return lines + [f"Not measured: bench/area.py failed: {area.get('error')}.", ""]
    lines += [TEXT, ""]
    areas, rows = {}, []
    for label in labels:
        a = app_areas(res.get(f"table {label}", {}), res.get(f"backend dp {label}", {}),
                      res.get(f"backend dp-pe {label}", {}), area["blocks"])
        areas[label] = a
        tot = {impl: _total(a[impl]) for impl in IMPLS}
        cells = [f"{tot[i] / 1e3:.0f}k" if tot[i] is not None else a[i] for i in IMPLS]
        pub, dpe = tot[IMPLS[2]], tot[IMPLS[0]]
        rows.append([label] + cells + [f"{dpe / pub:.1f}x" if pub and dpe else "—"])
    path = img / "fig7_4_area.png"
    _stacked(areas, path)
    lines += [f"![Fig. 7.4]({os.path.relpath(path, doc_dir)})", "",
              "Thesis: the PUB needs on average 2.2x less area than DP + optimised PEs (SRAM "
              "macro area 3.3x less, memory control 4.5x less, compute PEs the same).", "",
              "| app | " + " | ".join(f"{i} um2" for i in IMPLS) + " | DP + PEs / PUB |",
              "|" + "---|" * (len(IMPLS) + 2)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    ratios = [[_part_ratio(areas[lab], part) for lab in labels] for part in (None,) + PARTS[:2]]
    means = [sum(v) / len(v) if v else None for v in ([x for x in r if x] for r in ratios)]
    tot, ctl, sram = (_x(m) for m in means)
    lines += ["", f"Ours, DP + PEs / PUB averaged over the apps with both: total {tot}, SRAM "
              f"macros {sram}, MEM control {ctl}.", ""]
    return lines


def _x(m: float | None) -> str:
    return f"{m:.1f}x" if m else "—"


def _part_ratio(a: dict, part: str | None) -> float | None:
    """DP + PEs over PUB for one part (``None``: the total) of one app."""
    d, p = a[IMPLS[0]], a[IMPLS[2]]
    if not isinstance(d, dict) or not isinstance(p, dict):
        return None
    num, den = (_total(d), _total(p)) if part is None else (d[part], p[part])
    return num / den if den else None
