"""Resources and cycles against a swept parameter, in the style of thesis Fig. 7.5: PEs and MEMs
on the left axis, cycles (log scale) on the right, the designs that do not fit the array shaded
red, failed points marked on the axis. One panel per combination of the other varying
parameters (e.g. one per ``arch``)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Sequence


def x_label(result: dict, keys: Sequence[str]) -> str:
    """``8`` for one key, ``8x8`` for tied keys (resnet's ``ic_unroll+oc_unroll``)."""
    return "x".join(str(result.get(k)) for k in keys)


def varying(results: Sequence[dict], keys: Sequence[str]) -> list[str]:
    """The keys among ``keys`` that take more than one value over ``results``."""
    return [k for k in keys if len({repr(r.get(k)) for r in results}) > 1]


def draw_panel(ax, results: Sequence[dict], x_keys: Sequence[str], title: str) -> None:
    labels = [x_label(r, x_keys) for r in results]
    xs = list(range(len(results)))
    for i, r in enumerate(results):
        if r.get("fits") is False:
            ax.axvspan(i - 0.5, i + 0.5, color="red", alpha=0.18, lw=0)
    pes = [r.get("pes") for r in results]
    mems = [r.get("mems") for r in results]
    if any(p is not None for p in pes):
        ax.plot([x for x, p in zip(xs, pes) if p is not None], [p for p in pes if p is not None],
                "o-", color="tab:blue", label="PEs")
    else:
        ax.plot([], [], "o-", color="tab:blue", label="PEs (pending: no netlist stage)")
    ax.plot([x for x, m in zip(xs, mems) if m is not None], [m for m in mems if m is not None],
            "s-", color="tab:green", label="MEMs")
    ax.set_xticks(xs, labels)
    ax.set_xlim(-0.5, len(xs) - 0.5)
    ax.set_xlabel(" x ".join(x_keys) if len(x_keys) > 1 else x_keys[0])
    ax.set_ylabel("resources (tiles)")
    top = max([v for v in pes + mems if v is not None] + [1])
    ax.set_ylim(0, top * 1.25)
    from matplotlib.ticker import MaxNLocator
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(title, fontsize=10)
    cyc = ax.twinx()
    cycles = [r.get("cycles") for r in results]
    pts = [(x, c) for x, c in zip(xs, cycles) if c]
    if pts:
        cyc.plot(*zip(*pts), "^--", color="tab:orange", label="cycles")
        cyc.set_yscale("log")
    cyc.set_ylabel("execution time (cycles)")
    for x, r in zip(xs, results):
        if r.get("status") == "error":
            ax.annotate("error", (x, 0), xytext=(0, 4), textcoords="offset points",
                        ha="center", fontsize=7, color="black")
    handles = ax.get_legend_handles_labels()
    extra = cyc.get_legend_handles_labels()
    if any(r.get("fits") is False for r in results):
        from matplotlib.patches import Patch
        handles[0].append(Patch(color="red", alpha=0.18))
        handles[1].append("does not fit")
    ax.legend(handles[0] + extra[0], handles[1] + extra[1], fontsize=7, loc="upper left")


def plot_sweep(results: Sequence[dict], x_keys: Sequence[str], path: str | Path,
               title: str = "", panel_keys: Sequence[str] = ()) -> None:
    """Write the plot to ``path`` (PNG) atomically: nothing is left behind on failure."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels: dict[str, list[dict]] = {}
    for r in results:
        name = ", ".join(f"{k}={r.get(k)}" for k in panel_keys)
        panels.setdefault(name, []).append(r)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.8), squeeze=False)
    for ax, (name, rs) in zip(axes[0], panels.items()):
        draw_panel(ax, rs, x_keys, " ".join(s for s in (title, name) if s))
    fig.tight_layout()
    target = Path(path)
    fd, tmp = tempfile.mkstemp(suffix=target.suffix or ".png", dir=target.parent)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        plt.close(fig)
