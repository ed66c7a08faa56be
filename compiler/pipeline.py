"""The one driver of the compiler: ``compile_app(app, arch, sizes=...) -> CompileResult``
(docs/design.md, "The pipeline").

Stages, each a pure function of the previous IRs (per-stage seconds in the report):

1. ``frontend``: the application's Program (an apps/ module, a Python app file, a Program JSON
   file or a Program; :mod:`compiler.frontend.source`);
2. ``schedule``: tree-height reduction, polyhedral extraction, the sequential and optimized
   schedules (both verified by isl), liveness and the unified buffers
   (``compiler.schedule.report.schedule_program``);
3. ``map``: buffer mapping of every unified buffer (``compiler.mapping.map_buffer``), with the
   memory levels the Program's buffers ask for (``store_in``; :func:`map_scheduled`), and the
   check that the schedule's live words and the mapping agree;
4. ``netlist``: the PE/MEM/IO netlist with exact edge latencies (``compiler.backend.build``);
5. ``pnr``: place and route on the arch's routing graph, the bitstream and its independent
   checker (``compiler.backend.pnr``); a netlist that does not fit is a :class:`FitError`;
6. ``bundle``: everything a host needs to run the app and check it (``compiler.backend.bundle``):
   the bitstream, the app's inputs at their GLB words and the golden outputs, established once
   for every PASS verdict by :func:`compiler.frontend.source.establish_golden` (the interpreter checked
   against the app's ``reference()`` or real Halide).

``compile_app(..., until=STAGE)`` runs the stages up to ``STAGE``; ``CompileResult.run(STAGE)``
continues a result to a later one (the sweep runs one stage at a time this way). No stage module
imports this driver.

Importing this module does not import Amaranth: the backend reads ubgen's exported data only.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from ubgen.arch import Arch, ArchError, load_arch

from .ir.index import IndexError_
from .ir.program import Program, ProgramError
from .ir.ubimpl import UBImpl
from .backend.netlist import Netlist, NetlistError
from .frontend.source import AppSource, Golden

DEFAULT_ARCH = "cgra_16x32"          # the largest shipped array (the sweep's figures)
PUB_ARCH = "pub"                     # commands that work on a single PUB


def user_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that are a user's error (a bad program, constraints file or size, an
    unschedulable program, a buffer or netlist that cannot be built): reported in one line, never
    as a traceback. ``MappingError``, ``NetlistError`` and ``FitError`` are ``ValueError``s."""
    from .poly.extract import ExtractError
    from .schedule.verify import ScheduleError, VerifyError
    return (ProgramError, IndexError_, ExtractError, VerifyError, ScheduleError, ArchError,
            ValueError, KeyError)


STAGES = ("frontend", "schedule", "map", "netlist", "pnr", "bundle")


