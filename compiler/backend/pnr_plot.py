"""Drawing of a placed and routed array (``ubc pnr --plot``, docs/pnr.md): tiles coloured by
kind (IO row, PE, MEM), used tiles darker and labelled with what they hold (a PE's op, a MEM's
buffer, an IO stream, ``reg`` for a register PE), every route's tile-to-tile hops as segments
(16-bit network solid, 1-bit dashed, each track offset a little so parallel tracks show), and
every enabled switch-box pipeline register as a red dot on the side of the tile it leaves."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

_FREE = {"io": "#e8eef7", "pe": "#eeeeee", "mem": "#e9f5e9"}
_USED = {"io": "#7aa6d9", "pe": "#c9c9c9", "mem": "#8cc98c"}
_SIDE = {"N": (0.0, -0.5), "S": (0.0, 0.5), "E": (0.5, 0.0), "W": (-0.5, 0.0)}


def _short(d: dict) -> str:
    if d.get("register"):
        return "reg"
    if d["kind"] == "pe":
        label = d.get("label", "")
        return label.split(":")[-1].strip()[:7] if label else "pe"
    if d["kind"] == "mem":
        return (d.get("buffer") or "mem")[:7]
    return "in" if d.get("stream") == "glb2f" else "out"


def plot_pnr(pnr, path: str) -> None:
    """Write the drawing of :class:`~.pnr.PnRResult` ``pnr`` to ``path`` (PNG)."""
    from .pnr import array_data
    data = array_data(pnr.arch)
    lay, g = data.layout, data.graph
    rows, cols = lay.rows, lay.columns
    fig, ax = plt.subplots(figsize=(max(6, cols * 0.55), max(4, rows * 0.55)))
    used = {pnr.placement.sites[n]: pnr.padded.graph.nodes[n] for n in pnr.padded.graph.nodes}
    for p in lay.positions():
        d = used.get((p.row, p.col))
        colour = _USED[p.kind] if d is not None else _FREE[p.kind]
        ax.add_patch(Rectangle((p.col - 0.42, p.row - 0.42), 0.84, 0.84, facecolor=colour,
                               edgecolor="#999999", linewidth=0.5))
        if d is not None:
            ax.text(p.col, p.row, _short(d), ha="center", va="center", fontsize=5)
    tracks = lay.arch.array.tracks
    for nr in pnr.routing.nets.values():
        for v, u in nr.parent.items():
            if u is None or g.nodes[v]["kind"] != "sb_in":
                continue
            a, b = g.nodes[u], g.nodes[v]       # sb_out of one tile -> sb_in of its neighbour
            off = (a["track"] - (tracks - 1) / 2) * 0.06
            dx, dy = (off, 0) if a["row"] != b["row"] else (0, off)
            ax.plot([a["col"] + dx, b["col"] + dx], [a["row"] + dy, b["row"] + dy],
                    color="#1f4e9a" if a["width"] > 1 else "#b06000",
                    linestyle="-" if a["width"] > 1 else "--", linewidth=0.7, alpha=0.8)
        for m in nr.registers:
            d = g.nodes[m]
            sx, sy = _SIDE[d["side"]]
            ax.plot(d["col"] + sx * 0.8, d["row"] + sy * 0.8, "o", color="red", markersize=2.5)
    s = pnr.summary()
    ax.set_title(f"{s['app']} on {s['arch']}: {s['pes']} PEs ({s['register_pes']} register), "
                 f"{s['mems']} MEMs, {s['ios']} IOs\n{s['pipeline_registers']} pipeline "
                 f"registers (red); longest combinational path {s['max_comb_hops']} hops",
                 fontsize=8)
    ax.set_xlim(-0.6, cols - 0.4)
    ax.set_ylim(rows - 0.4, -0.6)
    ax.set_aspect("equal")
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.tick_params(labelsize=6)
    ax.set_xlabel("column")
    ax.set_ylabel("row (0 = IO row)")
    fig.tight_layout()
    fig.savefig(path, dpi=150, format="png")
    plt.close(fig)
