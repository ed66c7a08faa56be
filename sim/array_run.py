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

import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .bundle import validate_bundle
from .progress import ProgressTail
from .runner import (BUILD, VERILATOR_ARGS, cocotb_env, fst_build_args, hier_block_args,
                     locked, setup_verilator)
from ubgen.paths import shown

__all__ = ["run_bundle", "run_test_module", "model_for", "generate_verilog", "ModelOptions", "E2E_BUILD",
           "RunError"]

E2E_BUILD = BUILD / "e2e"
TEST_MODULE = "sim.tb.test_e2e"


class RunError(RuntimeError):
    """The simulation could not run (build failure, crash, no result): one line."""


def _arch(arch):
    from ubgen.arch import Arch, load_arch
    return arch if isinstance(arch, Arch) else load_arch(arch)


def generate_verilog(arch) -> tuple[Path, str, float]:
    """``arch``'s ``cgra_top`` Verilog from the Verilog cache (:func:`ubgen.top.cached_verilog`,
    generated on a miss); returns (directory, SHA-256 of its files, seconds spent generating: 0
    on a hit). The cache's key is a digest of the generator's source, the arch and the tool
    versions, so a warm run does not elaborate the array to find out whether it changed; the
    model is keyed by the files' content, so an edit of the generator that leaves the Verilog
    as it was regenerates the text once and keeps the model."""
    from ubgen.top import cached_verilog
    entry = cached_verilog(_arch(arch))
    return entry.dir, entry.content_digest(), entry.seconds


@dataclass(frozen=True)
class ModelOptions:
    """How the Verilator model of ``cgra_top`` is built (docs/simulation.md "Speed";
    ``bench/sim_speed.py`` compares them). The defaults measured as fast as Verilator's own
    optimisation levels and as ``--x-assign/--x-initial unique`` per CPU second, and far faster
    than two threads on two shared cores; a flat cgra_8x8 model takes over an hour to build
    here. With the tiles' wrappers rewritten (``hier_memo``, ``hier_fall_skip``,
    ``hier_rise_no_ico``) the model simulates 3.2 (cgra_8x8) and 3.3 (cgra_16x32) times as many
    cycles per CPU second as with Verilator's own.

    ``hierarchical``: the tile modules as hierarchical blocks (docs/array.md "Verilator"; a
    flat model of a large array does not build); ``verilator_opt``: Verilator's own
    optimisation level; ``opt_fast`` / ``opt_slow`` / ``opt_global``: the C++ compiler's flags
    for the model's evaluation code, its construction code and Verilator's run-time library
    (make's ``OPT_FAST``, ``OPT_SLOW``, ``OPT_GLOBAL``); ``threads``: Verilator's
    ``--threads``; ``x_assign`` / ``x_initial``: what X and uninitialised variables become;
    ``public``: ``"top"`` (only the top module's signals visible to cocotb) or ``"all"``
    (cocotb's default, ``--public-flat-rw``); ``coverage``: Verilator's toggle coverage (the
    energy shortcut's event counts, :mod:`sim.energy.events`); ``hier_memo``: the
    hierarchical blocks' wrappers evaluate a block only when one of its inputs changed, and
    with ``hier_fall_skip`` not on the clock's falling edge either when the block uses only
    its rising edge, and with ``hier_rise_no_ico`` without the block's input-combinational
    region on a rising edge (:mod:`sim.hier_memo`).

    Against C++ functions too large to compile (the C++ compiler's time grows faster than a
    function's size): ``split_cfuncs``, Verilator's ``--output-split-cfuncs`` (0: Verilator's
    default, 20000 AST nodes; it counts the nodes when it orders the logic, before wide
    expressions are expanded, so the event-counting model of cgra_16x32,
    :mod:`sim.energy.shortcut`, got the counters of all its tile wrappers in one 118k-line
    function, a 10.9 MB file that ``-O2`` did not compile in 23 minutes: docs/energy.md
    "Cost"); ``big_file_bytes`` / ``opt_big``: every evaluation-code file of more than
    ``big_file_bytes`` bytes Verilator still writes is compiled at ``opt_big`` instead of
    ``opt_fast`` (0 / ``""``: none; :func:`oversized_files`)."""
    hierarchical: bool = True
    verilator_opt: str = "-O3"
    opt_fast: str = "-O2"
    opt_slow: str = "-O1"
    opt_global: str = "-O2"
    threads: int = 1
    x_assign: str = "fast"
    x_initial: str = "fast"
    public: str = "top"
    coverage: bool = False
    hier_memo: bool = True
    hier_fall_skip: bool = True
    hier_rise_no_ico: bool = True
    split_cfuncs: int = 0
    big_file_bytes: int = 0
    opt_big: str = ""

    def __post_init__(self):
        if bool(self.big_file_bytes) != bool(self.opt_big) or self.big_file_bytes < 0:
            raise ValueError("big_file_bytes and opt_big go together (a size in bytes and the "
                             "C++ compiler's optimisation flag for files larger than it)")
        if self.split_cfuncs < 0:
            raise ValueError("split_cfuncs is a number of AST nodes (0: Verilator's default)")
        if self.hier_rise_no_ico and not self.hier_fall_skip:
            raise ValueError("hier_rise_no_ico needs hier_fall_skip")
        if self.hier_fall_skip and not self.hier_memo:
            raise ValueError("hier_fall_skip needs hier_memo (the skip relies on every input "
                             "change having been evaluated)")
        if self.coverage and self.hier_memo:
            raise ValueError("toggle coverage counts what each evaluation changes: with "
                             "hier_memo a skipped falling edge loses the clock's toggles")

    def verilator_args(self) -> list[str]:
        args = [a for a in VERILATOR_ARGS if a.startswith("-W")]        # the warnings
        args += [self.verilator_opt, "--x-assign", self.x_assign, "--x-initial", self.x_initial]
        if self.threads > 1:
            args += ["--threads", str(self.threads)]
        if self.public == "all":
            args += ["--public-flat-rw"]
        if self.coverage:
            args += ["--coverage-toggle", "--coverage-max-width", "64"]
        if self.split_cfuncs:
            args += ["--output-split-cfuncs", str(self.split_cfuncs)]
        return args

    def make_args(self) -> list[str]:
        return [f"OPT_FAST={self.opt_fast}", f"OPT_SLOW={self.opt_slow}",
                f"OPT_GLOBAL={self.opt_global}"]

    def describe(self) -> str:
        d = ModelOptions()
        diff = [f"{k}={v}" for k, v in asdict(self).items() if getattr(d, k) != v]
        return ", ".join(diff) or "default"


