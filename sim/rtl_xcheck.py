"""Run the RTL cross-check of :mod:`sim.xcheck` for one app outside pytest (``make sim``)."""
from __future__ import annotations

from pathlib import Path

from sim.runner import BUILD, run_cocotb
from sim.xcheck import app_jobs, write_jobs
from ubgen.arch import load_arch


def run_xcheck(apps: str | list[str], arch: str = "pub",
               sizes: dict[str, dict[str, int]] | None = None,
               buffers: dict[str, list[str]] | None = None) -> int:
    """Build the PUB Verilog of ``arch`` once and check every PUB job of ``apps`` (``sizes``:
    per app, size overrides; ``buffers``: per app, only these unified buffers); returns the
    number of jobs. Raises AssertionError on a mismatch."""
    from ubgen.blocks import block_verilog
    apps = [apps] if isinstance(apps, str) else list(apps)
    jobs = [j for app in apps for j in app_jobs(app, arch, buffers=(buffers or {}).get(app),
                                                 sizes=(sizes or {}).get(app))]
    if not jobs:
        return 0
    name = f"xcheck_{load_arch(arch).name}"
    d = BUILD / name
    d.mkdir(parents=True, exist_ok=True)
    src = d / "pub.v"
    text = block_verilog(load_arch(arch), "pub")
    if not src.exists() or src.read_text() != text:
        src.write_text(text)
    path = write_jobs(jobs, d / f"{'_'.join(Path(a).stem for a in apps)}_jobs.json")
    run_cocotb(name=name, sources=[src], toplevel="pub", test_module="sim.tb.test_xcheck",
               testcase=["xcheck"], build_args=["-CFLAGS", "-O0"],
               extra_env={"UBGEN_ARCH": arch, "UBGEN_XCHECK_JOBS": str(path)})
    return len(jobs)