@dataclass
class CompileResult:
    """Every IR of one compilation and its report (:func:`compile_app`); :meth:`run` advances
    it stage by stage (:data:`STAGES`)."""
    app: str
    arch: Arch
    program: Program                  # as given (before tree-height reduction)
    scheduled: object = None          # compiler.schedule.report.ScheduleResult
    impls: dict[str, UBImpl] | None = None
    netlist: Netlist | None = None    # None until the netlist stage ran
    seconds: dict[str, float] = field(default_factory=dict)
    source: AppSource | None = None   # where the app came from (inputs, reference, sizes)
    refused: dict[str, str] = field(default_factory=dict)   # buffers mapping refused
    options: FlowOptions = field(default_factory=lambda: FlowOptions())
    pnr: object = None                # compiler.backend.pnr.PnRResult
    bundle: dict | None = None
    inputs: dict | None = None        # the app's inputs for options.seed
    golden: Golden | None = None
    done: list[str] = field(default_factory=list)
    tiling: object = None             # compiler.tiling.plan.TilePlan: runs of a tile Program
    whole: AppSource | None = None    # the whole app when ``program`` is its tile
    blocks: object = None             # compiler.tiling.blocks.BlockPlan: runs of channel blocks

    @property
    def runs(self) -> int:
        """How many runs of this configuration the app takes (1 unless tiled): output tiles
        times channel blocks."""
        tiles = self.tiling.runs if self.tiling is not None else 1
        return tiles * (self.blocks.runs if self.blocks is not None else 1)

    @property
    def module(self):
        return self.source.module if self.source else None

    @property
    def sizes(self) -> dict:
        return dict(self.source.sizes) if self.source else {}

    @property
    def buffers(self):
        return self.scheduled.buffers

    @property
    def label(self) -> str:
        """How one-line errors name the app: its file, or its apps/ name."""
        return self.source.path if self.source and self.source.path else self.app

    def refusal(self) -> str:
        """One line for the buffers mapping refused: the app, the first buffer, the cause and
        what to change (the mapping passes' messages say it)."""
        why = next(iter(self.refused.values()))
        more = (f" (and {len(self.refused) - 1} more refused buffers)"
                if len(self.refused) > 1 else "")
        return f"{self.label}: {why}{more}"

    @property
    def schedule(self):
        return self.scheduled.optimized

    def resources(self) -> dict[str, tuple[int, int]]:
        """``{resource: (needed, available)}`` on the arch: PE, MEM and IO tiles, GLB banks
        (one per IO stream), the words of the largest IO stream against a bank, and the PE
        input contexts the shared compute units need (:func:`context_need`)."""
        return {**resources(self.netlist, self.arch), **self.context_resources()}

    def context_resources(self) -> dict[str, tuple[int, int]]:
        """The PE input contexts of the largest shared compute unit against the arch's
        (``[array] pe_contexts``); empty without shared units."""
        program = self.scheduled.program if self.scheduled else self.program
        need = context_need(program)
        return {"PE input contexts": (need, self.arch.array.pe_contexts)} if need > 1 else {}

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
                "compile_seconds": round(sum(self.seconds.values()), 3),
                "runs": self.runs,
                **({"tile": list(self.tiling.shape)} if self.tiling is not None else {}),
                **({"channel_blocks": self.blocks.runs, "block": self.blocks.block}
                   if self.blocks is not None else {}),
                **({"cycles_total": self.runs * net.cycles_predicted}
                   if self.tiling is not None or self.blocks is not None else {})}

    # ---------------------------------------------------------------------------- the flow

    def run(self, until: str) -> "CompileResult":
        """Run every stage up to and including ``until`` that has not run yet."""
        if until not in STAGES:
            raise ValueError(f"unknown stage '{until}'; stages: {', '.join(STAGES)}")
        for stage in STAGES[:STAGES.index(until) + 1]:
            if stage not in self.done:
                t = time.perf_counter()
                getattr(self, f"_stage_{stage}")()
                self.seconds[stage] = self.seconds.get(stage, 0.0) + time.perf_counter() - t
                self.done.append(stage)
        return self

    def establish_golden(self) -> Golden:
        """The app's inputs (``options.seed``) and the golden outputs every PASS verdict
        compares with (:func:`compiler.frontend.source.establish_golden`), computed once. Raises
        :class:`compiler.frontend.source.GoldenMismatch` when the interpreter and the app's reference
        (or real Halide) disagree."""
        if self.golden is None:
            from .frontend.source import app_inputs, establish_golden
            t = time.perf_counter()
            source = self.whole or self.source
            self.inputs = app_inputs(source, self.options.seed)
            self.golden = establish_golden(source, self.inputs)
            self.seconds["golden"] = time.perf_counter() - t
        return self.golden

    def fpga_design(self):
        """The application's FPGA design (``compiler.fpga``: the same unified-buffer
        implementation and schedule as an application-specific design) and the host's vectors
        for it (the app's inputs in stream order, the golden outputs each output stream must
        give, :meth:`establish_golden`). Runs the stages up to ``map``; raises the one-line
        ``FPGADesignError`` (or ``MappingError`` for a buffer mapping refused)."""
        from .fpga.build import build_fpga_design
        from .fpga.host import host_vectors
        from .mapping.common import MappingError
        self.run("map")
        if self.refused:
            raise MappingError(next(iter(self.refused.values())))
        s = self.scheduled
        t = time.perf_counter()
        design = build_fpga_design(s.program, s.optimized, s.buffers, self.impls, self.arch)
        design.app = self.app
        self.seconds["fpga_design"] = time.perf_counter() - t
        golden = self.establish_golden()
        return design, host_vectors(design, self.inputs, golden.outputs)

    def _stage_frontend(self) -> None:
        pass                            # the Program was loaded when the result was made

    def _stage_schedule(self) -> None:
        from .ir.hw import HwParams
        from .schedule.report import schedule_program
        o = self.options
        self.scheduled = schedule_program(self.program, HwParams.from_arch(self.arch),
                                          o.policy, balance=o.balance, delay=o.delay,
                                          reorder=o.reorder, split=o.split)

    def _stage_map(self) -> None:
        o = self.options
        self.scheduled, self.impls, self.refused = map_scheduled(
            self.program, self.scheduled, self.arch, o.threshold, o.policy, o.balance,
            reorder=o.reorder, split=o.split)

    def _stage_netlist(self) -> None:
        from .mapping.common import MappingError
        from .mapping.hierarchy import storage_mismatches
        from .backend.build import build_netlist
        if self.refused:
            raise MappingError(self.refusal())
        mismatch = storage_mismatches(
            {b.name: b.live_words for b in self.scheduled.live_optimized}, self.impls,
            {b.name: b.kind for b in self.program.buffers.values()}, _levels(self.program))
        if mismatch:
            raise MappingError(f"{self.label}: {mismatch[0]}")
        s = self.scheduled
        self.netlist = build_netlist(s.program, s.optimized, s.buffers, self.impls, self.arch)
        self.netlist.app = self.app

    def _stage_pnr(self) -> None:
        from .backend.pnr import place_and_route
        require_fit(self)
        extra = {} if self.options.effort is None else {"effort": self.options.effort}
        self.pnr = place_and_route(self.netlist, self.arch, seed=self.options.seed, **extra)

    def _stage_bundle(self) -> None:
        from .backend.bundle import make_bundle, make_tiled_bundle
        if self.blocks is not None:
            from .backend.bundle import make_blocked_bundle
            self.bundle = make_blocked_bundle(self.blocks, self._block_configs())
            return
        golden = self.establish_golden()
        if self.tiling is not None:
            self.bundle = make_tiled_bundle(self.netlist, self.arch, self.pnr, self.tiling)
            return
        self.bundle = make_bundle(self.netlist, self.arch, self.pnr, self.inputs,
                                  golden.outputs)


    def _block_configs(self) -> list["CompileResult"]:
        """A channel-blocked layer's two configurations (the blocks before the last, the
        last), each compiled as runs of this result's output tile (one tile of the whole block
        output when it was not tiled) and bundled: the same schedule, placement and routing
        (the Programs differ in the drain's constant only; a one-line :class:`FitError` if
        the two placements differ)."""
        from .frontend.source import load_app
        plan = self.blocks
        out = plan.program.buffers[plan.spec["output"]].shape
        shape = tuple(self.tiling.shape) if self.tiling is not None else tuple(out)
        opts = {"seed": self.options.seed}
        configs = [compile_tiled(load_app(plan.app, plan.block_sizes(last)), self.arch,
                                 "bundle", shape=shape, overlap=False, **opts)
                   for last in (False, True)]
        a, b = (c.pnr.placement.sites for c in configs)
        if a != b:
            raise FitError(f"{self.label}: the last channel block's configuration is placed "
                           f"differently from the others'")
        return configs