# What the build below makes (part of each model's key): VPI access to the top module's signals
# (or all of them, ``public="all"``), cocotb's main.
FLAVOUR = "vpi-cocotb-2"


# Options added after models were cached: part of the key only when on, so the models built
# without them (the energy shortcut's, the gate-level ones) keep their keys.
_KEYED_WHEN_ON = ("hier_memo", "hier_fall_skip", "hier_rise_no_ico", "split_cfuncs",
                  "big_file_bytes", "opt_big")


def model_key(verilog_key: str, options: ModelOptions, waves: bool) -> str:
    """The model's cache key: the Verilog's content digest, the build options (with the
    wrapper rewrite's source when it is on), the Verilator version and the cocotb library it
    links."""
    from importlib import metadata
    opts = {k: v for k, v in asdict(options).items() if k not in _KEYED_WHEN_ON or v}
    if options.hier_memo:               # the rewrite's own source: an edit of it rebuilds
        opts["hier_memo_source"] = hashlib.sha256(
            (Path(__file__).parent / "hier_memo.py").read_bytes()).hexdigest()
    parts = {"verilog": verilog_key, "options": opts, "waves": waves,
             "flavour": FLAVOUR, "verilator": metadata.version("verilator"),
             "cocotb": metadata.version("cocotb")}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


OVERSIZED_MK = "ubgen_oversized.mk"


def _fast_classes(text: str) -> list[str]:
    """The evaluation-code classes (``VM_CLASSES_FAST``) a Verilated ``*_classes.mk`` lists."""
    names, listing = [], False
    for line in text.splitlines():
        if line.startswith("VM_CLASSES_FAST"):
            listing = True
        elif listing:
            name = line.strip().rstrip("\\").strip()
            if not name:
                listing = False
            else:
                names.append(name)
    return names


