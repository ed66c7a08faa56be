"""Schedule reservation table plot (thesis Figs. 4.7 / 4.8): compute units and buffer ports on
the y axis, cycles on the x axis, one bar per op (per tile for coarse-grained pipelines)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .ir.poly import PolyProgram  # noqa: E402
from .ir.schedule import OpSchedule, Schedule  # noqa: E402

MAX_TILES = 6


def _intervals(s: OpSchedule, tile_dims: list[str]) -> list[tuple[int, int]]:
    """Busy intervals [start, end) of an op: one per tile iteration (at most MAX_TILES)."""
    inner = [(c, b) for d, c, b in zip(s.dims, s.coeffs, s.bounds) if d not in tile_dims]
    tiles = [(c, b) for d, c, b in zip(s.dims, s.coeffs, s.bounds) if d in tile_dims]
    lo = s.offset + sum(c * (st if c >= 0 else st + e - 1) for c, (st, e) in inner)
    hi = s.offset + sum(c * (st + e - 1 if c >= 0 else st) for c, (st, e) in inner)
    hi += max(1, s.latency)
    starts = [0]
    for c, (st, e) in tiles:
        starts = [a + c * v for a in starts for v in range(st, st + e)]
    return [(lo + a, hi + a) for a in sorted(starts)[:MAX_TILES]]


def plot_schedule(poly: PolyProgram, sched: Schedule, path: str) -> None:
    tile_dims = list(sched.info.get("pipeline_loops", []))
    rows: list[str] = []
    bars: dict[str, list[tuple[str, int, int]]] = {}
    for op in poly.ops.values():
        res = [f"unit {op.unit}"] + [f"{'wr' if a.kind == 'store' else 'rd'} {a.buffer}"
                                     for a in [op.store] + op.loads
                                     if poly.buffers[a.buffer]["kind"] == "temp"]
        for r in dict.fromkeys(res):
            if r not in rows:
                rows.append(r)
            for a, b in _intervals(sched.ops[op.name], tile_dims):
                bars.setdefault(r, []).append((op.name, a, b))
    names = list(poly.ops)
    cmap = plt.get_cmap("tab20")
    color = {n: cmap(k % 20) for k, n in enumerate(names)}
    fig, ax = plt.subplots(figsize=(12, 0.45 * len(rows) + 1.6))
    for y, r in enumerate(rows):
        entries = bars.get(r, [])
        h = 0.8 / max(1, len({n for n, _, _ in entries}))
        lanes = {n: k for k, n in enumerate(dict.fromkeys(n for n, _, _ in entries))}
        labelled = set()
        for n, a, b in entries:
            yy = y - 0.4 + lanes[n] * h
            ax.broken_barh([(a, b - a)], (yy, h), facecolors=color[n], edgecolor="black",
                           linewidth=0.3)
            if r.startswith("unit") and n not in labelled:
                labelled.add(n)
                ax.text(a, y, f" {n} @{a}", va="center", ha="left", fontsize=7,
                        clip_on=True)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("cycle (unstalled)")
    title = f"{sched.program}: {sched.policy} schedule, completion {sched.completion} cycles"
    if sched.info.get("ii"):
        title += f", tile II {sched.info['ii']}"
    ax.set_title(title, fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=color[n]) for n in names]
    ax.legend(handles, names, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              ncol=1 if len(names) <= 24 else 2, frameon=False)
    ax.grid(axis="x", linestyle=":", linewidth=0.5)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