@dataclass(frozen=True)
class FlowOptions:
    """The knobs of a compilation (:func:`compile_app`)."""
    threshold: int | None = None      # largest delay kept in shift registers (thesis §5.1.2)
    policy: str | None = None         # scheduler: None (auto), stencil, dnn, sequential
    balance: bool = True              # tree-height reduction of the kernels
    delay: bool = True                # producers as late as their consumers allow
    seed: int = 0                     # the app's inputs and the placer
    effort: float | None = None       # the annealer's effort (None: its default schedule)
    reorder: bool = True              # non-unrolled reductions in streaming order
    split: bool = True                # host streams split over IO tiles when shorter


def context_need(program: Program) -> int:
    """The most ops that share one compute unit (``Op.unit``): the input contexts its PEs need
    (``compiler.backend.sharing``); 1 without sharing."""
    from .backend.sharing import shared_units
    return max((len(ops) for ops in shared_units(program).values()), default=1)


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


def check_result(result: CompileResult):
    """The netlist model of ``result`` against the golden outputs on the app's inputs
    (:meth:`CompileResult.establish_golden`, :func:`compiler.backend.netlist_model.check_netlist`)."""
    from .backend.netlist_model import check_netlist
    golden = result.establish_golden()
    return check_netlist(result.netlist, result.arch, result.program, result.inputs,
                         golden.outputs)