def oversized_files(build_dir: Path, limit: int) -> list[Path]:
    """The evaluation-code C++ files (``OPT_FAST``) of the Verilated model in ``build_dir``
    and of its hierarchical blocks (their folders) larger than ``limit`` bytes."""
    out = []
    for classes in [*sorted(build_dir.glob("*_classes.mk")),
                    *sorted(build_dir.glob("*/*_classes.mk"))]:
        for name in _fast_classes(classes.read_text()):
            f = classes.parent / f"{name}.cpp"
            if f.exists() and f.stat().st_size > limit:
                out.append(f)
    return out


def oversized_rules(files: list[Path], opt: str) -> str:
    """A makefile that compiles each of ``files`` at ``opt`` (target-specific ``OPT_FAST``,
    ``override`` since the build sets ``OPT_FAST`` on make's command line) and with Verilator's
    textual precompiled header (``VK_PCH_H``): the compiled one was made at ``OPT_FAST`` and
    GCC refuses it at another level that changes ``__OPTIMIZE__``. Read by every make of the
    build through ``MAKEFILES``, the hierarchical blocks' included (their object names differ)."""
    lines = ["# files over the size limit (sim/array_run.py oversized_files)"]
    for f in files:
        obj = f.with_suffix(".o").name
        lines += [f"{obj}: override OPT_FAST = {opt}",
                  f"{obj}: override VK_PCH_I_FAST = $(CFG_CXXFLAGS_PCH_I) $(VK_PCH_H)"]
    return "\n".join(lines) + "\n"


def _verilate(build_dir: Path, rtl: Path, arch, waves: bool, options: ModelOptions) -> list[str]:
    """cocotb's Verilator build (the commands of ``cocotb_tools.runner.Verilator``: VPI, the
    cocotb VPI library, cocotb's ``verilator.cpp`` main) with two differences: only the top
    module's signals are public (a Verilator configuration file), where cocotb's runner makes
    every signal of the design public (``--public-flat-rw``) — the testbench touches the top's
    ports only, and keeping the tiles' signals private lets Verilator optimise them; and the
    tile modules are hierarchical blocks. ``options`` (:class:`ModelOptions`) sets the rest.
    Returns the files compiled at ``options.opt_big`` (:func:`oversized_files`), relative to
    ``build_dir``."""
    import subprocess
    import cocotb_tools.config as cocotb_config
    from ubgen.array import KINDS, tile_module
    from ubgen.top import top_module, verilog_sources
    top = top_module(arch)
    blocks = [tile_module(k) for k in KINDS] if options.hierarchical else []
    hier_sources, hier_args = hier_block_args(build_dir, blocks)
    vlt = build_dir / "public_top.vlt"
    vlt.write_text(f'`verilator_config\npublic_flat_rw -module "{top}" -var "*"\n')
    libs = cocotb_config.libs_dir
    cmd = ["verilator", "-cc", "--exe", "-Mdir", str(build_dir), "--top-module", top, "--vpi",
           "--prefix", "Vtop", "-o", top,
           "-LDFLAGS", f"-Wl,-rpath,{libs} -L{libs} -lcocotbvpi_verilator",
           *options.verilator_args(), *hier_args, *(fst_build_args() if waves else []),
           "--timescale", "1ns/1ps",
           str(cocotb_config.share_dir / "lib" / "verilator" / "verilator.cpp"), str(vlt),
           *map(str, hier_sources + verilog_sources(rtl, arch))]
    make = ["make", "-j", "2", "-C", str(build_dir), "-f", "Vtop.mk", f"VM_TRACE={int(waves)}",
            *options.make_args()]
    env, big = None, []
    with open(build_dir / "build.log", "w") as log:
        for c in (cmd, make):
            if c is make and options.hier_memo and blocks:
                from .hier_memo import memoise_build
                memoise_build(build_dir, blocks, falling=options.hier_fall_skip,
                              rise_ico=options.hier_rise_no_ico)
            if c is make and options.big_file_bytes:
                big = oversized_files(build_dir, options.big_file_bytes)
                (build_dir / OVERSIZED_MK).write_text(oversized_rules(big, options.opt_big))
                env = dict(os.environ, MAKEFILES=str((build_dir / OVERSIZED_MK).resolve()))
                log.write(f"ubgen: at {options.opt_big}: "
                          f"{' '.join(str(f.relative_to(build_dir)) for f in big) or 'none'}\n")
                log.flush()
            if subprocess.run(c, cwd=build_dir, stdout=log, stderr=subprocess.STDOUT,
                              env=env).returncode:
                raise RunError(f"Verilator build failed ({c[0]}); see {build_dir}/build.log")
    return [str(f.relative_to(build_dir)) for f in big]


