"""The one driver of the compiler: ``compile_app(app, arch, sizes=...) -> CompileResult``
(docs/design.md, "The pipeline").

Stages, each a pure function of the previous IRs (per-stage seconds in the report):

1. ``frontend``: the application's Program (an apps/ module, a Python app file, a Program JSON
   file or a Program; :mod:`compiler.source`);
2. ``schedule``: tree-height reduction, polyhedral extraction, the sequential and optimized
   schedules (both verified by isl), liveness and the unified buffers
   (``compiler.schedule.report.schedule_program``);
3. ``map``: buffer mapping of every unified buffer (``compiler.mapping.map_buffer``), with the
   memory levels the Program's buffers ask for (``store_in``; :func:`map_scheduled`), and the
   check that the schedule's live words and the mapping agree;
4. ``netlist``: the PE/MEM/IO netlist with exact edge latencies (``compiler.backend.build``).

Importing this module does not import Amaranth: the backend reads ubgen's exported data only.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from ubgen.arch import Arch, ArchError, load_arch

from .ir.index import IndexError_
from .ir.program import Program, ProgramError
from .ir.ubimpl import UBImpl
from .backend.netlist import Netlist, NetlistError

DEFAULT_ARCH = "cgra_16x32"          # the largest shipped array


def user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that are a user's error (a bad program, constraints file or size, an
    unschedulable program, a buffer or netlist that cannot be built): reported in one line, never
    as a traceback. ``MappingError``, ``NetlistError`` and ``FitError`` are ``ValueError``s."""
    from .poly.extract import ExtractError
    from .verify import ScheduleError, VerifyError
    return (ProgramError, IndexError_, ExtractError, VerifyError, ScheduleError, ArchError,
            ValueError, KeyError)


@dataclass
class CompileResult:
    """Every IR of one compilation and its report (:func:`compile_app`)."""
    app: str
    arch: Arch
    program: Program                  # as given (before tree-height reduction)
    scheduled: object                 # compiler.schedule.report.ScheduleResult
    impls: dict[str, UBImpl]
    netlist: Netlist | None           # None when compiled ``until="map"``
    seconds: dict[str, float] = field(default_factory=dict)
    module: object = None             # the apps/ module (make_inputs, reference), if any
    sizes: dict = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)   # buffers mapping refused (until="map")

    @property
    def buffers(self):
        return self.scheduled.buffers

    @property
    def schedule(self):
        return self.scheduled.optimized

    def resources(self) -> dict[str, tuple[int, int]]:
        """``{resource: (needed, available)}`` on the arch: PE, MEM and IO tiles, GLB banks
        (one per IO stream) and the words of the largest IO stream against a bank."""
        return resources(self.netlist, self.arch)

    def fits(self) -> tuple[bool, str | None]:
        """Whether the netlist fits the arch, and if not, one line naming the resource."""
        for res, (need, cap) in self.resources().items():
            if need > cap:
                return False, f"{self.app} needs {need} {res}, {self.arch.name} has {cap}"
        return True, None

    @property
    def report(self) -> dict:
        net = self.netlist
        ok, why = self.fits()
        return {"app": self.app, "arch": self.arch.name,
                "pes": net.count("pe"), "mems": net.count("mem"), "ios": net.count("io"),
                "registers": net.register_stages(),
                "cycles_predicted": net.cycles_predicted,
                "sram_words": self.scheduled.summary(self.app)["sram_words_optimized"],
                "fits": ok, "misfit": why,
                "resources": {k: {"need": n, "have": c} for k, (n, c) in
                              self.resources().items()},
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
                "compile_seconds": round(sum(self.seconds.values()), 3)}


def tile_capacity(arch: Arch) -> dict[str, int]:
    """PE, MEM and IO tiles of the array (docs/array.md "Layout")."""
    return arch.array.tile_counts()


def resources(net: Netlist, arch: Arch) -> dict[str, tuple[int, int]]:
    cap = tile_capacity(arch)
    ios = net.nodes("io")
    words = max([net.graph.nodes[n]["glb"]["words"] for n in ios] + [0])
    return {"PE tiles": (net.count("pe"), cap["pe"]),
            "MEM tiles": (net.count("mem"), cap["mem"]),
            "IO tiles": (len(ios), cap["io"]),
            "GLB banks": (len(ios), min(arch.glb.banks, cap["io"])),
            "GLB words per bank": (words, arch.glb.bank_words)}


class FitError(ValueError):
    """The application needs more of a resource than the arch has (one line)."""


def require_fit(result: CompileResult) -> None:
    """Raise :class:`FitError` naming the resource, the need and the capacity."""
    ok, why = result.fits()
    if not ok:
        raise FitError(why)


def app_inputs(result: CompileResult, seed: int = 0) -> dict:
    """The application's inputs: its module's ``make_inputs(seed, **sizes)`` when it has one
    (an apps/ module or a Python app file), else uniformly random words of every input
    buffer's type (:func:`compiler.source.app_inputs`)."""
    from .source import AppSource, app_inputs as source_inputs
    return source_inputs(AppSource(result.app, result.program, result.module, result.sizes),
                         seed)