def _levels(program: Program) -> dict[str, str]:
    return {b.name: b.level for b in program.buffers.values() if b.level}


MAX_GAP_SCALE = 64          # the widest bank spread the §5.5.3 gap is stretched for


def map_scheduled(program: Program, scheduled, arch: Arch, threshold: int | None = None,
                  policy: str | None = None, balance: bool = True, params=None,
                  reorder: bool = True, split: bool = True):
    """Map every unified buffer of ``scheduled`` (the memory levels the Program asks for).
    When mapping refuses a buffer, the program is scheduled again (``params``, default: the
    arch's) and mapped again, as long as something is left to change:

    * a buffer that ops delayed by :mod:`compiler.schedule.delay` (or initializations placed
      by :mod:`compiler.schedule.init_place`, drains by :mod:`compiler.schedule.drain_place`)
      write or read: those ops are put where the
      scheduler put them;
    * a read too soon after its write for the wide-fetch SRAM (``TooSoon``: a bank receives
      one of every ``k`` of the producer's writes, so its wide words fill ``k`` times slower
      than the scheduler's §5.5.3 gap assumed): the gap of the buffer's loads is doubled
      (``gap_scale``, :func:`compiler.schedule.dnn.gap_cycles`), up to :data:`MAX_GAP_SCALE`;
    * a schedule with host streams split over several IO tiles
      (:mod:`compiler.passes.stream_split`) that still has a refused buffer: the program is
      scheduled and mapped again without the split.

    Returns ``(scheduled, impls, refused)``."""
    from .mapping.common import TooSoon
    from .mapping.map_buffer import map_buffers
    from .mapping.shift_register import DEFAULT_THRESHOLD
    from .ir.hw import HwParams
    from .schedule.report import schedule_program
    threshold = DEFAULT_THRESHOLD if threshold is None else threshold
    errors: dict = {}
    impls, refused = map_buffers(scheduled.buffers, arch, threshold, _levels(program), errors)
    early: set[str] = set()
    scale: dict[str, int] = {}
    while refused:
        delayed = dict.fromkeys(scheduled.optimized.info.get("delayed") or {})
        delayed.update(dict.fromkeys(scheduled.optimized.info.get("init_placed") or ()))
        delayed.update(dict.fromkeys(scheduled.optimized.info.get("drain_placed") or ()))
        touch = {op.name for op in scheduled.program.ops() if op.name in delayed and (
            op.store.buffer in refused or any(ld.buffer in refused for ld in op.loads))}
        soon = {b for b in refused if isinstance(errors.get(b), TooSoon)
                and scale.get(b, 1) < MAX_GAP_SCALE}
        if not touch - early and not soon:
            break
        early |= touch
        for b in soon:
            scale[b] = 2 * scale.get(b, 1)
        scheduled = schedule_program(program, params or HwParams.from_arch(arch), policy,
                                     balance=balance, early=frozenset(early),
                                     gap_scale=dict(scale), reorder=reorder, split=split)
        errors = {}
        impls, refused = map_buffers(scheduled.buffers, arch, threshold, _levels(program),
                                     errors)
    if refused and scheduled.optimized.info.get("stream_split"):
        plain = schedule_program(program, params or HwParams.from_arch(arch), policy,
                                 balance=balance, reorder=reorder, split=False)
        return map_scheduled(program, plain, arch, threshold, policy, balance, params,
                             reorder, split=False)
    return scheduled, impls, refused


