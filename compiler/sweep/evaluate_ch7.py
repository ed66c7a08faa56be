"""The thesis §7.3 part of ``make evaluate`` (:mod:`.evaluate`): compute sharing (Tables 7.6 and
7.7, Figures 7.6 and 7.7) and the ResNet-18 layer ablation (Figures 7.8 and 7.9). Table 7.5 (the
PEs for address generation) is :mod:`.evaluate`'s, from the DP-SRAM + PEs backend's own builds.

* Sharing: gpyr and srcnn at their Table 7.1 sizes with and without ``share`` on
  ``DEFAULT_ARCH``, through the netlist (PEs, MEMs, the MEM tiles added as schedule generators
  counted apart: thesis Table 7.7's bank-selection controllers) and the occupancy stage (PE
  temporal occupancy and latency of the optimized schedule, ``compiler.schedule.occupancy``).
* Ablation: the eight ResNet-18 conv layers (``apps.resnet.resnet18_layer``: 2 x 2 blocks of 8
  input x 8 output channels each) under the schedules of Fig. 7.8 -- sequential (policy
  ``hls``), + double buffering (``dnn-db``), + loop perfection and flattening (``dnn``: the
  PUB), a quad-port single-fetch memory (``fetch_width=1``) -- and Fig. 7.9's dual-port memory
  (one read and one write port, single fetch: ``ports=1 fetch_width=1``). Occupancy is measured
  from the schedule; the controllers' cycle counter is widened (``cycle_width=32``) since these
  are schedule studies, not array runs.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..figures import THESIS_7_6, THESIS_7_7, THESIS_FIG_TEXT
from ..pipeline import DEFAULT_ARCH
from . import share_rtl
from .engine import Task

SHARE_APPS = ("gpyr", "srcnn")
SHARE_STAGES = ("schedule", "map", "netlist", "occupancy")
# Fig. 7.8 / 7.9 bars: label -> (policy, extra options)
ABLATION = {
    "sequential": ("hls", {}),
    "+ DB": ("dnn-db", {}),
    "+ LO (PUB)": ("dnn", {}),
    "quad-port SF": ("dnn", {"fetch_width": 1}),
    "dual-port": ("dnn", {"ports": 1, "fetch_width": 1}),
}
FIG_7_8 = ("sequential", "+ DB", "+ LO (PUB)", "quad-port SF")
FIG_7_9 = ("dual-port", "+ LO (PUB)")
NOT_RUN = {"status": "not run", "error": "the point has not been run"}


def plan_ch7(share_sizes: dict[str, dict] | None = None,
             layer_sizes: dict[str, dict] | None = None) -> dict[str, Task]:
    """The points of this part, named like :func:`.evaluate.plan`'s. ``share_sizes`` (app ->
    sizes; default the Table 7.1 sizes) and ``layer_sizes`` (layer -> resnet sizes; default
    every layer of :func:`apps.resnet.resnet18_layer`) shrink it for tests."""
    from apps.resnet import RESNET18_LAYERS, resnet18_layer
    share_sizes = share_sizes or {app: {} for app in SHARE_APPS}
    layer_sizes = layer_sizes or {lay: resnet18_layer(lay) for lay in RESNET18_LAYERS}
    tasks = {}
    for app, sizes in share_sizes.items():
        for share in (0, 1):
            tasks[f"share {app} {share}"] = Task(app, dict(sizes, share=share,
                                                           arch=DEFAULT_ARCH), SHARE_STAGES)
    for layer, sizes in layer_sizes.items():
        for label, (policy, extra) in ABLATION.items():
            params = dict(sizes, policy=policy, arch=DEFAULT_ARCH, cycle_width=32, **extra)
            tasks[f"ablation {layer} {label}"] = Task("resnet", params, ("occupancy",))
    return tasks


def _fmt(v) -> str:
    if v is None:
        return "—"
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def _table(head: list[str], rows: list[list]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return out + ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in rows] + [""]


def _err(r: dict) -> str:
    if r.get("error"):
        return f"{r.get('status')}: {r['error']}"
    if r.get("fits") is False:
        return "does not fit: out of " + ", ".join(r.get("out_of") or [])
    return ""


def _sides(unshared: dict, shared: dict) -> str:
    return "; ".join(f"{side}: {_err(r)}" for side, r in (("no sharing", unshared),
                                                          ("sharing", shared)) if _err(r))


def _mems_apart(r: dict) -> tuple:
    """(MEM tiles other than schedule generators, schedule-generator tiles)."""
    mems, gen = r.get("mems"), r.get("generator_tiles") or 0
    return (None, None) if mems is None else (mems - gen, gen)


def tables_7_6_7_7(res: dict) -> list[str]:
    rows6, rows7 = [], []
    for app in SHARE_APPS:
        if f"share {app} 0" not in res:
            continue
        a, b = res[f"share {app} 0"], res[f"share {app} 1"]
        pe0, pe1 = THESIS_7_6[app]
        m_base, m_share, m_sel = THESIS_7_7[app]
        note = _sides(a, b)
        rows6.append([app, a.get("pes"), b.get("pes"), pe0, pe1, note])
        mem1, gen1 = _mems_apart(b)
        held = "; ".join(f"{side}: " + (", ".join(f"{k} {v}" for k, v in
                                                  r["mem_tiles_by_buffer"].items()) or "none")
                         for side, r in (("no sharing", a), ("sharing", b))
                         if "mem_tiles_by_buffer" in r)
        rows7.append([app, a.get("mems"), mem1, gen1, b.get("schedule_generators"),
                      b.get("context_rf_tiles"), m_base, f"{m_share} + ({m_sel})",
                      "; ".join(x for x in (note, f"MEM tiles per buffer: {held}" if held
                                            else "") if x)])
    return (["## Thesis Table 7.6: PEs with and without compute sharing", "",
             f"arch `{DEFAULT_ARCH}`, Table 7.1 sizes; `share=1` maps the ops of one compute "
             "unit (`Op.unit`) to one set of PEs with input contexts (docs/pe.md). The netlist "
             "model checks both shared apps bit for bit at the predicted cycles; both also "
             "run end to end in Verilator (the table after this one; `tests/rtl/test_e2e.py` "
             "for gpyr, `make regress` for srcnn on cgra_16x32; docs/backend.md \"Compute "
             "sharing\").", ""]
            + _table(["app", "PEs no sharing (ours)", "PEs sharing (ours)",
                      "PEs no sharing (thesis)", "PEs sharing (thesis)", "comment"], rows6)
            + share_rtl.table(share_rtl.collect(SHARE_APPS))
            + ["## Thesis Table 7.7: memories with and without compute sharing", "",
               "Ours: MEM tiles without sharing; with sharing, the MEM tiles holding data and "
               "(apart) the MEM tiles added only to host schedule generators (our context "
               "switches; the thesis' bank-selection controllers, in parentheses there). "
               "'generators' counts the distinct schedule generators (`tb2out` controllers; ops "
               "issued at the same cycles share one), in tiles that also hold data unless "
               "counted as generator tiles; 'context RF tiles' hold the register-"
               "file banks of several ops' operands behind two port contexts.", ""]
            + _table(["app", "MEMs no sharing (ours)", "MEMs sharing (ours)",
                      "+ generator tiles (ours)", "generators (ours)", "context RF tiles (ours)",
                      "MEMs no sharing (thesis)", "MEMs sharing (thesis)", "comment"], rows7))


def _bars(groups: list[str], series: dict[str, list], ylabel: str, title: str,
          path: Path) -> None:
    """A grouped bar chart: one group per x label, one bar per series."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(groups) + 2), 3.2))
    width = 0.8 / max(1, len(series))
    for k, (name, vals) in enumerate(series.items()):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(groups))]
        ax.bar(xs, [v if v is not None else 0 for v in vals], width, label=name)
    ax.set_xticks(range(len(groups)), groups, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def figures_7_6_7_7(res: dict, img: Path, doc_dir: Path) -> list[str]:
    lines = ["## Thesis Figures 7.6 and 7.7: PE temporal occupancy and latency with sharing", "",
             "Occupancy = PE-cycles issuing an instance / (compute PEs x cycles) of the "
             "optimized schedule (`compiler.schedule.occupancy`; a shared unit's PEs counted "
             "once). Latency = the schedule's completion cycles.", ""]
    rows = []
    for fig, app in (("7.6", "gpyr"), ("7.7", "srcnn")):
        if f"share {app} 0" not in res:
            continue
        a, b = res[f"share {app} 0"], res[f"share {app} 1"]
        path = img / f"fig{fig.replace('.', '_')}_{app}.png"
        _bars(["occupancy", "latency / no-sharing latency"],
              {"no sharing": [a.get("occupancy"), 1.0 if a.get("cycles") else None],
               "sharing": [b.get("occupancy"), b["cycles"] / a["cycles"]
                           if a.get("cycles") and b.get("cycles") else None]},
              "", f"{app} (Fig. {fig})", path)
        gain = (f"{b['occupancy'] / a['occupancy']:.2f}x" if a.get("occupancy")
                and b.get("occupancy") else "—")
        lat = (f"{(b['cycles'] - a['cycles']) / a['cycles'] * 100:+.0f}%" if a.get("cycles")
               and b.get("cycles") else "—")
        rows.append([f"Fig. {fig} {app}", a.get("occupancy"), b.get("occupancy"), gain,
                     a.get("cycles"), b.get("cycles"), lat, THESIS_FIG_TEXT[fig],
                     _sides(a, b)])
        lines += [f"![{app}]({os.path.relpath(path, doc_dir)})", ""]
    return lines + _table(["figure", "occupancy no sharing", "occupancy sharing", "gain",
                           "cycles no sharing", "cycles sharing", "latency", "thesis",
                           "comment"], rows)


def figures_7_8_7_9(res: dict, img: Path, doc_dir: Path) -> list[str]:
    from apps.resnet import RESNET18_LAYERS
    layers = [lay for lay in RESNET18_LAYERS if f"ablation {lay} sequential" in res]
    point = {(lay, lab): res.get(f"ablation {lay} {lab}", NOT_RUN) for lay in layers
             for lab in ABLATION}
    occ = {lab: [point[lay, lab].get("occupancy") for lay in layers] for lab in ABLATION}
    lines = ["## Thesis Figures 7.8 and 7.9: compute occupancy of the ResNet-18 conv layers", "",
             "Each layer (He et al., CVPR 2016, Table 1) at its image size, kernel and stride "
             "with 2 x 2 blocks of 8 input x 8 output channels (conv1: 1 input block, its 3 "
             "channels zero-padded to 8) -- the full layers repeat the same tile and the "
             "controllers' counters would overflow. Occupancy from the schedule "
             "(`compiler.schedule.occupancy`). Fig. 7.8: sequential = stages one after "
             "another, inner loops pipelined (policy `hls`); + DB = the coarse-grained pipeline "
             "with double buffering (`dnn-db`); + LO = loop perfection and flattening (`dnn`, "
             "the PUB with its 4-wide fetch); quad-port SF = the same on a 2-in/2-out "
             "single-fetch memory. Fig. 7.9: dual-port (1 read, 1 write, single fetch) against "
             "the PUB's 2-in/2-out ports. Where ours differ: the PUB's schedule pads every "
             "row to its 4-word fetch (docs/scheduling.md, thesis Table 7.4's text), which the "
             "single-fetch memories do not pay -- on the 7- and 14-pixel rows that padding is "
             "a large share, so on the stride-1 layers our dual-port bar can reach or pass the "
             "PUB's; on the strided layers (two input pixels per output) the second read port "
             "counts and the PUB stays ahead, as in the thesis.",
             ""]
    for fig, labels in (("7.8", FIG_7_8), ("7.9", FIG_7_9)):
        path = img / f"fig{fig.replace('.', '_')}_resnet18.png"
        _bars(layers, {lab: occ[lab] for lab in labels}, "compute occupancy",
              f"ResNet-18 conv layers (Fig. {fig})", path)
        lines += [f"![Fig. {fig}]({os.path.relpath(path, doc_dir)})", "",
                  f"Thesis: {THESIS_FIG_TEXT[fig]}.", ""]
    rows = []
    for i, layer in enumerate(layers):
        out, ic, oc, k, s = RESNET18_LAYERS[layer]
        errs = "; ".join(f"{lab}: {_err(point[layer, lab])}" for lab in ABLATION
                         if _err(point[layer, lab]))
        rows.append([f"{layer} ({out}x{out}, {k}x{k}/{s})"] + [occ[lab][i] for lab in ABLATION]
                    + [point[layer, "+ LO (PUB)"].get("cycles"), errs])
    return lines + _table(["layer"] + list(ABLATION) + ["cycles (PUB)", "comment"], rows)


def render_ch7(res: dict, img: Path, doc_dir: Path) -> list[str]:
    """The lines of this part of docs/evaluation.md (the points of :func:`plan_ch7`)."""
    return (tables_7_6_7_7(res) + figures_7_6_7_7(res, img, doc_dir)
            + figures_7_8_7_9(res, img, doc_dir))
