"""``make sim APP=... [ARCH=...]``: the main job (docs/simulation.md).

``--level array`` (the default): establish the golden first (``compiler.frontend.source.establish_golden``:
the interpreter must equal the app's ``reference()`` bit for bit, or real Halide for a
Halide-style program without one, on the app's inputs and on all-zero and all-maximum inputs;
the interpreter alone only when neither exists; a disagreement fails the run before anything is
compiled), then compile the application, place and route it on the arch, and make its bundle
(bitstream, GLB inputs, golden outputs, predicted cycles), all through the driver
(``compiler.pipeline.compile_app``, stages ``netlist``, ``pnr``, ``bundle``); generate the arch's
``cgra_top`` Verilog, build its Verilator model (cached by the Verilog's SHA-256), and run the
cocotb host testbench (``sim.tb.test_e2e``): configure over AXI4-Lite and read the
configuration back, load the inputs into the global buffer, run until DONE, read the
performance counters, read the outputs back. It passes when the output is bit-exact, the cycles
measured by the counters equal the compiler's prediction, the GLB write count is the
compiler's and ERROR is 0. Writes ``build/sim/<app>-<arch>.json`` (sizes that differ from the
app's defaults are appended to the name: ``<app>-<arch>-width24-height24.json``) with the
golden used (``golden: reference | halide | interpreter``), the app's file and its effective
sizes; ``WAVES=1`` also writes ``build/sim/<app>-<arch>.fst``.

``--level pub``: the PUB-level check (without place and route):

1. golden: the reference interpreter (``compiler.interp``) on the app's inputs (and on
   all-zero and all-maximum inputs) equals the app's independent numpy reference, bit for bit
   (an app file without a reference: real Halide when its Program came from the Halide-style
   DSL; ``compiler.frontend.source.establish_golden``, the same golden as the array level);
2. schedule: tree-height reduction of the kernels (``compiler.passes.tree_height``), the
   sequential baseline and the optimized schedule, both proven by the isl verifier; the
   interpreter running the balanced program (the one ``ubc schedule`` schedules and dumps) in
   the optimized schedule's order equals the golden output of the program as written;
3. buffer mapping: every unified buffer mapped to shift registers and PUB blocks, and every
   mapped buffer checked by the config-driven cycle model against its specification;
4. RTL: every single-tile PUB block's compiler-generated configuration loaded into the generated
   PUB Verilog (Verilator), whose output streams must equal the model's (``--no-rtl`` skips).

Exit status 0 when every check passes, 1 on a mismatch, 2 on bad input (unknown app, bad size,
an app that does not fit the arch or cannot be routed: one line naming the cause, no JSON).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from ubgen.paths import build_dir

BUILD_SIM = build_dir("sim")


class Failure(Exception):
    """A check did not pass."""


def step(msg: str, t0: float) -> None:
    print(f"[{time.perf_counter() - t0:7.1f} s] {msg}", flush=True)


def _equal(a: dict, b: dict, what: str) -> None:
    for name in b:
        if name not in a or not np.array_equal(np.asarray(a[name]).astype(np.int64),
                                               np.asarray(b[name]).astype(np.int64)):
            raise Failure(f"{what}: output '{name}' differs")


def run(app_name: str, arch_name: str, rtl: bool, seed: int,
        sizes: dict[str, int] | None = None) -> dict:
    from compiler.interp import run as interp
    from compiler.pipeline import compile_app
    from compiler.frontend.source import GoldenMismatch
    from compiler.mapping.registers import pack_register_files
    from compiler.mapping.pub_model import check_buffer

    t0 = time.perf_counter()
    result = compile_app(app_name, arch_name, sizes, seed=seed, until="frontend")
    arch, source, program = result.arch, result.source, result.program
    try:
        gold = result.establish_golden()
    except GoldenMismatch as e:
        raise Failure(str(e)) from None
    inputs, golden = result.inputs, gold.outputs
    step(f"{source.name}: {len(program.ops())} ops, inputs "
         f"{', '.join(f'{k}{list(v.shape)}' for k, v in inputs.items())}", t0)
    step(f"golden: {gold.describe()}", t0)

    # mapping may schedule again (compiler.pipeline.map_scheduled): the driver keeps its schedule
    result.run("map")
    res, impls, refused = result.scheduled, result.impls, result.refused
    summary = res.summary(source.name)
    step(f"schedule ({summary['policy']}): {summary['cycles_sequential']} cycles sequential -> "
         f"{summary['cycles_optimized']} optimized, verified by isl", t0)
    _equal(interp(res.program, inputs, order=res.optimized.time_fn()), golden,
           "interpreter in optimized-schedule order")
    step("interpreter (balanced kernels) in the optimized schedule's order == golden", t0)

    if refused:
        raise Failure("mapping refused: " + "; ".join(refused.values()))
    mems = sum(i.mems for i in impls.values())
    srs = [s for i in impls.values() for s in i.shift_registers if s.delay > 0]
    rf_words = sum(r.words for i in impls.values() for r in i.register_files)
    rf_tiles = sum(len(pack_register_files(i.register_files, arch.pub, arch.mem))
                   for i in impls.values())
    checked = 0
    for name, impl in impls.items():
        if not (impl.pubs or impl.shift_registers or impl.register_files or impl.selects):
            continue
        rep = check_buffer(res.buffers[name], impl, arch.pub, seed, arch.mem)
        if not rep.ok:
            raise Failure(f"model check: {rep.summary()}")
        checked += rep.checked
    step(f"mapping: {mems} MEMs, {len(srs)} shift registers ({sum(s.delay for s in srs)} "
         f"register stages)" + (f", {rf_words} register-file words in {rf_tiles} MEM tiles' "
                                f"register files" if rf_words else "")
         + f"; config-driven model matches the specification on {checked} reads", t0)

    if rtl:
        from sim.rtl_xcheck import run_xcheck
        n = run_xcheck(app_name, arch_name, sizes={app_name: sizes} if sizes else None)
        step(f"RTL: {n} PUB configuration(s) on the generated Verilog == model", t0)

    summary.update(mems=mems, shift_registers=len(srs), register_file_words=rf_words,
                   register_file_tiles=rf_tiles, golden=gold.kind)
    return summary


PUB_ARCH = "pub"                 # default arch of the PUB level


def run_array(app: str, arch_name: str, sizes: dict, seed: int, waves: bool | None = None,
              out_dir: Path | None = None, log=None, progress=True, energy: bool | str = False,
              sram_scale: float = 1.0, block: int | None = None) -> dict:
    """The array-level run (module docstring); returns the JSON record (also written to
    :func:`record_path`). The golden comes first (``compiler.frontend.source.establish_golden``): when the
    interpreter and the app's reference (or real Halide) disagree, the record says
    ``passed: false`` with the first differing word and nothing is compiled or simulated.
    Raises the compiler's and place and route's one-line errors (``ValueError``/``KeyError``
    subclasses) before anything is written. ``progress``: where the simulation's live progress
    goes (True: standard output; a stream; None: nowhere)."""
    from compiler.pipeline import compile_app, shipped_arrays
    from compiler.frontend.source import GoldenMismatch, effective_sizes
    from sim.array_run import model_for, run_bundle

    t0 = time.perf_counter()
    log = log or (lambda msg: print(msg, flush=True))
    say = lambda msg: log(f"[{time.perf_counter() - t0:7.1f} s] {msg}")
    # the golden needs no arch: establish it on the frontend alone, before compiling
    front = compile_app(app, arch_name or shipped_arrays()[0], sizes, until="frontend",
                        seed=seed)
    base = {"app": front.app, "arch": arch_name, "level": "array",
            "path": front.source.file, "sizes": effective_sizes(front.source), "seed": seed}
    try:
        golden = front.establish_golden()
    except GoldenMismatch as e:
        say(f"FAIL: {e}")
        base["arch"] = base["arch"] or "auto"        # no arch was chosen: nothing compiled
        record = dict(base, golden=e.kind, passed=False, match=False, failures=[str(e)])
        return _write_record(record, record_path(out_dir or BUILD_SIM, base["app"],
                                                 base["arch"], front.source))
    say(f"golden: {golden.describe()}")
    result, compile_seconds = _compile(app, arch_name, sizes, seed, say, block)
    if result.blocks is not None and energy:
        raise ValueError(f"{result.app}: --energy measures one configuration; a layer run as "
                         f"channel blocks has two")
    result.inputs, result.golden = front.inputs, golden
    base["arch"] = result.arch.name
    out = record_path(out_dir or BUILD_SIM, base["app"], base["arch"],
                      front.source if result.blocks is not None else result.source)
    pnr, bundle, pnr_seconds = _place_and_bundle(result, say)
    arrays = ({"inputs": front.inputs, "expected": golden.outputs}
              if result.tiling is not None else None)
    if result.blocks is not None:        # the first block starts from the bias as partial sums
        from compiler.tiling.blocks import first_carry
        arrays = {"inputs": dict(front.inputs, **first_carry(result.blocks, front.inputs)),
                  "expected": golden.outputs}
    stream = sys.stdout if progress is True else progress or None
    one_run = bool(energy) and energy != "gate" and result.tiling is None and not _waves(waves)
    if one_run:             # the event-counting run is the functional check as well
        res, model, e = _energy_run(bundle, result, sram_scale, say, stream)
    else:
        model = model_for(result.arch, _waves(waves), say)
        _say_build(model, say)
        res = run_bundle(bundle, result.arch, waves=_waves(waves), log=say, model=model,
                         arrays=arrays, progress=stream)
    record = _array_record(base, result, bundle, pnr, res, model,
                           compile_seconds=compile_seconds, pnr_seconds=pnr_seconds)
    outputs = res.get("outputs") or (golden.outputs if res["passed"] else {})
    record["images"] = write_images(out, front.inputs, outputs)
    if one_run:
        record["model_kind"] = "event-counting"
        if res["passed"]:
            record["energy"] = e
    elif energy and res["passed"]:
        _add_energy(record, bundle, result, sram_scale, say,
                    "gate" if energy == "gate" else "shortcut")
    return _write_record(record, out)


def _say_build(model: dict, say) -> None:
    if model["cached"]:
        say("Verilator build: 0 s (model cached)")
    else:
        say(f"Verilator build: {model['verilator_build_seconds']:.1f} s")


def _energy_run(bundle: dict, result, sram_scale: float, say, progress):
    """``make sim ... ENERGY=1``'s one run (docs/energy.md "Cost"): the bundle on the
    event-counting RTL model, through the same host testbench and verdict as the plain run
    (bit-exact outputs, measured == predicted cycles, GLB writes, ERROR), priced by the arch's
    characterisation; returns ``(result, model, energy)``."""
    from sim.energy.report import checked_energy_run
    say("energy: the bundle on the RTL with its toggles counted, which is also the functional "
        "check (docs/energy.md)")
    return checked_energy_run(bundle, result.arch, result.program, sram_scale, log=say,
                              progress=progress)


def _compile(app: str, arch_name: str | None, sizes: dict, seed: int, say,
             block: int | None = None):
    """The app compiled through its netlist (and placed and routed when no arch is named: the
    smallest shipped array it fits and routes on), tiled when it does not fit one run; a layer
    that declares channel blocks (docs/tiling.md) as runs of them when no output tile fits
    either, or when ``block`` (reduction channels per run) is given."""
    from compiler.pipeline import FitError, compile_fitting, compile_on_smallest
    from compiler.tiling.region import TilingError
    t = time.perf_counter()
    try:
        if block is not None:
            result = _compile_blocks(app, arch_name, sizes, seed, say, block)
        elif arch_name is None:
            result, choice = compile_on_smallest(app, sizes, until="pnr", seed=seed,
                                                 tile=True, log=say, overlap=True)
            say(choice.describe(result.app))
        else:
            result = compile_fitting(app, arch_name, sizes, until="netlist", seed=seed,
                                     log=say, overlap=True)
    except (FitError, TilingError) as e:
        if block is not None or not _declares_blocks(app, sizes):
            raise
        say(f"{str(e).splitlines()[0]}: trying channel blocks")
        result = _compile_blocks(app, arch_name, sizes, seed, say, None)
    rep = result.report
    seconds = time.perf_counter() - t
    say(f"compile: {rep['app']} on {rep['arch']}: {rep['pes']} PEs, {rep['mems']} MEMs, "
        f"{rep['ios']} IOs, {rep['registers']} register stages, {rep['cycles_predicted']} "
        f"cycles predicted ({seconds:.1f} s)")
    if result.blocks is not None:
        say(f"channel blocks: {result.blocks.runs} runs of {result.blocks.block} "
            f"{result.blocks.spec['size']}" + (f", each {result.tiling.runs} output tiles of "
                                               f"{list(result.tiling.shape)}"
                                               if result.tiling is not None else "")
            + f"; {rep['cycles_predicted']} cycles per run, {rep['cycles_total']} in all")
    elif result.tiling is not None:
        say(f"tiled: {result.runs} runs of an output tile {list(result.tiling.shape)} "
            f"({result.tiling.host_words()} host words per run), "
            f"{rep['cycles_predicted']} cycles per run, {rep['cycles_total']} in all")
    return result, seconds


def _declares_blocks(app: str, sizes: dict) -> bool:
    from compiler.frontend.source import load_app
    try:
        return hasattr(load_app(app, sizes).module, "CHANNEL_BLOCKS")
    except (KeyError, ValueError):
        return False


def _compile_blocks(app: str, arch_name: str | None, sizes: dict, seed: int, say,
                    block: int | None):
    """The layer as channel blocks (``compiler.pipeline.compile_channel_blocks``) on the named
    arch, or on the first shipped array they fit."""
    from compiler.frontend.source import load_app
    from compiler.pipeline import FitError, compile_channel_blocks, shipped_arrays
    from compiler.tiling.region import TilingError
    source = load_app(app, sizes)
    passed = []
    for name in [arch_name] if arch_name else shipped_arrays():
        try:
            return compile_channel_blocks(source, name, "netlist", log=say, block=block,
                                          seed=seed)
        except (FitError, TilingError) as e:
            if arch_name:
                raise
            passed.append(f"{name}: {str(e).splitlines()[0]}")
    raise TilingError(f"{source.name}: no shipped array runs its channel blocks ({passed[-1]})")


def _place_and_bundle(result, say):
    """Place and route ``result`` and make its bundle; returns ``(pnr, bundle, seconds)``."""
    t = time.perf_counter()
    pnr = result.run("pnr").pnr
    seconds = time.perf_counter() - t
    say(f"place: {pnr.place_seconds:.1f} s")
    say(f"route: {pnr.route_seconds:.1f} s (place and route {seconds:.1f} s); "
        f"bitstream check {pnr.check.summary()}")
    bundle = result.run("bundle").bundle
    if "blocks" in bundle:
        c = bundle["configs"]
        differ = sum(x != y for x, y in zip(c[0]["bitstream"], c[1]["bitstream"]))
        say(f"bundle: two configurations of {len(bundle['bitstream'])} words ({differ} differ: "
            f"the last block's drain), per run {sum(map(len, c[0]['input_map'].values()))} "
            f"input and {sum(map(len, c[0]['output_map'].values()))} output GLB words")
    elif result.tiling is not None:
        say(f"bundle: {len(bundle['bitstream'])} configuration words, per run "
            f"{sum(map(len, bundle['input_map'].values()))} input and "
            f"{sum(map(len, bundle['output_map'].values()))} output GLB words")
    else:
        say(f"bundle: {len(bundle['bitstream'])} configuration words, "
            f"{len(bundle['glb_inputs'])} input and {len(bundle['glb_outputs'])} output GLB "
            f"words")
    return pnr, bundle, seconds


def _array_record(base: dict, result, bundle: dict, pnr, res: dict, model: dict, *,
                  compile_seconds: float, pnr_seconds: float) -> dict:
    """The JSON record of an array-level run (``res``: :func:`sim.array_run.run_bundle`'s)."""
    golden, rep = result.golden, result.report
    record = dict(base, golden=golden.kind, golden_checked=list(golden.checked),
                  pes=rep["pes"], mems=rep["mems"], ios=rep["ios"],
                  registers=rep["registers"], bitstream_words=len(bundle["bitstream"]),
                  bitstream_check="pass" if pnr.check.ok else "fail",
                  cycles_predicted=bundle["cycles_predicted"],
                  cycles_measured=res["cycles_measured"], first_write=res.get("first_write"),
                  glb_writes=res.get("writes"), output_writes=bundle["output_writes"],
                  output_words=(sum(int(np.prod(np.shape(a))) for a in golden.outputs.values())
                                if "glb_outputs" not in bundle else len(bundle["glb_outputs"])),
                  error=res.get("error"),
                  match=res["match"], passed=res["passed"], failures=res["failures"],
                  compile_seconds=round(compile_seconds, 2),
                  pnr_seconds=round(pnr_seconds, 2),
                  verilog_seconds=round(model["verilog_seconds"], 2),
                  verilator_build_seconds=round(model["verilator_build_seconds"], 1),
                  sim_seconds=res["sim_seconds"], sim_cycles=res.get("sim_cycles"),
                  stages=res.get("stages", {}), model_sha256=model["sha256"])
    if result.blocks is not None:
        record.update(runs=result.runs, channel_blocks=result.blocks.runs,
                      block=result.blocks.block,
                      tile=list(result.tiling.shape) if result.tiling is not None else None,
                      cycles_per_run=bundle["cycles_predicted"],
                      cycles_total=result.runs * bundle["cycles_predicted"],
                      runs_measured=[t["last_write"] for t in res.get("tiles", [])])
    elif result.tiling is not None:
        record.update(runs=result.runs, tile=list(result.tiling.shape),
                      cycles_per_run=bundle["cycles_predicted"],
                      cycles_total=result.runs * bundle["cycles_predicted"],
                      runs_measured=[t["last_write"] for t in res.get("tiles", [])])
    if res.get("waves"):
        record["waves"] = res["waves"]
    return record


def _add_energy(record: dict, bundle: dict, result, sram_scale: float, say,
                method: str = "shortcut") -> None:
    """The same bundle once more, on the toggle-counting RTL model priced by the arch's
    characterisation (``method="shortcut"``: a tiled run or one with waves, whose functional
    run is the plain model's) or on the gate-level ``cgra_top`` (``"gate"``): its energy into
    ``record`` (docs/energy.md); a failed energy run fails the record."""
    from sim.energy.report import energy_record
    say("energy: the same bundle on the " + ("gate-level cgra_top" if method == "gate" else
                                             "RTL with its toggles counted") + " (docs/energy.md)")
    record["energy"] = e = energy_record(bundle, result.arch, result.program, sram_scale,
                                         log=say, method=method)
    if not e["passed"]:
        record["passed"] = False
        record["failures"] = record["failures"] + [f"gate-level run: {f}" for f in e["failures"]]


def write_images(record: Path, inputs: dict, outputs: dict) -> list[str]:
    """The image apps' inputs and outputs as PNG files next to the JSON record
    (``<record>.<buffer>.png``): 2-D buffers, or 3-D ones with 3 colour channels last; values
    scaled to 8 bits by the array's maximum when it exceeds 255. Returns the files written."""
    from PIL import Image
    files = []
    record.parent.mkdir(parents=True, exist_ok=True)
    for name, arr in list(inputs.items()) + list(outputs.items()):
        a = np.asarray(arr).astype(np.int64)
        if not (a.ndim == 2 or (a.ndim == 3 and a.shape[2] == 3)) or min(a.shape[:2]) < 2:
            continue
        a = np.clip(a, 0, None)
        top = int(a.max()) if a.size else 0
        if top > 255:
            a = a * 255 // top
        img = Image.fromarray(np.ascontiguousarray(np.swapaxes(a, 0, 1)).astype(np.uint8))
        path = record.with_name(f"{record.stem}.{name}.png")
        img.save(path)
        files.append(str(path))
    return files


def record_path(out_dir: Path, app: str, arch: str, source) -> Path:
    """``<out_dir>/<app>-<arch>.json``, with the sizes that differ from the app's defaults
    appended (``gaussian-cgra_8x8-width24-height24.json``), so runs at different sizes keep
    their own records."""
    from compiler.frontend.source import effective_sizes
    defaults = effective_sizes(type(source)(source.name, source.program, source.module, {}))
    given = [f"{k}{v}" for k, v in source.sizes.items() if defaults.get(k) != v]
    return out_dir / ("-".join([app, arch] + given) + ".json")


def _write_record(record: dict, path: Path) -> dict:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1))
    tmp.replace(path)
    record["json"] = str(path)
    return record