def compile_app(app: str | Program, arch: str | Path | Arch = DEFAULT_ARCH,
                sizes: dict[str, int] | None = None, *, threshold: int | None = None,
                policy: str | None = None, balance: bool = True,
                until: str = "netlist", delay: bool = True, seed: int = 0,
                effort: float | None = None, reorder: bool = True,
                split: bool = True) -> CompileResult:
    """Compile ``app`` (an application name, a Python app file, a Program JSON file or a
    Program) for ``arch`` through the stages up to ``until`` (:data:`STAGES`; module
    docstring). Raises the stages' one-line errors (``ProgramError``, ``ExtractError``,
    ``VerifyError``, ``ScheduleError``, ``ArchError``, ``MappingError`` for a refused buffer,
    ``NetlistError``, :class:`FitError`, ``PnRError``, ``GoldenMismatch``). ``delay=False``
    starts producers as early as possible (:mod:`compiler.schedule.delay`), ``reorder=False``
    keeps non-unrolled reductions in their written loop order
    (:mod:`compiler.passes.reduction_order`), ``split=False`` never splits a host stream over
    several IO tiles (:mod:`compiler.passes.stream_split`). ``until="map"``
    stops after buffer mapping and keeps the refused buffers' reasons in ``refused`` instead
    of raising. ``seed`` chooses the app's inputs and the placement, ``effort`` the annealer's
    effort (``compiler.backend.place.AnnealSchedule``)."""
    from .frontend.source import AppSource, load_app
    arch = arch if isinstance(arch, Arch) else load_arch(arch)
    t = time.perf_counter()
    if isinstance(app, Program):
        source = AppSource(app.name, app, None, dict(sizes or {}))
    else:
        source = load_app(str(app), sizes or {})
    result = CompileResult(source.name, arch, source.program, source=source,
                           options=FlowOptions(threshold, policy, balance, delay, seed, effort,
                                               reorder, split))
    result.seconds["frontend"] = time.perf_counter() - t
    result.done.append("frontend")
    return result.run(until)


def backend_figures(impls: dict[str, UBImpl], backend: str) -> dict:
    """What a memory backend adds to its memory count (``compiler.mapping.report``):
    ``controller_pes`` for ``dp-pe`` (the PEs of every synthesised controller,
    ``compiler.backend.pe_controllers``), ``buffets`` for ``rv`` (one per dual-port memory,
    each with the local schedule ``compiler.mapping.buffet`` derives). Raises the one-line
    ``NetlistError`` / ``MappingError`` of a memory the backend cannot hold."""
    if backend == "dp-pe":
        from .backend.dp_build import dp_pe_controllers
        return {"controller_pes": sum(dp_pe_controllers(b, name) for name, impl in impls.items()
                                      for b in impl.dps)}
    if backend == "rv":
        from .mapping.buffet import buffet_configs
        return {"buffets": sum(len(c) for c in buffet_configs(impls).values())}
    return {}


