"""Run the RTL cross-check of :mod:`sim.xcheck` for one app outside pytest (``make sim``)."""
from __future__ import annotations

from pathlib import Path

from sim.runner import BUILD, run_cocotb, write_source
from sim.xcheck import app_jobs, write_jobs
from ubgen.arch import load_arch


# The generated C++ of a PUB model compiled without optimisation: its runs are short, and the
# build takes half the time.
PUB_BUILD_ARGS = ["-CFLAGS", "-O0"]


def pub_model(arch: str = "pub") -> tuple[str, Path]:
    """The Verilator build name and the Verilog source of ``arch``'s generated PUB: one build
    (``build/sim/<name>/``) that the cross-check and the PUB's own cocotb cases share."""
    from ubgen.blocks import block_verilog
    a = load_arch(arch)
    name = "pub" if a.name == "pub" else f"pub_{a.name}"
    return name, write_source(name, block_verilog(a, "pub"), stem="pub")


def run_xcheck(apps: str | list[str], arch: str = "pub",
               sizes: dict[str, dict[str, int]] | None = None,
               buffers: dict[str, list[str]] | None = None) -> int:
    """Build the PUB Verilog of ``arch`` once and check every PUB job of ``apps`` (``sizes``:
    per app, size overrides; ``buffers``: per app, only these unified buffers); returns the
    number of jobs. Raises AssertionError on a mismatch."""
    apps = [apps] if isinstance(apps, str) else list(apps)
    jobs = [j for app in apps for j in app_jobs(app, arch, buffers=(buffers or {}).get(app),
                                                 sizes=(sizes or {}).get(app))]
    if not jobs:
        return 0
    name, src = pub_model(arch)
    path = write_jobs(jobs, BUILD / name / f"{'_'.join(Path(a).stem for a in apps)}_jobs.json")
    run_cocotb(name=name, sources=[src], toplevel="pub", test_module="sim.tb.test_xcheck",
               testcase=["xcheck"], build_args=PUB_BUILD_ARGS,
               extra_env={"UBGEN_ARCH": arch, "UBGEN_XCHECK_JOBS": str(path)})
    return len(jobs)