def _children_cpu() -> float:
    """CPU seconds of the finished child processes (a build's Verilator, make and compilers)."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def model_for(arch, waves: bool = False, log=None, options: ModelOptions | None = None) -> dict:
    """The Verilator model of ``arch``'s ``cgra_top``, built if no model of that Verilog with
    those ``options`` exists. Returns ``{"build_dir", "rtl", "sha256" (the model's key), "top",
    "address_map", "verilog_seconds", "verilator_build_seconds", "cached", "options"}``."""
    from ubgen.top import top_module
    arch = _arch(arch)
    options = options or ModelOptions()
    say = log or (lambda msg: None)
    rtl, vkey, vsec = generate_verilog(arch)
    say(f"Verilog: {arch.name}, sha256 {vkey[:16]} "
        + (f"(generated in {vsec:.1f} s)" if vsec else "(cached)"))
    key = model_key(vkey, options, waves)
    top = top_module(arch)
    build_dir = E2E_BUILD / f"{arch.name}-{key[:16]}{'-waves' if waves else ''}"
    stamp = build_dir / "model.json"
    with locked(E2E_BUILD / f".{build_dir.name}.lock"):
        cached = (stamp.exists() and (build_dir / top).exists()
                  and json.loads(stamp.read_text()).get("key") == key)
        seconds = 0.0
        if not cached:
            say(f"Verilator build: {shown(build_dir)} (cold, minutes; "
                f"options: {options.describe()})")
            t, cpu = time.perf_counter(), _children_cpu()
            setup_verilator()
            if build_dir.exists():
                shutil.rmtree(build_dir)
            build_dir.mkdir(parents=True)
            try:
                _verilate(build_dir, rtl, arch, waves, options)
            except RunError:
                raise
            except RuntimeError as e:       # fst_build_args: no LZ4 library
                raise RunError(f"Verilator build failed ({e})") from None
            seconds = time.perf_counter() - t
            stamp.write_text(json.dumps({"key": key, "verilog_sha256": vkey, "arch": arch.name,
                                         "waves": waves, "options": asdict(options),
                                         "seconds": round(seconds, 1),
                                         "cpu_seconds": round(_children_cpu() - cpu, 1)}))
        else:
            say(f"Verilator build: cached ({build_dir.name})")
    amap = json.loads((rtl / f"{top}.json").read_text())
    return {"build_dir": build_dir, "rtl": rtl, "sha256": key, "top": top,
            "address_map": amap, "verilog_seconds": vsec,
            "verilator_build_seconds": seconds, "cached": cached, "options": options}


def _waves_default() -> bool:
    return os.environ.get("WAVES", "0") not in ("", "0")


def run_bundle(bundle: dict, arch, *, waves: bool | None = None, log=None,
               model: dict | None = None, keep: bool | None = None,
               stress: int | None = None, plan_patch: dict | None = None,
               arrays: dict | None = None, progress=None) -> dict:
    """Run ``bundle`` (``compiler.backend.bundle.make_bundle``) on ``arch``'s ``cgra_top``
    (module docstring). ``model``: a :func:`model_for` result to reuse. ``keep``: keep the run
    directory (``build/sim/e2e/runs/...``: job, result, simulator log) always (True), never
    (False) or when the run fails (None). ``stress``: a seed
    for the reliability run (random AXI-Lite traffic woven into the host's steps,
    :mod:`sim.tb.test_e2e`; its wrong responses count as failures). ``plan_patch``: for
    negative controls only, a deliberately wrong host view (``{"tile_span_extra": n}``: the
    host believes every tile answers ``n`` more offsets). ``progress``: a text stream to show
    the live progress of configure, load, run and read back on (:mod:`sim.progress`; None:
    none). Returns the testbench's
    observations and the verdict: ``passed``, ``match``, ``cycles_predicted``,
    ``cycles_measured``, ``first_write``, ``writes``, ``output_writes``, ``error``,
    ``readback_mismatches``, ``output_mismatches`` (count and the first few), ``sim_seconds``,
    ``sim_cycles`` (clock cycles the simulation ran), ``verilator_build_seconds``,
    ``verilog_seconds``, ``stages`` (seconds of configure, load, run, read back).

    A tiled bundle (``compiler.backend.bundle.make_tiled_bundle``) needs ``arrays``:
    ``{"inputs": {buffer: whole array}, "expected": {buffer: whole golden output}}``; the
    testbench runs every tile (:mod:`sim.tb.tiled`) and the result also has ``tiles`` (every
    run's counters) and ``outputs`` (the stitched whole outputs, as arrays)."""
    waves = _waves_default() if waves is None else waves
    say = log or (lambda msg: None)
    arch = _arch(arch)
    if model is None:
        model = model_for(arch, waves, log)
    run_dir, job = _prepare_job(bundle, arch, model, stress, plan_patch, arrays)
    result_path = run_dir / "result.json"
    fst = BUILD / f"{bundle['app']}-{arch.name}.fst"
    if "blocks" in bundle:
        say(f"simulate: {len(bundle['bitstream'])} configuration words, "
            f"{bundle['blocks']['runs']} channel blocks x "
            f"{len(bundle['configs'][0]['tiling']['tiles'])} runs of "
            f"{bundle['cycles_predicted']} cycles predicted")
    elif "tiling" in bundle:
        say(f"simulate: {len(bundle['bitstream'])} configuration words, "
            f"{len(bundle['tiling']['tiles'])} runs of {bundle['cycles_predicted']} cycles "
            f"predicted")
    else:
        say(f"simulate: {len(bundle['bitstream'])} configuration words, "
            f"{len(bundle['glb_inputs'])} input words, {len(bundle['glb_outputs'])} output "
            f"words, {bundle['cycles_predicted']} cycles predicted")
    sim_seconds = _run_testbench(run_dir, model, waves, fst, progress)
    res = json.loads(result_path.read_text())
    for line in res.get("log", []):
        say(line)
    if "arrays" in job and res.get("completed"):
        import numpy as np
        res["outputs"] = {b: np.load(p) for b, p in job["arrays"]["outputs"].items()}
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


def _prepare_job(bundle: dict, arch, model: dict, stress, plan_patch,
                 arrays) -> tuple[Path, dict]:
    """A fresh run directory with the testbench's ``job.json`` (the bundle, the host's view of
    the address map, the reliability seed, a tiled job's whole arrays)."""
    validate_bundle(bundle, model["address_map"])
    from .bundle import host_plan
    runs = E2E_BUILD / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    run_dir = Path(tempfile.mkdtemp(dir=runs, prefix=f"{bundle['app']}-{arch.name}-"))
    plan = host_plan(model["address_map"])
    extra = (plan_patch or {}).get("tile_span_extra", 0)
    plan["tile_spans"] = {k: v + extra for k, v in plan["tile_spans"].items()}
    job = {"bundle": bundle, "plan": plan, "stress": stress}
    if "blocks" in bundle:
        job["arrays"] = _save_arrays(run_dir, arrays or {}, [bundle["blocks"]["output"]])
    elif "tiling" in bundle:
        job["arrays"] = _save_arrays(run_dir, arrays or {}, bundle["tiling"]["outputs"])
    (run_dir / "job.json").write_text(json.dumps(job))
    return run_dir, job


def _run_testbench(run_dir: Path, model: dict, waves: bool, fst: Path, progress) -> float:
    """The cocotb testbench on the cached model in ``run_dir`` (live progress on ``progress``);
    returns its wall seconds. Raises :class:`RunError` when it did not run."""
    setup_verilator()
    from cocotb_tools.runner import get_runner
    result_path = run_dir / "result.json"
    env = cocotb_env({"UBGEN_E2E_JOB": str(run_dir / "job.json"),
                      "UBGEN_E2E_RESULT": str(result_path),
                      "UBGEN_E2E_PROGRESS": str(run_dir / "progress.jsonl")})
    t = time.perf_counter()
    runner = get_runner("verilator")
    tail = ProgressTail(run_dir / "progress.jsonl", progress) if progress else None
    if tail:
        tail.start()
    try:
        runner.test(test_module=TEST_MODULE, hdl_toplevel=model["top"], hdl_toplevel_lang="verilog",
                    build_dir=model["build_dir"], test_dir=run_dir, extra_env=env,
                    waves=waves, test_args=(["--trace-file", str(fst)] if waves else []),
                    log_file=run_dir / "sim.log")
    except SystemExit as e:          # the runner exits when the cocotb test failed
        if not result_path.exists():
            raise RunError(f"simulation failed to run ({e}); see {run_dir}/sim.log") from None
    finally:
        if tail:
            tail.stop()
    seconds = time.perf_counter() - t
    if not result_path.exists():
        raise RunError(f"the testbench wrote no result; see {run_dir}/sim.log")
    return seconds


def run_test_module(model: dict, test_module: str, test_dir: Path,
                    extra_env: dict[str, str] | None = None) -> None:
    """Every cocotb test of ``test_module`` on a :func:`model_for` model, run in ``test_dir``
    (its log ``sim.log``): other testbenches of ``cgra_top`` share the end-to-end runs' model
    instead of building their own. Raises ``AssertionError`` if a test failed or none ran."""
    setup_verilator()
    from cocotb_tools.check_results import get_results
    from cocotb_tools.runner import get_runner
    test_dir.mkdir(parents=True, exist_ok=True)
    where = f"see {test_dir / 'sim.log'}"
    try:
        results = get_runner("verilator").test(
            test_module=test_module, hdl_toplevel=model["top"], hdl_toplevel_lang="verilog",
            build_dir=model["build_dir"], test_dir=test_dir, extra_env=cocotb_env(extra_env),
            log_file=test_dir / "sim.log")
    except SystemExit as e:          # the runner exits when a cocotb test failed
        raise AssertionError(f"{test_module}: cocotb tests failed (exit {e.code}); {where}") \
            from None
    total, failed = get_results(results)
    if total == 0 or failed:
        raise AssertionError(f"{test_module}: {failed} of {total} cocotb tests failed; {where}")


def _save_arrays(run_dir: Path, arrays: dict, outputs: list[str]) -> dict:
    """The whole arrays of a tiled job as ``.npy`` files in the run directory, and where the
    testbench saves the stitched outputs."""
    import numpy as np
    from .bundle import BundleError
    missing = [k for k in ("inputs", "expected") if k not in arrays]
    if missing:
        raise BundleError(f"a tiled bundle needs the whole arrays ({', '.join(missing)})")
    out = {"inputs": {}, "expected": {}, "outputs": {}}
    for kind in ("inputs", "expected"):
        for b, a in arrays[kind].items():
            path = run_dir / f"{kind}-{b}.npy"
            np.save(path, np.asarray(a))
            out[kind][b] = str(path)
    for b in outputs:
        out["outputs"][b] = str(run_dir / f"stitched-{b}.npy")
    return out


def verdict(res: dict) -> dict:
    """``match``, ``cycles_measured`` and ``passed`` from the testbench's observations, with the
    reasons a run fails (``failures``)."""
    if "tiles" in res:                  # a tiled run: every run's counters (sim.tb.tiled)
        tiles = res["tiles"]
        res.update(last_write=max((t["last_write"] for t in tiles), default=None),
                   first_write=min((t["first_write"] for t in tiles), default=None),
                   writes=tiles[0]["writes"] if tiles else None,
                   error=max((t["error"] for t in tiles), default=None))
        off = [k for k, t in enumerate(tiles) if t["last_write"] != res["cycles_predicted"]
               or t["writes"] != res["output_writes"] or t["error"]]
        if off:
            k = off[0]
            res.setdefault("abort_tiles", f"{len(off)} of {len(tiles)} runs differ from the "
                                          f"prediction (first: run {k}: {tiles[k]})")
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
    if res.get("abort_tiles"):
        why.append(res["abort_tiles"])
    if res.get("stress_mismatches"):
        why.append(f"{res['stress_mismatches']} wrong responses to random traffic "
                   f"(first: {res['stress_first'][0]})")
    return {"match": bool(match), "cycles_measured": measured, "passed": not why,
            "failures": why}
