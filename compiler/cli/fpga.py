"""``ubc fpga``: an application on an FPGA (docs/fpga.md "Applications on the FPGA"; thesis
§6.3, Table 6.1 "BRAM + LUTs", §7.4).

    ubc fpga APP [--arch A] [--size K=V ...] [--target ecp5|ice40] [--device ARGS] [--freq MHz]
                 [--out DIR] [--seed N] [--sim-only] [--json]

1. compile APP through buffer mapping and build its FPGA design (``compiler.fpga``), the
   golden (``CompileResult.establish_golden``, the same as ``make sim``'s) and the host's
   vectors; write ``DIR/design.json`` and ``DIR/vectors.json``;
2. ``python -m sim.fpga_run DIR``: the design in Verilator, checked bit for bit and its cycles
   (the design's own counter) against the schedule's prediction; a failed check stops here
   (exit status 1, docs/cli.md);
3. ``python -m ubgen fpga --target T --app-design DIR/design.json``: Yosys and nextpnr;
4. ``DIR/report.json`` and a summary: LUT4, FF, BRAM, DSP, Fmax, cycles, output values and the
   time per output value (cycles / Fmax / values), the seconds of every step.

The hardware and the simulator run in their own processes: the compiler writes data and reads
data, it never imports the hardware generator's Amaranth components nor the simulator
(docs/design.md §2). ``DIR`` defaults to ``build/fpga/app_<app>`` (plus the sizes that differ
from the app's defaults). A design that does not fit the device stops with one line naming the
resource, the need and the capacity.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from ..pipeline import DEFAULT_ARCH
from .common import add_app_arguments, check_dir

__all__ = ["add_fpga_subcommand", "cmd_fpga", "FPGAFlowError"]

class FPGAFlowError(ValueError):
    """A step of the FPGA flow failed (one line: the step's own message)."""


def _say(msg: str) -> None:
    print(f"[ubc fpga] {msg}", flush=True)


def _step(cmd: list[str], what: str) -> int:
    """Run a step in its own process, its progress on our output. The simulated check's exit
    status 1 (a check failed; it printed why) is returned; any other failure is one line, the
    step's last error line (:class:`FPGAFlowError`, exit status 2)."""
    proc = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
    if proc.returncode in (0, 1) and what == "simulated check":
        sys.stderr.write(proc.stderr)
        return proc.returncode
    if proc.returncode:
        lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
        err = next((ln for ln in reversed(lines) if ln.lower().startswith("error")),
                   lines[-1] if lines else f"exit status {proc.returncode}")
        raise FPGAFlowError(f"{what}: {err.removeprefix('error: ')}")
    return 0


def _default_dir(result) -> Path:
    """``build/fpga/app_<app>``, with the sizes given on the command line appended."""
    from ubgen.paths import build_dir
    extra = "".join(f"-{k}{v}" for k, v in sorted(result.sizes.items()))
    return build_dir("fpga", f"app_{result.app}{extra}")


def cmd_fpga(args) -> int:
    import numpy as np
    from ..pipeline import compile_app
    from ..frontend.source import effective_sizes, parse_sizes
    t0 = time.monotonic()
    seconds: dict[str, float] = {}
    if args.out:
        check_dir(args.out)                    # its parent directory must exist
    t = time.monotonic()
    result = compile_app(args.app, args.arch, parse_sizes(args.size), seed=args.seed,
                         until="map")
    design, vectors = result.fpga_design()
    seconds["compile"] = round(time.monotonic() - t, 2)
    out = Path(args.out) if args.out else _default_dir(result)
    summary = design.summary()
    pixels = sum(int(np.asarray(v).size) for v in result.golden.outputs.values())
    _say(f"{result.app}: {summary['pe']} operators, {summary['ram']} RAMs "
         f"({summary['ram_words']} words), {summary['regfile']} register files, "
         f"{summary['rom']} ROMs, {summary['in']} input and {summary['out']} output streams, "
         f"{summary['cycles_predicted']} cycles predicted ({seconds['compile']:.1f} s; golden: "
         f"{result.golden.describe()})")
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("report.json", "sim.json"):
        (out / stale).unlink(missing_ok=True)
    (out / "design.json").write_text(design.to_json(indent=1) + "\n")
    (out / "vectors.json").write_text(json.dumps(vectors) + "\n")
    _say(f"wrote {out / 'design.json'}; simulating in Verilator ...")
    t = time.monotonic()
    status = _step([sys.executable, "-m", "sim.fpga_run", str(out)], "simulated check")
    seconds["simulate"] = round(time.monotonic() - t, 2)
    sim = json.loads((out / "sim.json").read_text())
    if status:
        print(f"ubc: fpga: {result.app}: the simulated check failed: "
              f"{'; '.join(sim['failures'])} (see {out / 'sim.json'}); no synthesis",
              file=sys.stderr)
        return 1
    report = {"app": result.app, "arch": result.arch.name,
              "sizes": effective_sizes(result.source),
              "target": args.target, "design": summary, "pixels": pixels,
              "cycles_predicted": sim["cycles_predicted"],
              "cycles_measured": sim["cycles_measured"], "sim_passed": sim["passed"],
              "golden": result.golden.kind}
    if not args.sim_only:
        cmd = [sys.executable, "-m", "ubgen", "fpga", "--target", args.target,
               "--app-design", str(out / "design.json"), "--out", str(out / args.target)]
        if args.device:
            cmd += ["--device", args.device]
        if args.freq:
            cmd += ["--freq", str(args.freq)]
        if args.router:
            cmd += ["--router", args.router]
        _say("synthesis, place and route (minutes) ...")
        t = time.monotonic()
        _step(cmd, "FPGA flow")
        seconds["synthesis_pnr"] = round(time.monotonic() - t, 2)
        fpga = json.loads((out / args.target / "report.json").read_text())
        fmax = fpga["fmax_mhz"]
        report.update({k: fpga[k] for k in ("device", "luts", "ffs", "brams", "dsps",
                                            "logic_cells", "fmax_mhz", "constraint_mhz",
                                            "router", "mapping")})
        report["wrapper_ffs"] = fpga["wrapper"]["ffs"]
        report["tool_seconds"] = fpga["seconds"]
        report["ns_per_pixel"] = sim["cycles_measured"] / fmax * 1e3 / pixels
    seconds["total"] = round(time.monotonic() - t0, 2)
    report["seconds"] = seconds
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    if args.json:
        print(json.dumps(report))
    else:
        print(format_app_report(report))
    return 0


def format_app_report(r: dict) -> str:
    rows = [("app", f"{r['app']} (sizes {r['sizes']}; golden: {r['golden']})"),
            ("cycles", f"{r['cycles_measured']} measured in Verilator == "
                       f"{r['cycles_predicted']} predicted, output bit-exact"),
            ("output values", r["pixels"])]
    if "fmax_mhz" in r:
        lc = r["logic_cells"]
        rows += [("device", f"{r['target']} {r['device']}"),
                 ("LUT4 / FF", f"{r['luts']} / {r['ffs']} (the pin wrapper adds "
                               f"{r['wrapper_ffs']} FF)"),
                 ("BRAM / DSP", f"{r['brams']} / {r['dsps']}"),
                 ("logic cells", f"{lc.get('used', '?')} / {lc.get('available', '?')}"),
                 ("Fmax", f"{r['fmax_mhz']:.1f} MHz (routed)"),
                 ("time per output value", f"{r['ns_per_pixel']:.2f} ns "
                                           f"(cycles / Fmax / values)")]
    rows.append(("wall time", ", ".join(f"{k} {v:.0f} s" for k, v in r["seconds"].items())))
    w = max(len(k) for k, _ in rows)
    return "\n".join(f"  {k:<{w}}  {v}" for k, v in rows)


def add_fpga_subcommand(subparsers) -> None:
    s = subparsers.add_parser(
        "fpga", help="the app as an FPGA design: Verilator check, Yosys, nextpnr",
        description="Compile APP to an application-specific FPGA design (its unified-buffer "
        "implementation and schedule: block RAM driven by ubgen's controllers, the kernels as "
        "LUT/DSP datapaths), check it in Verilator against the golden (bit-exact, cycles equal "
        "to the schedule's), then synthesize, place and route it and report LUT4, FF, BRAM, DSP, "
        "Fmax and the time per output value (docs/fpga.md).")
    add_app_arguments(s, parameters_of=DEFAULT_ARCH)
    s.add_argument("--target", default="ecp5", choices=("ecp5", "ice40"),
                   help="FPGA family (default ecp5, on the LFE5U-85F)")
    s.add_argument("--device", default=None, help="nextpnr device arguments (default: "
                   "'--85k --package CABGA381' on ecp5, the target's on ice40)")
    s.add_argument("--freq", type=float, default=None, help="clock constraint in MHz")
    s.add_argument("--router", default=None, help="nextpnr router (router1 or router2)")
    s.add_argument("--out", metavar="DIR", default=None,
                   help="build directory (default build/fpga/app_<app>)")
    s.add_argument("--seed", type=int, default=0, help="the app's inputs (default 0)")
    s.add_argument("--sim-only", action="store_true",
                   help="stop after the Verilator check (no synthesis or place and route)")
    s.add_argument("--json", action="store_true", help="print the report as one JSON object")
    s.set_defaults(func=cmd_fpga)