def check_result(result: CompileResult, seed: int = 0):
    """The netlist model of ``result`` against the golden interpreter on the app's inputs
    (:func:`compiler.backend.model.check_netlist`)."""
    from .backend.model import check_netlist
    from .interp import run as interp
    inputs = app_inputs(result, seed)
    golden = interp(result.program, inputs)
    outs = {b.name for b in result.program.buffers.values() if b.kind == "output"}
    return check_netlist(result.netlist, result.arch, result.program, inputs,
                         {k: v for k, v in golden.items() if k in outs})


def _levels(program: Program) -> dict[str, str]:
    return {b.name: b.level for b in program.buffers.values() if b.level}


def map_scheduled(program: Program, scheduled, arch: Arch, threshold: int | None = None,
                  policy: str | None = None, balance: bool = True, params=None):
    """Map every unified buffer of ``scheduled`` (the memory levels the Program asks for).
    When mapping refuses a buffer that ops delayed by :mod:`compiler.schedule.delay` write or
    read, the program is scheduled again (``params``, default: the arch's) with those ops at
    their earliest start, until no refused buffer is touched by a delayed op. Returns
    ``(scheduled, impls, refused)``."""
    from .mapping.map_buffer import map_buffers
    from .mapping.shift_register import DEFAULT_THRESHOLD
    from .ir.hw import HwParams
    from .schedule.report import schedule_program
    threshold = DEFAULT_THRESHOLD if threshold is None else threshold
    impls, refused = map_buffers(scheduled.buffers, arch, threshold, _levels(program))
    early: set[str] = set()
    while refused:
        delayed = scheduled.optimized.info.get("delayed") or {}
        touch = {op.name for op in scheduled.program.ops() if op.name in delayed and (
            op.store.buffer in refused or any(ld.buffer in refused for ld in op.loads))}
        if not touch - early:
            break
        early |= touch
        scheduled = schedule_program(program, params or HwParams.from_arch(arch), policy,
                                     balance=balance, early=frozenset(early))
        impls, refused = map_buffers(scheduled.buffers, arch, threshold, _levels(program))
    return scheduled, impls, refused


def compile_app(app: str | Program, arch: str | Path | Arch = DEFAULT_ARCH,
                sizes: dict[str, int] | None = None, *, threshold: int | None = None,
                policy: str | None = None, balance: bool = True,
                until: str = "netlist", delay: bool = True) -> CompileResult:
    """Compile ``app`` (an application name, a Python app file, a Program JSON file or a
    Program) for ``arch`` through every stage (module docstring). Raises the stages' one-line
    errors (``ProgramError``, ``ExtractError``, ``VerifyError``, ``ScheduleError``,
    ``ArchError``, ``MappingError`` for a refused buffer, ``NetlistError``). ``delay=False``
    starts producers as early as possible (:mod:`compiler.schedule.delay`). ``until="map"``
    stops after buffer mapping and keeps the refused buffers' reasons in ``refused`` instead
    of raising."""
    from .mapping.common import MappingError
    from .mapping.hierarchy import storage_mismatches
    from .ir.hw import HwParams
    from .schedule.report import schedule_program
    from .source import load_app
    from .backend.build import build_netlist

    arch = arch if isinstance(arch, Arch) else load_arch(arch)
    seconds: dict[str, float] = {}
    t = time.perf_counter()
    module = None
    if isinstance(app, Program):
        program, name = app, app.name
    else:
        source = load_app(str(app), sizes or {})
        program, name, module = source.program, source.name, source.module
    seconds["frontend"] = time.perf_counter() - t

    t = time.perf_counter()
    scheduled = schedule_program(program, HwParams.from_arch(arch), policy, balance=balance,
                                 delay=delay)
    seconds["schedule"] = time.perf_counter() - t

    t = time.perf_counter()
    scheduled, impls, refused = map_scheduled(program, scheduled, arch, threshold, policy,
                                              balance)
    seconds["map"] = time.perf_counter() - t
    result = CompileResult(name, arch, program, scheduled, impls, None, seconds, module,
                           dict(sizes or {}), refused)
    if until == "map":
        return result
    if refused:
        raise MappingError(next(iter(refused.values())))
    mismatch = storage_mismatches({b.name: b.live_words for b in scheduled.live_optimized},
                                  impls, {b.name: b.kind for b in program.buffers.values()},
                                  _levels(program))
    if mismatch:
        raise MappingError(mismatch[0])

    t = time.perf_counter()
    netlist = build_netlist(scheduled.program, scheduled.optimized, scheduled.buffers, impls,
                            arch)
    netlist.app = name
    seconds["netlist"] = time.perf_counter() - t
    result.netlist = netlist
    return result


__all__ = ["CompileResult", "compile_app", "app_inputs", "check_result", "DEFAULT_ARCH",
           "FitError", "require_fit", "resources", "tile_capacity", "NetlistError",
           "user_errors"]
