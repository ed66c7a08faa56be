"""Every application through its FPGA flow (``ubc fpga APP``: the Verilator check, Yosys,
nextpnr on the LFE5U-85F), one at a time, with the wall time of each (docs/fpga.md
"Applications on the FPGA").

    python bench/fpga_apps.py [--apps gaussian harris ...] [--target ecp5] [--timeout 900]

Prints one row per app (LUT4, FF, BRAM, DSP, Fmax, cycles, output values, ns per output value,
wall minutes; the report also has the CPU minutes of the flow's processes and the load average
at the end, since the machine is shared) as the runs finish, and writes ``docs/data/fpga_apps.json`` after every app (the
reports of the runs that finished, merged with the apps of earlier runs; an app that does not
fit or whose flow fails gets its one-line error). ``make evaluate`` renders it into
docs/evaluation.md. ``--timeout`` (seconds) stops an app's flow that takes longer (the issue's
15-minute budget), recorded as such.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

APPS = ["gaussian", "cascade", "harris", "unsharp", "upsample", "camera", "gpyr", "laplacian",
        "brighten_blur", "mobilenet", "resnet", "gemm", "srcnn"]


def _cpu() -> float:
    """CPU seconds of the waited-for descendants so far (the flow's tools)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(app: str, target: str, timeout: float, router: str | None = None) -> dict:
    t, cpu = time.monotonic(), _cpu()
    cmd = ["nice", "-n", "10", sys.executable, "-m", "compiler", "fpga", app, "--target", target,
           "--json"] + (["--router", router] if router else [])
    # its own process group, so that a timeout stops the flow's tools too (nextpnr is a
    # grandchild)
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGTERM)
        p.communicate()
        return {"app": app, "error": f"stopped after {timeout:.0f} s",
                "minutes": round((time.monotonic() - t) / 60, 1)}
    minutes = round((time.monotonic() - t) / 60, 1)
    if p.returncode:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        return {"app": app, "error": lines[-1] if lines else f"exit {p.returncode}",
                "minutes": minutes}
    r = json.loads(out.strip().splitlines()[-1])
    r["minutes"] = minutes
    r["cpu_minutes"] = round((_cpu() - cpu) / 60, 1)
    r["load"] = round(os.getloadavg()[0], 1)
    return r


def row(r: dict) -> str:
    if "error" in r:
        return f"| {r['app']} | {r['error']} | | | | | | | | {r['minutes']} |"
    return (f"| {r['app']} | {r['luts']} | {r['ffs']} | {r['brams']} | {r['dsps']} | "
            f"{r['fmax_mhz']:.1f} | {r['cycles_measured']} | {r['pixels']} | "
            f"{r['ns_per_pixel']:.2f} | {r['minutes']} |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--apps", nargs="+", default=APPS)
    p.add_argument("--target", default="ecp5")
    p.add_argument("--timeout", type=float, default=1800)
    p.add_argument("--router", default=None, help="nextpnr router (default: the target's)")
    args = p.parse_args(argv)
    path = ROOT / "docs" / "data" / "fpga_apps.json"
    done = json.loads(path.read_text()) if path.exists() else {}
    print("| app | LUT4 | FF | BRAM | DSP | Fmax MHz | cycles | outputs | ns/output | minutes |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for app in args.apps:
        r = run(app, args.target, args.timeout, args.router)
        done[app] = r
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(done, indent=1) + "\n")
        print(row(r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
