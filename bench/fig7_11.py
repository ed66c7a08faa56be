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
  then realized ``--reps`` times on the app's inputs; the least CPU time of a realize (every
  output Func of the app; the process's CPU time, not the wall time, because the machine is
  shared with other jobs), with Halide's default schedule (everything inlined into the output,
  no vectorization, one thread) and with the schedule the package's Mullapudi2016
  autoscheduler makes for this machine (stages at tiles, vectorized, parallel: the CPU time of
  all threads), on this machine's CPU; every output is checked equal to the app's reference.

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


AUTOSCHEDULER = "Mullapudi2016"


def _autoscheduler() -> None:
    """Load the PyPI package's Mullapudi2016 autoscheduler plugin (once)."""
    import glob
    import halide as hl
    if getattr(_autoscheduler, "done", False):
        return
    base = Path(hl.__file__).parent
    libs = glob.glob(str(base / "lib*" / "libautoschedule_mullapudi2016.so"))
    if not libs:
        raise RuntimeError("the halide package has no Mullapudi2016 autoscheduler plugin")
    hl.load_plugin(libs[0])
    _autoscheduler.done = True


def cpu_seconds(app: str, reps: int, schedule: str = "default") -> float | None:
    """The least CPU time over ``reps`` of the app's Halide pipeline on the app's default
    inputs (JIT compile excluded), or None when the app has no Halide pipeline. ``schedule``:
    ``default`` (Halide's: every stage inlined into the output, one thread) or ``auto`` (the
    same algorithm scheduled by the Mullapudi2016 autoscheduler for this machine: stages
    computed at tiles, vectorized, parallel; the CPU time of all threads)."""
    import halide as hl
    from apps import get_app
    from tests.apps import halide_pipelines as H
    if not hasattr(H, app):
        return None
    mod = get_app(app)
    img = raw = mod.make_inputs(0)["input"]
    if hasattr(mod, "host_input"):       # the pipeline takes the image, the app its padded region
        from apps._common import test_image
        img = test_image(0, mod.SIZES["width"], mod.SIZES["height"])
        raw = mod.host_input(img)
    extra = (mod.CCM, mod.curve_table()) if app == "camera" else ()
    spent: list[float] = []
    plain = H.realize
    if schedule == "auto":
        _autoscheduler()

    def timed(f: hl.Func, *shape: int):
        p = hl.Pipeline(f)
        if schedule == "auto":
            f.set_estimates([hl.Range(0, n) for n in shape])
            p.apply_autoscheduler(hl.get_jit_target_from_environment(),
                                  hl.AutoschedulerParams(AUTOSCHEDULER))
        p.compile_jit()
        out = p.realize(list(shape))                 # warm: first run, page faults
        best = float("inf")
        for _ in range(reps):
            t = time.process_time()
            out = p.realize(list(shape))
            best = min(best, time.process_time() - t)
        spent.append(best)
        return H.from_hl(out)
    H.realize = timed
    try:
        got = getattr(H, app)(img, *extra)
    except hl.HalideError as e:
        if schedule != "auto":
            raise
        # a pipeline realizing several outputs that share stages: once the first output's
        # schedule has put a shared stage at root, the autoscheduler refuses the next one
        print(f"{app}: not autoscheduled: {str(e).splitlines()[0]}", file=sys.stderr)
        return None
    finally:
        H.realize = plain
    ref = mod.reference({"input": raw})             # the same values as the app's reference
    for k, v in got.items():
        if not np.array_equal(np.asarray(v).astype(np.int64),
                              np.asarray(ref[k]).astype(np.int64)):
            raise AssertionError(f"{app}: Halide output {k} differs from the reference")
    return sum(spent)


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else the machine type."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


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


RECORD = ROOT / "docs" / "data" / "fig7_11.json"


def merged_rows(record: Path, measured: list[dict]) -> list[dict]:
    """The recorded rows with the apps just measured replaced (in place) or appended, so that a
    run over some apps (``--apps``) keeps the others' rows in the record and the plot."""
    old = json.loads(record.read_text())["rows"] if record.exists() else []
    new = {r["app"]: r for r in measured}
    rows = [new.pop(r["app"], r) for r in old]
    return rows + [r for r in measured if r["app"] in new]


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
          "| FPGA cycles | FPGA Fmax MHz | FPGA ns/output | CPU ns/output (Halide JIT, default "
          "schedule) | CPU ns/output (autoscheduled) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
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
            auto = cpu_seconds(app, args.reps, "auto")
            if auto is not None:
                row["cpu_auto_ns"] = auto * 1e9 / c["pixels"]
        rows.append(row)
        meas = (f"{c['cycles_measured']} ({c['sim_arch']})" if "cycles_measured" in c
                else f"{c['cycles_predicted']} predicted")
        fmt = lambda k, spec: format(row[k], spec) if k in row else "-"   # noqa: E731
        print(f"| {app} | {c['pixels']} | {meas} | {row['cgra_ns']:.3f} | "
              f"{fmt('fpga_cycles', 'd')} | {fmt('fpga_fmax', '.1f')} | {fmt('fpga_ns', '.2f')} "
              f"| {fmt('cpu_ns', '.2f')} | {fmt('cpu_auto_ns', '.2f')} |", flush=True)
    rows = merged_rows(RECORD, rows)
    out = {"thesis_clock_mhz": THESIS_CLOCK_MHZ, "cpu": cpu_name(), "reps": args.reps,
           "autoscheduler": AUTOSCHEDULER, "rows": rows}
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    RECORD.write_text(json.dumps(out, indent=1) + "\n")
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
              ("cpu_ns", "CPU, Halide default schedule (this machine)"),
              ("cpu_auto_ns", f"CPU, Halide {AUTOSCHEDULER} autoschedule (this machine)")]
    x = np.arange(len(names))
    w = 0.2
    fig, ax = plt.subplots(figsize=(max(7, len(names) * 0.9), 4))
    for k, (key, label) in enumerate(series):
        vals = [r.get(key, np.nan) for r in rows]
        ax.bar(x + (k - 1.5) * w, vals, w, label=label)
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
