"""Run a placed and routed application on the generated ``cgra_top`` in Verilator
(docs/simulation.md).

``run_bundle(bundle, arch) -> dict``:

1. the arch's Verilog (``ubgen.top.write_verilog``: the top, the tile modules and the exported
   address map), generated into a temporary directory and hashed (SHA-256 over the files);
2. the Verilator model of that Verilog (cocotb's VPI build with only the top's signals public,
   the tile modules Verilated as hierarchical blocks, docs/array.md "Verilator"), built once into
   ``build/sim/e2e/<arch>-<sha16>[-waves]/`` and reused by every later run whose generated Verilog
   hashes the same (``verilator_build_seconds`` is 0 then); a lock file serialises concurrent
   builds of one model;
3. the cocotb testbench :mod:`sim.tb.test_e2e`, which drives the model through its AXI4-Lite port
   the way a host driver does and writes what it observed to a JSON file;
4. the verdict: ``match`` (every expected output word read back bit for bit and the bitstream
   read back equal), ``cycles_measured`` (the top's ``LAST_WRITE`` counter, the unstalled cycle
   of the array's last GLB write, which is how ``cycles_predicted`` is defined), ``writes`` (the
   ``WRITES`` counter) against the bundle's ``output_writes``, and ``error`` (the ``ERROR``
   register) 0. ``passed`` is all four.

``WAVES=1`` in the environment (or ``waves=True``) builds a tracing model and writes an FST
waveform to ``build/sim/<app>-<arch>.fst``.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from .bundle import validate_bundle
from .runner import BUILD, VERILATOR_ARGS, fst_build_args, hier_block_args, setup_verilator

__all__ = ["run_bundle", "model_for", "generate_verilog", "E2E_BUILD", "RunError"]

E2E_BUILD = BUILD / "e2e"
TEST_MODULE = "sim.tb.test_e2e"


class RunError(RuntimeError):
    """The simulation could not run (build failure, crash, no result): one line."""


def _arch(arch):
    from ubgen.arch import Arch, load_arch
    return arch if isinstance(arch, Arch) else load_arch(arch)


_GENERATED: dict[str, tuple[Path, str]] = {}      # this process's generations, by arch repr


def generate_verilog(arch) -> tuple[Path, str, float]:
    """Generate ``arch``'s ``cgra_top`` Verilog; returns (directory, SHA-256, seconds). The
    directory is ``build/sim/e2e/rtl-<arch>-<sha16>`` (reused when it exists). Within one
    process an arch is generated once (the generator cannot change under a running process)."""
    from ubgen.top import write_verilog
    arch = _arch(arch)
    t = time.perf_counter()
    known = _GENERATED.get(repr(arch))
    if known and known[0].exists():
        return known[0], known[1], time.perf_counter() - t
    E2E_BUILD.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=E2E_BUILD, prefix=f".rtl-{arch.name}-"))
    try:
        write_verilog(arch, tmp)
        h = hashlib.sha256()
        for p in sorted(tmp.iterdir()):
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
        sha = h.hexdigest()
        out = E2E_BUILD / f"rtl-{arch.name}-{sha[:16]}"
        if not out.exists():
            try:
                tmp.rename(out)
            except OSError:             # another process won the race: same content
                pass
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    _GENERATED[repr(arch)] = (out, sha)
    return out, sha, time.perf_counter() - t


@contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _sources(rtl: Path, arch_name: str) -> list[Path]:
    top = rtl / f"cgra_top_{arch_name}.v"
    return sorted(p for p in rtl.glob("*.v") if p != top) + [top]


# What the build below makes (stored in each model's stamp; a model of another flavour is
# rebuilt): VPI access to the top module's signals only.
FLAVOUR = "vpi-top-only"


def _verilate(build_dir: Path, rtl: Path, top: str, arch_name: str, waves: bool,
              opt: str | None = None) -> None:
    """cocotb's Verilator build (the commands of ``cocotb_tools.runner.Verilator``: VPI, the
    cocotb VPI library, cocotb's ``verilator.cpp`` main) with one difference: only the top
    module's signals are public (a Verilator configuration file), where cocotb's runner makes
    every signal of the design public (``--public-flat-rw``). The testbench touches the top's
    ports only; keeping the tiles' signals private lets Verilator optimise them, which makes
    the cgra_8x8 model about 3.5 times faster and its build 3 times shorter (docs/simulation.md
    "Speed"). ``opt``: the C++ optimisation of the evaluation code (make's ``OPT_FAST``; the
    gate-level energy models of sim.energy use a cheaper one than the default)."""
    import subprocess
    import cocotb_tools.config as cocotb_config
    from ubgen.array import KINDS, tile_module
    hier_sources, hier_args = hier_block_args(build_dir, [tile_module(k) for k in KINDS])
    vlt = build_dir / "public_top.vlt"
    vlt.write_text(f'`verilator_config\npublic_flat_rw -module "{top}" -var "*"\n')
    libs = cocotb_config.libs_dir
    cmd = ["verilator", "-cc", "--exe", "-Mdir", str(build_dir), "--top-module", top, "--vpi",
           "--prefix", "Vtop", "-o", top,
           "-LDFLAGS", f"-Wl,-rpath,{libs} -L{libs} -lcocotbvpi_verilator",
           *VERILATOR_ARGS, *hier_args, *(fst_build_args() if waves else []),
           "--timescale", "1ns/1ps",
           str(cocotb_config.share_dir / "lib" / "verilator" / "verilator.cpp"), str(vlt),
           *map(str, hier_sources + _sources(rtl, arch_name))]
    make = ["make", "-j", "2", "-C", str(build_dir), "-f", "Vtop.mk", f"VM_TRACE={int(waves)}",
            *([f"OPT_FAST={opt}"] if opt else [])]
    with open(build_dir / "build.log", "w") as log:
        for c in (cmd, make):
            if subprocess.run(c, cwd=build_dir, stdout=log, stderr=subprocess.STDOUT).returncode:
                raise RunError(f"Verilator build failed ({c[0]}); see {build_dir}/build.log")


def model_for(arch, waves: bool = False, log=None) -> dict:
    """The Verilator model of ``arch``'s generated Verilog, built if no model of that Verilog
    exists. Returns ``{"build_dir", "rtl", "sha256", "top", "address_map",
    "verilog_seconds", "verilator_build_seconds", "cached"}``."""
    arch = _arch(arch)
    say = log or (lambda msg: None)
    rtl, sha, vsec = generate_verilog(arch)
    say(f"Verilog: {arch.name}, sha256 {sha[:16]} ({vsec:.1f} s)")
    top = f"cgra_top_{arch.name}"
    build_dir = E2E_BUILD / f"{arch.name}-{sha[:16]}{'-waves' if waves else ''}"
    stamp = build_dir / "model.json"
    with _locked(E2E_BUILD / f".{build_dir.name}.lock"):
        cached = (stamp.exists() and (build_dir / top).exists()
                  and json.loads(stamp.read_text()).get("flavour") == FLAVOUR)
        seconds = 0.0
        if not cached:
            say(f"Verilator build: {build_dir.relative_to(BUILD.parent.parent)} (cold, minutes)")
            t = time.perf_counter()
            setup_verilator()
            if build_dir.exists():
                shutil.rmtree(build_dir)
            build_dir.mkdir(parents=True)
            try:
                _verilate(build_dir, rtl, top, arch.name, waves)
            except RunError:
                raise
            except RuntimeError as e:       # fst_build_args: no LZ4 library
                raise RunError(f"Verilator build failed ({e})") from None
            seconds = time.perf_counter() - t
            stamp.write_text(json.dumps({"sha256": sha, "arch": arch.name, "waves": waves,
                                         "flavour": FLAVOUR, "seconds": round(seconds, 1)}))
        else:
            say(f"Verilator build: cached ({build_dir.name})")
    amap = json.loads((rtl / f"{top}.json").read_text())
    return {"build_dir": build_dir, "rtl": rtl, "sha256": sha, "top": top,
            "address_map": amap, "verilog_seconds": vsec,
            "verilator_build_seconds": seconds, "cached": cached}


def _waves_default() -> bool:
    return os.environ.get("WAVES", "0") not in ("", "0")


def run_bundle(bundle: dict, arch, *, waves: bool | None = None, log=None,
               model: dict | None = None, keep: bool | None = None,
               stress: int | None = None, plan_patch: dict | None = None) -> dict:
    """Run ``bundle`` (``compiler.backend.bundle.make_bundle``) on ``arch``'s ``cgra_top``
    (module docstring). ``model``: a :func:`model_for` result to reuse. ``keep``: keep the run
    directory (``build/sim/e2e/runs/...``: job, result, simulator log) always (True), never
    (False) or when the run fails (None). ``stress``: a seed
    for the reliability run (random AXI-Lite traffic woven into the host's steps,
    :mod:`sim.tb.test_e2e`; its wrong responses count as failures). ``plan_patch``: for
    negative controls only, a deliberately wrong host view (``{"tile_span_extra": n}``: the
    host believes every tile answers ``n`` more offsets). Returns the testbench's
    observations and the verdict: ``passed``, ``match``, ``cycles_predicted``,
    ``cycles_measured``, ``first_write``, ``writes``, ``output_writes``, ``error``,
    ``readback_mismatches``, ``output_mismatches`` (count and the first few), ``sim_seconds``,
    ``sim_cycles`` (clock cycles the simulation ran), ``verilator_build_seconds``,
    ``verilog_seconds``, ``stages`` (seconds of configure, load, run, read back)."""
    waves = _waves_default() if waves is None else waves
    say = log or (lambda msg: None)
    arch = _arch(arch)
    if model is None:
        model = model_for(arch, waves, log)
    validate_bundle(bundle, model["address_map"])
    from .bundle import host_plan
    setup_verilator()
    from cocotb_tools.runner import get_runner
    runs = E2E_BUILD / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    run_dir = Path(tempfile.mkdtemp(dir=runs, prefix=f"{bundle['app']}-{arch.name}-"))
    plan = host_plan(model["address_map"])
    extra = (plan_patch or {}).get("tile_span_extra", 0)
    plan["tile_spans"] = {k: v + extra for k, v in plan["tile_spans"].items()}
    job = {"bundle": bundle, "plan": plan, "stress": stress}
    (run_dir / "job.json").write_text(json.dumps(job))
    result_path = run_dir / "result.json"
    env = {"PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parent.parent),
                                          os.environ.get("PYTHONPATH", "")]),
           "UBGEN_E2E_JOB": str(run_dir / "job.json"), "UBGEN_E2E_RESULT": str(result_path)}
    fst = BUILD / f"{bundle['app']}-{arch.name}.fst"
    say(f"simulate: {len(bundle['bitstream'])} configuration words, "
        f"{len(bundle['glb_inputs'])} input words, {len(bundle['glb_outputs'])} output words, "
        f"{bundle['cycles_predicted']} cycles predicted")
    t = time.perf_counter()
    runner = get_runner("verilator")
    try:
        runner.test(test_module=TEST_MODULE, hdl_toplevel=model["top"], hdl_toplevel_lang="verilog",
                    build_dir=model["build_dir"], test_dir=run_dir, extra_env=env,
                    waves=waves, test_args=(["--trace-file", str(fst)] if waves else []),
                    log_file=run_dir / "sim.log")
    except SystemExit as e:          # the runner exits when the cocotb test failed
        if not result_path.exists():
            raise RunError(f"simulation failed to run ({e}); see {run_dir}/sim.log") from None
    sim_seconds = time.perf_counter() - t
    if not result_path.exists():
        raise RunError(f"the testbench wrote no result; see {run_dir}/sim.log")
    res = json.loads(result_path.read_text())
    for line in res.get("log", []):
        say(line)
    res.update(sim_seconds=round(sim_seconds, 2),
               verilator_build_seconds=round(model["verilator_build_seconds"], 1),
               verilog_seconds=round(model["verilog_seconds"], 1),
               model_sha256=model["sha256"], cycles_predicted=bundle["cycles_predicted"],
               output_writes=bundle["output_writes"])
    res.update(verdict(res))
    if waves:
        res["waves"] = str(fst)
    if keep is False or (keep is None and res["passed"]):
        shutil.rmtree(run_dir, ignore_errors=True)
    else:
        res["run_dir"] = str(run_dir)
    return res


def verdict(res: dict) -> dict:
    """``match``, ``cycles_measured`` and ``passed`` from the testbench's observations, with the
    reasons a run fails (``failures``)."""
    measured = res["last_write"] if res.get("writes") else None
    match = (res.get("completed", False) and res["readback_mismatches"] == 0
             and res["output_mismatches"] == 0)
    why = []
    if not res.get("completed", False):
        why.append(res.get("abort", "the testbench did not complete"))
    if res.get("readback_mismatches"):
        why.append(f"{res['readback_mismatches']} configuration words read back differently "
                   f"(first: {res['readback_first'][0]})")
    if res.get("output_mismatches"):
        why.append(f"{res['output_mismatches']} output words differ "
                   f"(first: {res['output_first'][0]})")
    if measured != res["cycles_predicted"]:
        why.append(f"cycles measured {measured} != predicted {res['cycles_predicted']}")
    if res.get("writes") != res["output_writes"]:
        why.append(f"GLB writes {res.get('writes')} != {res['output_writes']} expected")
    if res.get("error"):
        why.append(f"ERROR register = {res['error']}")
    if res.get("stress_mismatches"):
        why.append(f"{res['stress_mismatches']} wrong responses to random traffic "
                   f"(first: {res['stress_first'][0]})")
    return {"match": bool(match), "cycles_measured": measured, "passed": not why,
            "failures": why}