def shipped_arrays(mem_kind: str = "pub") -> list[str]:
    """The shipped arch files with an array (``ubgen/constraints/arch/*.toml`` with ``[array]``)
    whose MEM tile is ``mem_kind`` (``[mem] kind``; the PUB's by default), smallest first (by
    tiles, then by name)."""
    from ubgen.arch import ARCH_DIR
    found = []
    for path in sorted(ARCH_DIR.glob("*.toml")):
        arch = load_arch(path.stem)
        if "array" in arch.raw and arch.mem.kind == mem_kind:
            found.append((sum(tile_capacity(arch).values()), arch.name))
    return [name for _n, name in sorted(found)]


def _same_mapping_params(a: Arch, b: Arch) -> bool:
    """Whether two archs schedule and map an app alike (same PUB, DP-SRAM, MEM and schedule
    parameters); they may differ in the array and the global buffer."""
    return (a.pub, a.dpbuf, a.mem, a.schedule) == (b.pub, b.dpbuf, b.mem, b.schedule)


@dataclass
class ArchChoice:
    """Which arch the default rule chose (:func:`compile_on_smallest`) and why the smaller
    shipped arrays were passed over."""
    arch: str
    passed_over: list[str] = field(default_factory=list)   # "<arch>: <one-line reason>"
    routes: bool = False              # chosen by placing and routing, not by counts alone

    def describe(self, app: str) -> str:
        how = "fits and routes on" if self.routes else "fits"
        why = f"; passed over: {'; '.join(self.passed_over)}" if self.passed_over else ""
        return f"arch {self.arch}: the smallest shipped array {app} {how}{why}"


def size_errors() -> tuple[type[BaseException], ...]:
    """What a whole program that is too large for an arch raises: the cycle counter
    (``ScheduleError``), a memory or chain it cannot have (``MappingError``), a register value
    that does not fit (``NetlistError``, ``RegisterWidthError``: a controller's fire past its
    cycle counter); tiling may cure each (:func:`compile_fitting`)."""
    from .ir.ubimpl import RegisterWidthError
    from .mapping.common import MappingError
    from .schedule.verify import ScheduleError
    return (ScheduleError, MappingError, NetlistError, RegisterWidthError)


def compile_tiled(source: AppSource, arch: Arch, until: str = "netlist", log=None,
                  shape: tuple[int, ...] | None = None, attempts: int = 8,
                  overlap: bool = False, **options) -> CompileResult:
    """The app as runs of one tile (:mod:`compiler.tiling`): the tile shape with the fewest
    runs whose tile Program fits ``arch`` (compiled through ``until``, at least the netlist;
    at most ``attempts`` shapes compiled), or the given output tile ``shape``. With
    ``overlap`` (what ``make sim`` asks for; the sweep, which counts the runs' cycles only,
    does not), the fewest runs whose host buffers fit half the global buffer's banks come
    first (two regions per stream, so the host runtime can load the next tile during a run:
    ``compiler.backend.glb.double_buffer``, docs/tiling.md), then the fewest runs at all. Raises
    :class:`compiler.tiling.region.TilingError` (a ``ValueError``) when none does (when the
    given shape does not); its ``resources`` are those of the last tile compiled that ran out
    of a resource of the array (``{}`` when none did), so a caller can name them."""
    from .tiling.choose import choose
    from .tiling.plan import plan_tiles
    from .tiling.region import TilingError
    from .backend.pnr import PnRError
    done: dict[int, CompileResult] = {}
    # the bundle of a tiled result needs its plan: built once the plan is attached
    stop = STAGES[min(max(STAGES.index(until), STAGES.index("netlist")), STAGES.index("pnr"))]
    if isinstance(arch, (str, Path)):
        arch = load_arch(arch)

    short: dict[str, tuple[int, int]] = {}       # the last tile short of array resources

    def fits(plan) -> str | None:
        try:
            r = compile_app(plan.program, arch, source.sizes, until="netlist", **options)
            ok, why = r.fits()
            if not ok:
                short.clear()
                short.update(r.resources())
                return why
            r.run(stop)
        except size_errors() + (FitError, PnRError) as e:
            return str(e).splitlines()[0]
        done[id(plan)] = r
        return None

    try:
        if shape is None:
            plan = _choose_overlapped(source, arch, fits, attempts, log) if overlap else None
            plan = plan or choose(source.program, arch, fits, attempts=attempts, log=log).plan
        else:
            plan = plan_tiles(source.program, tuple(shape))
            why = fits(plan)
            if why is not None:
                raise TilingError(f"{source.name}: tile {list(plan.shape)} does not fit "
                                  f"{arch.name} ({why})")
    except TilingError as e:
        e.resources = dict(short)
        raise
    result = done[id(plan)]
    result.app, result.whole, result.tiling = source.name, source, plan
    if STAGES.index(until) > STAGES.index(stop):
        result.run(until)
    return result


