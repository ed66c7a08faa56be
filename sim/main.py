"""``make sim APP=...``: the main job.

Compiles an application and checks every level the toolchain has, printing progress:

1. golden: the reference interpreter (``compiler.interp``) on the app's inputs equals the app's
   independent numpy reference, bit for bit (an app file without a reference: real Halide when
   its Program came from the Halide-style DSL; ``compiler.source.golden``);
2. schedule: tree-height reduction of the kernels (``compiler.passes.tree_height``), the
   sequential baseline and the optimized schedule, both proven by the isl verifier; the
   interpreter running the balanced program (the one ``ubc schedule`` schedules and dumps) in
   the optimized schedule's order equals the golden output of the program as written;
3. buffer mapping: every unified buffer mapped to shift registers and PUB blocks, and every
   mapped buffer checked by the config-driven cycle model against its specification;
4. RTL: every single-tile PUB block's compiler-generated configuration loaded into the generated
   PUB Verilog (Verilator), whose output streams must equal the model's (``--no-rtl`` skips).

Exit status 0 when every check passes, 1 on a mismatch, 2 on bad input.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

# Table VI of the paper (completion cycles, sequential -> optimized), docs/design.md §7.
PAPER_CYCLES = {"gaussian": (27159, 4102), "harris": (92227, 4120), "upsample": (53247, 16387),
                "unsharp": (49279, 4119), "camera": (92013, 4122), "resnet": (44876, 15614),
                "mobilenet": (22463, 1026)}


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
    from compiler.pipeline import map_scheduled
    from compiler.source import app_inputs, golden as app_golden, load_app
    from compiler.mapping.registers import pack_register_files
    from compiler.model import check_buffer
    from compiler.ir.hw import HwParams
    from compiler.schedule.report import schedule_program
    from ubgen.arch import load_arch

    t0 = time.perf_counter()
    arch = load_arch(arch_name)
    source = load_app(app_name, sizes)
    program = source.program
    inputs = app_inputs(source, seed)
    step(f"{source.name}: {len(program.ops())} ops, inputs "
         f"{', '.join(f'{k}{list(v.shape)}' for k, v in inputs.items())}", t0)

    try:
        golden, how = app_golden(source, inputs)
    except AssertionError as e:
        raise Failure(str(e)) from None
    step(f"golden: {how}", t0)

    # mapping may schedule again (compiler.pipeline.map_scheduled): take its schedule
    res, impls, refused = map_scheduled(program, schedule_program(program,
                                                                  HwParams.from_arch(arch)),
                                        arch)
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
                   register_file_tiles=rf_tiles)
    return summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sim.main", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--app", default="gaussian",
                    help="application name (apps/), or a Python app file (docs/apps.md)")
    ap.add_argument("--arch", default="pub", help="constraints/arch name or path")
    ap.add_argument("--no-rtl", action="store_true", help="skip the Verilator cross-check")
    ap.add_argument("--seed", type=int, default=0, help="input generator seed")
    ap.add_argument("--size", action="append", default=[], metavar="NAME=N",
                    help="override an application size, e.g. --size width=32 (repeatable)")
    args = ap.parse_args(argv)
    try:
        from compiler.source import parse_sizes
        s = run(args.app, args.arch, not args.no_rtl, args.seed, parse_sizes(args.size))
    except Failure as e:
        print(f"sim: FAIL: {e}", file=sys.stderr)
        return 1
    except (KeyError, ValueError) as e:        # unknown app, bad arch, mapping errors
        print(f"sim: error: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
              file=sys.stderr)
        return 2
    paper = PAPER_CYCLES.get(args.app)
    ref = f" (paper Table VI: {paper[0]} -> {paper[1]})" if paper else ""
    print(f"\n{s['app']}: PASS  cycles {s['cycles_sequential']} -> {s['cycles_optimized']}{ref}; "
          f"SRAM words {s['sram_words_sequential']} -> {s['sram_words_optimized']}; "
          f"MEMs {s['mems']}; shift registers {s['shift_registers']}"
          + (f"; register-file words {s['register_file_words']} in "
             f"{s['register_file_tiles']} MEM tiles" if s.get("register_file_words") else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
