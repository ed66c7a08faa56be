"""Thesis Figure 7.11: time per output value of each application on the CGRA, on its FPGA design
and on this machine's CPU (docs/fpga.md "Time per output value"; docs/evaluation.md).

* **CGRA**: the cycles of the app on the generated array: the schedule's prediction
  (``compile_app(...).netlist.cycles_predicted``), and the cycles the array's own counter
  measured in ``make sim`` when a record of that run is in ``build/sim/<app>-<arch>.json``
  (``passed`` and ``cycles_measured``); the time at the thesis's stated clock of 900 MHz (the
  ASIC's, thesis §7.1: we cannot time the ASIC here, so this is labelled as the thesis's clock);
* **FPGA**: the app's FPGA design (``ubc fpga``; ``docs/data/fpga_apps.json`` from
  ``bench/fpga_apps.py``): the cycles its counter measured in Verilator at the Fmax nextpnr
  routed on the LFE5U-85F;
* **CPU**: the same pipeline in Halide (PyPI ``halide``, ``tests/apps/halide_pipelines.py``:
  the stencil apps written in Halide from the same algorithm descriptions), JIT-compiled once,
  then realized ``--reps`` times on the app's inputs; the minimum wall time of a realize
  (every output Func of the app) on one thread (Halide's default schedule: everything inlined
  into the output, no vectorization, no threads), on this machine's CPU.

Time per output value = runtime / output values (thesis §7.4). Prints the table, writes
``docs/data/fig7_11.json`` (rendered into docs/evaluation.md by ``make evaluate``) and the plot
``docs/img/fig7_11_time_per_pixel.png``.

    python bench/fig7_11.py [--apps ...] [--reps 20] [--plot PATH]
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

THESIS_CLOCK_MHZ = 900.0      # thesis §7.1: the CGRA's place and route clock (16 nm)
APPS = ["gaussian", "cascade", "harris", "unsharp", "upsample", "camera", "gpyr", "laplacian",
        "brighten_blur", "mobilenet", "resnet", "gemm"]
SIM_ARCHS = ["cgra_4x4", "cgra_4x16", "cgra_8x8", "cgra_16x32"]


def cpu_seconds(app: str, reps: int) -> float | None:
    """The minimum over ``reps`` of the wall time of the app's Halide pipeline on the app's
    default inputs (JIT compile excluded), or None when the app has no Halide pipeline."""
    import halide as hl
    from apps import get_app
    from tests.apps import halide_pipelines as H
    if not hasattr(H, app):
        return None
    mod = get_app(app)
    img = mod.make_inputs(0)["input"]
    extra = (mod.CCM, mod.curve_table()) if app == "camera" else ()
    spent: list[float] = []
    plain = H.realize

    def timed(f: hl.Func, *shape: int):
        f.compile_jit()
        out = f.realize(list(shape))                 # warm: first run, page faults
        best = float("inf")
        for _ in range(reps):
            t = time.perf_counter()
            out = f.realize(list(shape))
            best = min(best, time.perf_counter() - t)
        spent.append(best)
        return H.from_hl(out)
    H.realize = timed
    try:
        got = getattr(H, app)(img, *extra)
    finally:
        H.realize = plain
    ref = mod.reference({"input": img})             # the same values as the app's reference
    for k, v in got.items():
        if not np.array_equal(np.asarray(v).astype(np.int64),
                              np.asarray(ref[k]).astype(np.int64)):
            raise AssertionError(f"{app}: Halide output {k} differs from the reference")
    return sum(spent)


def cgra_cycles(app: str) -> dict:
    """Predicted cycles and, from a ``make sim`` record, the measured ones."""
    from compiler.pipeline import compile_app
    r = compile_app(app, "cgra_16x32", until="netlist")
    out = {"cycles_predicted": r.netlist.cycles_predicted,
           "pixels": int(sum(np.prod(b.shape) for b in r.program.buffers.values()
                             if b.kind == "output"))}
    for arch in SIM_ARCHS:
        rec = ROOT / "build" / "sim" / f"{app}-{arch}.json"
        if rec.exists():
            d = json.loads(rec.read_text())
            if d.get("passed") and d.get("cycles_measured") is not None:
                out.update(cycles_measured=d["cycles_measured"], sim_arch=arch)
                break
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--apps", nargs="+", default=APPS)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--plot", default=str(ROOT / "docs" / "img" / "fig7_11_time_per_pixel.png"))
    args = p.parse_args(argv)
    fpga_path = ROOT / "docs" / "data" / "fpga_apps.json"
    fpga = json.loads(fpga_path.read_text()) if fpga_path.exists() else {}
    rows = []
    print("| app | outputs | CGRA cycles (measured) | CGRA ns/output @ 900 MHz (thesis clock) "
          "| FPGA cycles | FPGA Fmax MHz | FPGA ns/output | CPU ns/output (Halide JIT, 1 "
          "thread) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for app in args.apps:
        c = cgra_cycles(app)
        cycles = c.get("cycles_measured", c["cycles_predicted"])
        row = {"app": app, **c,
               "cgra_ns": cycles / THESIS_CLOCK_MHZ * 1e3 / c["pixels"]}
        f = fpga.get(app, {})
        if "fmax_mhz" in f:
            row.update(fpga_cycles=f["cycles_measured"], fpga_fmax=f["fmax_mhz"],
                       fpga_ns=f["ns_per_pixel"])
        cpu = cpu_seconds(app, args.reps)
        if cpu is not None:
            row["cpu_ns"] = cpu * 1e9 / c["pixels"]
        rows.append(row)
        meas = (f"{c['cycles_measured']} ({c['sim_arch']})" if "cycles_measured" in c
                else f"{c['cycles_predicted']} predicted")
        fmt = lambda k, spec: format(row[k], spec) if k in row else "-"   # noqa: E731
        print(f"| {app} | {c['pixels']} | {meas} | {row['cgra_ns']:.3f} | "
              f"{fmt('fpga_cycles', 'd')} | {fmt('fpga_fmax', '.1f')} | {fmt('fpga_ns', '.2f')} "
              f"| {fmt('cpu_ns', '.2f')} |", flush=True)
    out = {"thesis_clock_mhz": THESIS_CLOCK_MHZ, "cpu": platform.processor() or
           platform.machine(), "reps": args.reps, "rows": rows}
    (ROOT / "docs" / "data").mkdir(parents=True, exist_ok=True)
    (ROOT / "docs" / "data" / "fig7_11.json").write_text(json.dumps(out, indent=1) + "\n")
    plot(rows, Path(args.plot))
    print(f"wrote {args.plot}")
    return 0


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [r["app"] for r in rows]
    series = [("cgra_ns", "CGRA at 900 MHz (thesis clock)"),
              ("fpga_ns", "FPGA design, LFE5U-85F at routed Fmax"),
              ("cpu_ns", "CPU, Halide JIT, 1 thread (this machine)")]
    x = np.arange(len(names))
    w = 0.27
    fig, ax = plt.subplots(figsize=(max(7, len(names) * 0.9), 4))
    for k, (key, label) in enumerate(series):
        vals = [r.get(key, np.nan) for r in rows]
        ax.bar(x + (k - 1) * w, vals, w, label=label)
    ax.set_yscale("log")
    ax.set_xticks(x, names, rotation=30, ha="right")
    ax.set_ylabel("time per output value (ns, log)")
    ax.set_title("Time per output value (thesis Fig. 7.11)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