def _waves(waves: bool | None) -> bool:
    import os
    return waves if waves is not None else os.environ.get("WAVES", "0") not in ("", "0")


def _one_line(e: BaseException) -> str:
    text = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
    return text.splitlines()[0] if text else type(e).__name__


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The command line of ``make sim`` / ``ubc sim`` (docs/cli.md)."""
    ap.add_argument("app", metavar="APP",
                    help="application name (apps/), a Python app file (docs/apps.md) or a "
                         "Program JSON file")
    ap.add_argument("--arch", default=None,
                    help="ubgen/constraints/arch name or path (default: the smallest shipped "
                         "array APP fits and routes on, named in the output; "
                         f"{PUB_ARCH} for --level pub, which works on single PUBs)")
    ap.add_argument("--size", action="append", default=[], metavar="NAME=INT",
                    help="an application size parameter (repeatable), e.g. width=16")
    ap.add_argument("--level", choices=["array", "pub"], default="array",
                    help="array: end to end on cgra_top in Verilator (default); pub: the "
                         "PUB-level check")
    ap.add_argument("--no-rtl", action="store_true",
                    help="--level pub: skip the Verilator cross-check")
    ap.add_argument("--seed", type=int, default=0,
                    help="input generator seed (and the placer's seed)")
    ap.add_argument("--block", type=int, default=None, metavar="N",
                    help="--level array: run a layer that declares channel blocks as runs of "
                         "N reduction channels (default: only when no output tile fits; "
                         "docs/tiling.md)")
    ap.add_argument("--waves", action="store_true",
                    help="--level array: write an FST waveform (as WAVES=1)")
    from sim.energy.report import HELP as ENERGY_HELP
    ap.add_argument("--energy", nargs="?", const="shortcut", choices=["shortcut", "gate"],
                    default=None, help="--level array: " + ENERGY_HELP)
    ap.add_argument("--sram-scale", type=float, default=1.0, metavar="X",
                    help="--energy: multiply every SRAM macro's access energy by X (the "
                         "sensitivity of docs/energy.md; default 1)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="ubc sim", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    add_arguments(ap)
    from compiler.frontend.source import warnings_once
    with warnings_once("sim"):
        return run_from_args(ap.parse_args(argv))


def run_from_args(args) -> int:
    if args.energy and args.level != "array":
        print("sim: error: --energy measures a run on the array (--level array)",
              file=sys.stderr)
        return 2
    if args.energy:                  # the assumptions first: no RTL run before a bad one
        from sim.energy.gates import EnergyError
        from sim.energy.model import load_tech
        try:
            if not args.sram_scale > 0:
                raise EnergyError(f"--sram-scale must be positive (got {args.sram_scale})")
            load_tech()
        except EnergyError as e:
            print(f"sim: error: {_one_line(e)}", file=sys.stderr)
            return 2
    if args.level == "array":
        return main_array(args)
    try:
        from compiler.frontend.source import parse_sizes
        s = run(args.app, args.arch or PUB_ARCH, not args.no_rtl, args.seed,
                parse_sizes(args.size))
    except Failure as e:
        print(f"sim: FAIL: {e}", file=sys.stderr)
        return 1
    except (KeyError, ValueError) as e:        # unknown app, bad arch, mapping errors
        print(f"sim: error: {_one_line(e)}", file=sys.stderr)
        return 2
    from compiler.figures import PAPER_VI
    paper = PAPER_VI.get(s['app'])
    ref = f" (paper Table VI: {paper[0]} -> {paper[1]})" if paper else ""
    print(f"\n{s['app']}: PASS  golden: {s['golden']}; cycles {s['cycles_sequential']} -> {s['cycles_optimized']}{ref}; "
          f"SRAM words {s['sram_words_sequential']} -> {s['sram_words_optimized']}; "
          f"MEMs {s['mems']}; shift registers {s['shift_registers']}"
          + (f"; register-file words {s['register_file_words']} in "
             f"{s['register_file_tiles']} MEM tiles" if s.get("register_file_words") else ""))
    return 0


def main_array(args) -> int:
    from compiler.frontend.source import parse_sizes
    from sim.array_run import RunError
    try:
        sizes = parse_sizes(args.size)
        rec = run_array(args.app, args.arch, sizes, args.seed, True if args.waves else None,
                        energy=args.energy, sram_scale=args.sram_scale, block=args.block)
    except RunError as e:
        print(f"sim: error: {_one_line(e)}", file=sys.stderr)
        return 1
    except (KeyError, ValueError) as e:        # unknown app, misfit, unroutable, bad size
        print(f"sim: error: {_one_line(e)}", file=sys.stderr)
        return 2
    verdict = "PASS" if rec["passed"] else "FAIL"
    tiled = (f"; {rec['runs']} runs of tile {rec['tile']}: {rec['cycles_per_run']} cycles per "
             f"run, {rec['cycles_total']} in all" if rec.get("runs") else "")
    if rec.get("channel_blocks"):
        tiled = (f"; {rec['channel_blocks']} channel blocks of {rec['block']}, {rec['runs']} "
                 f"runs: {rec['cycles_per_run']} cycles per run, {rec['cycles_total']} in all")
    if "cycles_measured" not in rec:              # the golden failed: nothing was simulated
        print(f"\n{rec['app']} on {rec['arch']}: FAIL  {rec['failures'][0]} -> {rec['json']}")
        return 1
    print(f"\n{rec['app']} on {rec['arch']}: {verdict}  golden: {rec['golden']}; "
          f"{'bit-exact' if rec['match'] else 'MISMATCH'} ({rec['output_words']} words); "
          f"cycles measured {rec['cycles_measured']} / predicted {rec['cycles_predicted']}"
          f"{tiled}; "
          f"{rec['glb_writes']} GLB writes; ERROR {rec['error']}; {rec['pes']} PEs, "
          f"{rec['mems']} MEMs, {rec['ios']} IOs; compile {rec['compile_seconds']:.1f} s, "
          f"pnr {rec['pnr_seconds']:.1f} s, Verilator build {rec['verilator_build_seconds']:.0f} s, "
          f"sim {rec['sim_seconds']:.1f} s -> {rec['json']}")
    if rec.get("energy"):
        e = rec["energy"]
        cats = ", ".join(f"{k} {v / e['output_pixels']:.2f}" for k, v in
                         e["categories_pj"].items())
        print(f"energy: {e['total_pj'] / 1e3:.1f} nJ in {e['window_cycles']} cycles, "
              f"{e['pj_per_pixel']} pJ per output pixel ({cats}), {e['pj_per_op']} pJ per "
              f"operation ({e['technology']}; {e.get('method', 'gate')}); the energy run took "
              f"{e['energy_seconds']:.0f} s")
    for why in rec["failures"]:
        print(f"sim: FAIL: {why}", file=sys.stderr)
    return 0 if rec["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