def _choose_overlapped(source: AppSource, arch: Arch, fits, attempts: int, log):
    """The plan of :func:`compile_tiled` with two GLB regions per stream, or None when no
    tile shape fits that way."""
    from .tiling.choose import choose
    from .tiling.region import TilingError
    try:
        return choose(source.program, arch, fits, attempts=attempts, log=log, regions=2).plan
    except TilingError as e:
        if log:
            log(f"no tile leaves room for two GLB regions ({str(e).splitlines()[0]}): the host "
                f"loads between runs")
        return None


def compile_channel_blocks(source: AppSource, arch: Arch, until: str = "netlist", log=None,
                           block: int | None = None, attempts: int = 3,
                           **options) -> CompileResult:
    """The layer ``source`` as runs of channel blocks (:mod:`compiler.tiling.blocks`), each
    block's Program compiled by :func:`compile_fitting` (itself tiled over outputs when it
    does not fit one run): the given ``block``, or the largest that fits among the block sizes
    of the app's declaration (at most ``attempts`` compiled). The result is the block
    Program's (the blocks before the last; the last differs in its drain constant only) with
    ``blocks`` set. Raises a one-line :class:`compiler.tiling.region.TilingError`."""
    from .tiling.blocks import block_sizes, plan_channel_blocks
    from .tiling.region import TilingError
    if isinstance(arch, (str, Path)):
        arch = load_arch(arch)
    tried: list[str] = []
    short: dict[str, tuple[int, int]] = {}     # the last block short of array resources
    for b in ([block] if block is not None else block_sizes(source.name, source.sizes)):
        if len(tried) >= attempts:
            break
        plan = plan_channel_blocks(source.name, source.sizes, b)
        if log:
            log(f"channel blocks of {b}: {plan.runs} runs; compiling the block")
        try:
            result = compile_fitting(plan.program, arch, plan.block_sizes(False), until=until,
                                     log=log, attempts=attempts, **options)
        except (FitError, TilingError) + size_errors() as e:
            tried.append(f"block {b}: {str(e).splitlines()[0]}")
            short = getattr(e, "resources", None) or short
            continue
        result.app, result.blocks = source.name, plan
        result.whole = result.whole or source
        return result
    err = TilingError(f"{source.name}: no channel block fits {arch.name}"
                      + (f" ({tried[-1]})" if tried else ""))
    err.resources = short
    raise err


def compile_fitting(app: str | Program, arch: str | Path | Arch, sizes: dict[str, int] | None
                    = None, *, until: str = "netlist", tile: bool = True, log=None,
                    attempts: int = 8, overlap: bool = False, **options) -> CompileResult:
    """:func:`compile_app` through ``until``; when the whole program does not fit ``arch``
    (its resources, the cycle counter, a memory chain: :func:`size_errors`), and ``tile``,
    the app as runs of one tile (:func:`compile_tiled`, at most ``attempts`` tile shapes
    compiled)."""
    arch = arch if isinstance(arch, Arch) else load_arch(arch)
    stop = until if STAGES.index(until) >= STAGES.index("netlist") else "netlist"
    try:
        result = compile_app(app, arch, sizes, until=stop, **options)
        ok, why = result.fits()
        if ok:
            return result
    except size_errors() as e:
        if not tile:
            raise
        why = str(e).splitlines()[0]
        result = None
    if not tile:
        raise FitError(why)
    from .frontend.source import AppSource, load_app
    source = (AppSource(app.name, app, None, dict(sizes or {})) if isinstance(app, Program)
              else result.source if result is not None else load_app(str(app), sizes or {}))
    if log:
        log(f"{source.name} as a whole does not fit {arch.name} ({why}): tiling")
    return compile_tiled(source, arch, until, log=log, attempts=attempts, overlap=overlap,
                         **options)


def compile_on_smallest(app: str | Program, sizes: dict[str, int] | None = None, *,
                        until: str = "netlist", tile: bool = False, log=None,
                        overlap: bool = False, **options) -> tuple[CompileResult, ArchChoice]:
    """The default arch of everything that runs on the array (docs/cli.md): compile ``app``
    on each shipped array, smallest first (:func:`shipped_arrays`), and keep the first whose
    resources it fits; with ``until`` at ``pnr`` or later, the first it also places and routes
    on (register padding may need more PEs than the netlist counts). With ``tile``, an app that
    does not fit an array as a whole is tried as runs of one tile there
    (:func:`compile_tiled`) before the next array. Raises a one-line :class:`FitError` when no
    shipped array holds it. ``options`` go to :func:`compile_app`."""
    from .backend.pnr import PnRError
    from .tiling.region import TilingError
    routes = STAGES.index(until) >= STAGES.index("pnr")
    passed: list[str] = []
    mapped: CompileResult | None = None
    for name in shipped_arrays():
        arch = load_arch(name)
        try:
            if mapped is not None and _same_mapping_params(mapped.arch, arch):
                # the schedule and the buffer mapping read only these parameters: keep them
                result = replace(mapped, arch=arch, seconds=dict(mapped.seconds),
                                 netlist=None, pnr=None, bundle=None,
                                 done=list(STAGES[:STAGES.index("map") + 1]))
            else:
                result = compile_app(app, arch, sizes, until="map", **options)
                mapped = result
            short = [f"needs {need} {res}, has {cap}"
                     for res, (need, cap) in result.context_resources().items() if need > cap]
            if short:       # tiling keeps the shared units: the next array
                passed.append(f"{name}: {short[0]}")
                continue
            result.run("netlist")
        except size_errors() as e:
            if not tile:
                raise
            short = [str(e).splitlines()[0]]
        else:
            short = [f"needs {need} {res}, has {cap}"
                     for res, (need, cap) in result.resources().items() if need > cap]
        if short and tile:
            from .frontend.source import AppSource, load_app
            source = (mapped.source if mapped is not None else
                      AppSource(app.name, app, None, dict(sizes or {}))
                      if isinstance(app, Program) else load_app(str(app), sizes or {}))
            if log:
                log(f"{source.name} as a whole does not fit {name} ({short[0]}): tiling")
            try:
                return (compile_tiled(source, arch, until, log=log, overlap=overlap,
                                      **options),
                        ArchChoice(name, passed, routes))
            except (TilingError, PnRError) as e:
                passed.append(f"{name}: {short[0]}; tiled: {str(e).splitlines()[0]}")
                continue
        if short:
            passed.append(f"{name}: {short[0]}")
            continue
        try:
            result.run(until)
        except PnRError as e:
            passed.append(f"{name}: {str(e).splitlines()[0]}")
            continue
        return result, ArchChoice(name, passed, routes)
    raise FitError(f"{getattr(app, 'name', app)} fits no shipped array ({'; '.join(passed)})")


__all__ = ["CompileResult", "compile_app", "check_result", "DEFAULT_ARCH", "STAGES",
           "PUB_ARCH", "shipped_arrays", "compile_on_smallest", "ArchChoice",
           "FitError", "require_fit", "resources", "tile_capacity", "NetlistError",
           "context_need", "compile_fitting", "compile_tiled", "size_errors",
           "compile_channel_blocks",
           "user_errors", "backend_figures"]
