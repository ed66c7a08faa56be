"""One design point of a sweep: ``evaluate_point(app, params, stages) -> dict``.

A point is an application with some parameters set (its sizes, e.g. ``unroll=4``, and the
options below), run through a sequence of *stages*. :data:`STAGES` is the table of stage
functions; each takes the :class:`Point` (the state the earlier stages left), runs one step of
the flow and records its figures in ``point.metrics``. What exists today:

* ``schedule``: tree-height reduction, extraction, both schedules, isl verification, liveness,
  unified buffers (``compiler.schedule.report.schedule_program``; thesis ch. 4): ``cycles``,
  ``cycles_sequential``, ``sram_words`` (live words of the optimized schedule, paper
  Table VII's "final SRAM words"), ``sram_words_sequential``, ``policy``;
* ``map``: buffer mapping of every unified buffer (``compiler.mapping.map_buffer.map_buffers``;
  thesis ch. 5): ``mems`` (memory tiles, or the ``backend``'s memory count, thesis Table 7.3),
  ``registers`` (shift-register stages), ``register_file_words`` (thesis §5.4),
  ``mem_sram_words`` (words the memory tiles address), ``controller_pes`` (``dp-pe``: the PEs
  of the controllers synthesised on PEs), ``buffets`` (``rv``: the memories as buffets),
  ``register_file_banks`` and ``read_ports`` (read ports of the buffers on the array: the
  memories of the exhaustive duplication thesis Table 7.8 starts from); ``mems`` counts the
  MEM tiles the register files take too (``register_file_tiles``, ``pub_mems``);
* ``netlist``: the PE/MEM/IO netlist (``compiler.backend.build.build_netlist``, the last stage
  of ``compiler.pipeline.compile_app``): ``pes``, ``mems`` (MEM tiles, register files
  included), ``ios``, ``register_stages`` (every register of the netlist),
  ``cycles_predicted``; the fit becomes
  the pipeline's (``compiler.pipeline.resources``).

* ``pnr``: place and route of the netlist (``compiler.backend.pnr``; docs/pnr.md):
  ``place_seconds``, ``route_seconds``, ``wirelength``, ``pipeline_registers``,
  ``register_pes``, ``max_comb_hops``, ``bitstream_words``, ``tile_area_um2``, ``pnr_check``;
  not run for a netlist that does not fit; a design the placer or router cannot fit (register
  PEs the netlist does not count, no route) does not fit either (resource ``place and route``);
* ``sim`` (optional): the design confirmed on the RTL, end to end in Verilator (the job of
  ``make sim``; :func:`stage_sim` imports the simulator lazily: the compiler never imports
  ``sim``): ``sim_passed``, ``cycles_measured``, ``sim_seconds``, ``session_cycles``,
  ``run_cycles``, ``run_cycles_per_s``, ``verilator_build_seconds``; a failed run is the
  point's error (``error_kind`` ``check``, not cached).

Without the netlist stage ``pes`` is ``None`` with the note :data:`PES_PENDING` and ``fits``
checks what the mapping knows. A later stage (place and route, simulation) is one more function
in :data:`STAGES` that reads what the earlier ones left on the :class:`Point` and sets its
metrics.

Options (every other parameter is a size of the application, ``apps/<app>.py``):
``arch`` (constraints file name or path; default: the smallest shipped array the point fits,
:func:`evaluate_point`; sweeps whose figures are compared over time name one),
``threshold`` (largest delay kept in shift registers, default 20, thesis §5.1.2), ``policy``
(``auto``/``stencil``/``dnn``/``sequential``), ``backend`` (``pub``/``dp``/``dp-pe``/``rv``:
the memories the point maps onto, thesis Table 6.1, ``ubc map --backend``; default the arch's
``[mem] kind``; ``rv`` runs the schedule and map stages only: the ready-valid CGRA is not
built) and ``fetch_width`` (overrides the arch's
``[pub] fetch_width`` for every stage; ``fetch_width=1`` schedules for single-word-fetch
memories, thesis Table 7.4), ``ports`` (1 or 2: the memories' read and write ports, thesis
Fig. 7.9's dual-port memory is ``ports=1 fetch_width=1``) and ``cycle_width`` (the controllers'
cycle counter, for schedule studies longer than the shipped 20 bits).

* ``occupancy``: compute occupancy of the optimized and the sequential schedule
  (``compiler.schedule.occupancy``, thesis Figs. 7.6-7.9).

A point never raises: an exception, a size the application refuses or a buffer the mapping
refuses is a result with ``status = "error"`` and a one-line ``error`` naming the stage; a
design that exceeds the array is ``status = "does-not-fit"`` with ``fits = False`` and the
resources that ran out in ``out_of``.
"""
from __future__ import annotations

import inspect
import time
import traceback
from dataclasses import dataclass, field, replace
from typing import Callable

from ubgen.arch import Arch, load_arch

from ..mapping.shift_register import DEFAULT_THRESHOLD
DEFAULT_STAGES = ("schedule", "map", "netlist")
PES_PENDING = "pes: not counted: the netlist stage did not run"
FIT_BASIS = ("without a netlist, fits checks the MEM tiles (buffer mapping) and the "
             "global-buffer words (input and output buffers) against the arch, not the PEs")
OPTIONS: dict[str, type] = {"arch": str, "threshold": int, "policy": str, "backend": str,
                            "fetch_width": int, "ports": int, "cycle_width": int}
POLICIES = ("auto", "stencil", "dnn", "dnn-db", "hls", "sequential")
# keys of a result that a parameter may not be called
RESULT_KEYS = frozenset({
    "arch_choice", "app", "stages", "status", "error", "error_kind", "pes", "mems", "sram_words", "cycles",
    "cycles_sequential", "sram_words_sequential", "policy", "registers", "register_file_words",
    "mem_sram_words", "controller_pes", "glb_words", "buffets", "read_ports",
    "register_file_banks", "pub_mems", "register_file_tiles", "ios", "cycles_predicted",
    "register_stages", "fits", "out_of", "fit", "seconds",
    "notes", "code", "cached", "key", "refused", "place_seconds", "route_seconds", "wirelength",
    "pipeline_registers", "register_pes", "max_comb_hops", "bitstream_words", "pnr_check",
    "occupancy", "occupancy_sequential", "occupancy_detail", "compute_pes", "shared_pes",
    "schedule_generators", "generator_tiles", "context_rf_tiles", "mem_tiles_by_buffer",
    "tile_area_um2", "sim_passed", "cycles_measured", "sim_seconds", "session_cycles",
    "run_cycles", "run_cycles_per_s", "verilator_build_seconds", "traceback", "runs", "tile",
    "cycles_per_run", "channel_blocks"})


class PointError(ValueError):
    """A point whose parameters cannot be evaluated (unknown parameter, bad option value)."""


@dataclass
class Point:
    """The state of one point as it goes through the stages: the driver's
    :class:`compiler.pipeline.CompileResult` (``flow``), advanced one stage at a time, and the
    figures recorded so far."""
    app: str
    params: dict
    sizes: dict[str, int]
    arch: Arch
    threshold: int = DEFAULT_THRESHOLD
    policy: str | None = None
    backend: str = "pub"
    flow: object = None              # compiler.pipeline.CompileResult
    resources: dict | None = None    # compiler.pipeline.resources of the netlist
    metrics: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def run(self, stage: str):
        """Advance the driver to ``stage`` (the frontend on first use)."""
        if self.flow is None:
            from ..pipeline import compile_app
            self.flow = compile_app(self.app, self.arch, self.sizes, threshold=self.threshold,
                                    policy=self.policy, until="frontend")
        return self.flow.run(stage)

    @property
    def program(self):
        return self.flow.program if self.flow else None

    @property
    def schedule(self):              # compiler.schedule.report.ScheduleResult
        return self.flow.scheduled if self.flow else None

    @property
    def impls(self):                 # buffer name -> compiler.ir.ubimpl.UBImpl
        return self.flow.impls if self.flow else None

    @property
    def refused(self):               # buffer name -> one-line reason
        return self.flow.refused if self.flow else None

    @property
    def netlist(self):
        return self.flow.netlist if self.flow else None


# --------------------------------------------------------------------------------------------
# parameters


def app_size_names(app: str) -> set[str] | None:
    """The sizes ``apps/<app>.py``'s (or a Python app file's) ``build`` accepts; ``None`` for a
    Program JSON file."""
    if app.endswith(".json"):
        return None
    if app.endswith(".py"):
        from ..frontend.source import load_module
        return set(inspect.signature(load_module(app).build).parameters)
    from apps import get_app
    return set(inspect.signature(get_app(app).build).parameters)


def split_params(app: str, params: dict) -> tuple[dict[str, int], dict]:
    """``(sizes, options)`` of a point's parameters; a one-line :class:`PointError` for a name
    that is neither an option nor a size of the app, or a value of the wrong type."""
    sizes, options = {}, {}
    names = app_size_names(app)
    for key, value in params.items():
        if key in RESULT_KEYS and key not in OPTIONS:
            raise PointError(f"parameter name '{key}' is reserved for a result field")
        if key in OPTIONS:
            kind = OPTIONS[key]
            if kind is int and (not isinstance(value, int) or isinstance(value, bool)):
                raise PointError(f"parameter {key} must be an integer, got {value!r}")
            if kind is str and not isinstance(value, str):
                raise PointError(f"parameter {key} must be a name, got {value!r}")
            options[key] = value
            continue
        if names is None:
            raise PointError(f"{app} is a Program file: it has no size '{key}'")
        if key not in names:
            raise PointError(f"{app} has no size '{key}'; its sizes: {', '.join(sorted(names))}; "
                             f"options: {', '.join(OPTIONS)}")
        if not isinstance(value, int) or isinstance(value, bool):
            raise PointError(f"size {key} must be an integer, got {value!r}")
        sizes[key] = value
    from ..mapping.report import BACKENDS
    if options.get("backend", "pub") not in BACKENDS:
        raise PointError(f"backend must be one of {', '.join(BACKENDS)}, got "
                         f"{options['backend']!r}")
    if options.get("policy", "auto") not in POLICIES:
        raise PointError(f"policy must be one of {', '.join(POLICIES)}, got {options['policy']!r}")
    if options.get("threshold", 0) < 0:
        raise PointError(f"threshold must be non-negative, got {options['threshold']}")
    return sizes, options


def make_point(app: str, params: dict, arch_name: str | None = None) -> Point:
    """The point of ``params`` on its ``arch`` option, or on ``arch_name`` when it has none
    (the default rule, :func:`evaluate_point`), else on the smallest shipped array."""
    from ..mapping.report import backend_arch
    from ..pipeline import shipped_arrays
    sizes, options = split_params(app, params)
    arch = load_arch(options.get("arch") or arch_name or shipped_arrays()[0])
    backend = options.get("backend", arch.mem.kind)
    arch = backend_arch(arch, backend)
    if "fetch_width" in options:
        fw = options["fetch_width"]
        if fw < 1 or fw & (fw - 1):
            raise PointError(f"fetch_width must be a power of two, got {fw}")
        arch = replace(arch, pub=replace(arch.pub, fetch_width=fw))
    if "ports" in options:
        n = options["ports"]
        if n not in (1, 2):
            raise PointError(f"ports must be 1 or 2, got {n}")
        arch = replace(arch, pub=replace(arch.pub, input_ports=n, output_ports=n))
    if "cycle_width" in options:
        w = options["cycle_width"]
        if not 8 <= w <= 32:
            raise PointError(f"cycle_width must be between 8 and 32, got {w}")
        arch = replace(arch, pub=replace(arch.pub, controller=replace(arch.pub.controller,
                                                                      cycle_width=w)))
    policy = options.get("policy", "auto")
    return Point(app, dict(params), sizes, arch, options.get("threshold", DEFAULT_THRESHOLD),
                 None if policy == "auto" else policy, backend)


# --------------------------------------------------------------------------------------------
# stages


def stage_schedule(pt: Point) -> None:
    """Build the program, schedule it (sequential and optimized), verify, extract buffers."""
    from ..schedule.liveness import total_live_words
    res = pt.run("schedule").scheduled
    pt.metrics.update(policy=res.optimized.policy, cycles=res.optimized.completion,
                      cycles_sequential=res.sequential.completion,
                      sram_words=total_live_words(res.live_optimized),
                      sram_words_sequential=total_live_words(res.live_sequential),
                      glb_words=glb_words(pt.program))


def stage_map(pt: Point) -> None:
    """Map every unified buffer (thesis ch. 5); a refused buffer fails the point."""
    from ..mapping.report import map_report
    from ..pipeline import backend_figures
    from ..schedule.liveness import total_live_words
    if pt.schedule is None:
        raise PointError("the map stage needs the schedule stage")
    # mapping may schedule again, with delayed producers kept early (map_scheduled)
    pt.run("map")
    pt.metrics.update(cycles=pt.schedule.optimized.completion,
                      sram_words=total_live_words(pt.schedule.live_optimized))
    extra = backend_figures(pt.impls, pt.backend) if not pt.refused else {}
    rep = map_report(pt.app, pt.impls, pt.refused, pt.backend, pt.arch, extra)
    on_array = [n for n, impl in pt.impls.items() if impl.level != "GLB"]
    pt.metrics.update(mems=rep["backend"]["mems"] + rep["register_file_tiles"],
                      pub_mems=rep["backend"]["mems"],
                      register_file_tiles=rep["register_file_tiles"],
                      registers=rep["registers"],
                      register_file_words=rep["register_file_words"],
                      register_file_banks=sum(len(pt.impls[n].register_files) for n in on_array),
                      mem_sram_words=sum(rep["sram_words_per_mem"]),
                      read_ports=sum(len(pt.schedule.buffers[n].outputs) for n in on_array),
                      **extra)
    if pt.refused:
        pt.metrics["refused"] = dict(pt.refused)
        name, why = next(iter(pt.refused.items()))
        more = f" (and {len(pt.refused) - 1} more)" if len(pt.refused) > 1 else ""
        raise MappingRefused(f"{why}{more}")


class MappingRefused(ValueError):
    """A buffer the mapping passes refuse (the point is reported, not raised)."""


def stage_netlist(pt: Point) -> None:
    """The PE/MEM/IO netlist (``compiler.backend.build`` through the driver's ``netlist``
    stage, which also checks that the schedule's live words and the mapping agree): ``pes``,
    ``mems`` and ``ios`` are its tiles, and the fit is the pipeline's (PE, MEM, IO tiles, GLB
    banks, GLB words per bank)."""
    from ..pipeline import resources
    if pt.impls is None:
        raise PointError("the netlist stage needs the map stage")
    if pt.backend == "rv":
        raise PointError("backend rv: the ready-valid CGRA the buffets need is not built; "
                         "rv points run the schedule and map stages")
    net = pt.run("netlist").netlist
    pt.metrics.update(pes=net.count("pe"), mems=net.count("mem"), ios=net.count("io"),
                      register_stages=net.register_stages(),
                      cycles_predicted=net.cycles_predicted, **sharing_counts(net))
    pt.resources = resources(net, pt.arch)


def stage_pnr(pt: Point) -> None:
    """Place and route the netlist (``compiler.backend.pnr.place_and_route``, seed 0; paper §V
    "Finishing Steps", docs/pnr.md): ``place_seconds``, ``route_seconds``, ``wirelength``,
    ``pipeline_registers``, ``register_pes``, ``max_comb_hops``, ``bitstream_words`` (the
    configuration words), ``tile_area_um2`` (the area of the tiles the design occupies,
    ``ubgen.areas``; None for an arch whose tiles were never measured) and the bitstream
    checker's verdict ``pnr_check``. A netlist that does not fit the array is not
    placed (the point is "does-not-fit" with the resources that ran out); a design that cannot
    be routed fails the point with the router's one-line error."""
    from ..backend.pnr import PnRError
    if pt.netlist is None:
        raise PointError("the pnr stage needs the netlist stage")
    if any(need > have for need, have in pt.resources.values()):
        pt.notes.append("pnr: not run: the netlist does not fit the array")
        return
    try:
        s = pt.run("pnr").pnr.summary()
    except PnRError as e:        # e.g. register PEs the netlist does not count: does not fit
        pt.notes.append(f"pnr: {str(e).splitlines()[0]}")
        pt.resources = dict(pt.resources, **{PNR_RESOURCE: (1, 0)})
        return
    pt.metrics.update({k: s[k] for k in PNR_KEYS}, pnr_check=s["check"])


def stage_occupancy(pt: Point) -> None:
    """Compute occupancy of the optimized and the sequential schedule
    (``compiler.schedule.occupancy``; thesis Figs. 7.6-7.9): ``occupancy``,
    ``occupancy_sequential``, ``compute_pes`` (the PEs of the compute units, a shared unit
    once) and ``occupancy_detail`` (per unit its PEs and issues). Run without the schedule
    stage, it schedules the point alone (``compiler.schedule.report.schedule_only``: no
    sequential baseline, no liveness), for layers too large to enumerate."""
    from ..backend.kernel_map import map_kernel
    from ..ir.hw import HwParams
    from ..schedule.occupancy import occupancy
    from ..schedule.report import schedule_only
    if pt.schedule is not None:
        res = pt.schedule
        program, opt, seq = res.program, res.optimized, res.sequential
    else:               # without the schedule stage: the optimized schedule alone
        program, opt = schedule_only(pt.run("frontend").program, HwParams.from_arch(pt.arch),
                                     pt.policy)
        seq = None
        pt.metrics.update(policy=opt.policy, cycles=opt.completion)
    lat = pt.arch.schedule.pe_latency
    pes = {op.name: map_kernel(op.kernel, lat).pes for op in program.ops()}
    occ = occupancy(program, opt, pes)
    pt.metrics.update(occupancy=round(occ.value, 4), compute_pes=occ.pes,
                      occupancy_detail=occ.to_dict()["units"])
    if seq is not None:
        pt.metrics["occupancy_sequential"] = round(occupancy(program, seq, pes).value, 4)


def sharing_counts(net) -> dict[str, int]:
    """What compute sharing put in a netlist (docs/backend.md "Compute sharing"):
    ``shared_pes`` (PEs of shared units), ``schedule_generators`` (``tb2out`` controllers
    used as schedule generators: context switches and bank selects), ``generator_tiles`` (MEM
    tiles added only for them), ``context_rf_tiles`` (MEM tiles holding the banks of several
    ops' operands with two register-file contexts) and ``mem_tiles_by_buffer`` (what the MEM
    tiles hold: buffer -> tiles; a context tile under its banks' buffers joined by ``+``,
    schedule-generator tiles under ``timer``)."""
    g = net.graph
    by_buffer: dict[str, int] = {}
    for n in net.nodes("mem"):
        d = g.nodes[n]
        if d.get("banks"):
            key = "+".join(sorted({str(b).split(".")[0] for b in d["banks"]}))
        else:
            key = "timer" if n.startswith("timer.") else str(d.get("buffer"))
        by_buffer[key] = by_buffer.get(key, 0) + 1
    return {"mem_tiles_by_buffer": dict(sorted(by_buffer.items())), "shared_pes": sum(1 for _n, d in g.nodes(data=True) if d.get("shared")),
            "schedule_generators": sum(len(d.get("generators", [])) for _n, d in
                                       g.nodes(data=True)),
            "generator_tiles": sum(1 for n in net.nodes("mem") if n.startswith("timer.")),
            "context_rf_tiles": sum(1 for _n, d in g.nodes(data=True) if d.get("banks"))}


PNR_RESOURCE = "place and route"      # the pseudo-resource of a design that does not route


class CheckFailed(RuntimeError):
    """A check of a stage failed (the simulation's output or cycles): reported as the point's
    error, never cached (a rerun retries it)."""


def stage_sim(pt: Point) -> None:
    """End to end on the generated RTL (docs/simulation.md, the job of ``make sim``): the
    placed and routed design's bundle run on ``cgra_top`` in Verilator, bit-exact against the
    golden with the measured cycles equal to the prediction. The simulator is imported here,
    not at module level: the compiler does not depend on ``sim``, the sweep sits on top of
    both (docs/design.md §2). Figures: ``sim_passed``, ``cycles_measured``, ``sim_seconds``
    (the host session), ``session_cycles``, ``run_cycles``, ``run_cycles_per_s``,
    ``verilator_build_seconds``; a failed run fails the point (:class:`CheckFailed`), and so
    does a bitstream the independent checker (``compiler.backend.check``) refused, before it
    is simulated. Not run for a design that does not fit or route."""
    if pt.flow is None or pt.flow.pnr is None:
        if any(need > have for need, have in (pt.resources or {}).values()):
            pt.notes.append("sim: not run: the design does not fit the array")
            return
        raise PointError("the sim stage needs the pnr stage")
    if not pt.flow.pnr.check.ok:
        raise CheckFailed(f"bitstream checker {pt.flow.pnr.check.summary()}")
    from sim.array_run import model_for, run_bundle
    bundle = pt.run("bundle").bundle
    model = model_for(pt.arch)
    # a tiled point: the host runs every tile on the whole arrays and stitches them
    arrays = ({"inputs": pt.flow.inputs, "expected": pt.flow.golden.outputs}
              if pt.flow.tiling is not None else None)
    res = run_bundle(bundle, pt.arch, model=model, arrays=arrays)
    run = res.get("stages", {}).get("run", {})
    pt.metrics.update(sim_passed=res["passed"], cycles_measured=res["cycles_measured"],
                      sim_seconds=res["sim_seconds"], session_cycles=res.get("sim_cycles"),
                      run_cycles=run.get("cycles"),
                      run_cycles_per_s=round(run["cycles"] / run["seconds"])
                      if run.get("seconds") else None,
                      verilator_build_seconds=model["verilator_build_seconds"])
    if not res["passed"]:
        raise CheckFailed("; ".join(res["failures"]))


PNR_KEYS = ("place_seconds", "route_seconds", "wirelength", "pipeline_registers",
            "register_pes", "max_comb_hops", "bitstream_words", "tile_area_um2")

# The stages a point can run, in flow order. A new stage is one entry here: a function of the
# Point that reads what earlier stages left (pt.program, pt.schedule, pt.impls, ...) and sets
# pt.metrics (e.g. "pes" from the netlist; place-and-route and simulation figures).
STAGES: dict[str, Callable[[Point], None]] = {
    "schedule": stage_schedule,
    "map": stage_map,
    "netlist": stage_netlist,
    "pnr": stage_pnr,
    "occupancy": stage_occupancy,
    "sim": stage_sim,
}
# Stages that need an earlier one in the same run (the stage reads what it leaves).
REQUIRES: dict[str, str] = {"sim": "pnr"}


def glb_words(program) -> int:
    """Words of the buffers the global buffer holds (the program's inputs and outputs)."""
    total = 0
    for buf in program.buffers.values():
        if buf.kind in ("input", "output") and buf.shape:
            n = 1
            for e in buf.shape:
                n *= e
            total += n
    return total


def fit(arch: Arch, metrics: dict, resources: dict | None = None) -> dict:
    """Resources used against what the array has: ``{resource: {used, available}}``, with
    ``fits`` (``None`` when the constraints file describes no array or nothing was measured)
    and ``out_of`` (the resources that ran out). With a netlist, ``resources`` is the
    pipeline's (``compiler.pipeline.resources``: PE, MEM, IO tiles, GLB banks and words);
    without one, the MEM tiles of the mapping and the GLB words are checked."""
    if "array" not in arch.raw:
        return {"fits": None, "out_of": None,
                "fit": {"note": f"arch {arch.name} describes no array ([array] section)"}}
    if resources is not None:
        out_of = [k for k, (need, have) in resources.items() if need > have]
        return {"fits": not out_of, "out_of": out_of or None,
                "fit": {k: {"used": n, "available": h} for k, (n, h) in resources.items()}}
    tiles = arch.array.tile_counts()
    table = {"pes": (metrics.get("pes"), tiles["pe"]), "mems": (metrics.get("mems"), tiles["mem"])}
    if "glb" in arch.raw:
        table["glb_words"] = (metrics.get("glb_words"), arch.glb.banks * arch.glb.bank_words)
    checked = {k: v for k, v in table.items() if v[0] is not None}
    out_of = [k for k, (used, avail) in checked.items() if used > avail]
    detail = {k: {"used": used, "available": avail} for k, (used, avail) in table.items()}
    if not checked:
        return {"fits": None, "out_of": None, "fit": detail}
    return {"fits": not out_of, "out_of": out_of or None, "fit": detail}


# --------------------------------------------------------------------------------------------
# a point


def _user_errors() -> tuple[type[BaseException], ...]:
    from ..ir.ubimpl import RegisterWidthError
    from ..mapping.common import MappingError
    from ..pipeline import user_errors
    return user_errors() + (MappingError, RegisterWidthError, MappingRefused, PointError)


def evaluate_point(app: str, params: dict, stages: tuple[str, ...] | list[str] = DEFAULT_STAGES
                   ) -> dict:
    """Run ``stages`` on ``app`` with ``params``; never raises (see the module docstring).

    Without an ``arch`` parameter the point runs on the smallest shipped array it fits
    (docs/cli.md; :func:`compiler.pipeline.shipped_arrays`, smallest first): on each in turn
    until one is not "does-not-fit"; ``arch`` and ``arch_choice`` in the result say which and
    why the smaller ones were passed over.

    The result has the params as keys plus ``app, stages, status, error, pes, mems,
    sram_words, cycles, fits, out_of, fit, seconds`` (per stage) and the other metrics."""
    if "arch" in params:
        return _evaluate_on(app, params, stages, None)
    from ..pipeline import shipped_arrays
    passed = []
    for name in shipped_arrays():
        result = _evaluate_on(app, params, stages, name)
        if result["status"] != "does-not-fit":
            break
        passed.append(f"{name}: out of {', '.join(result['out_of'])}")
    if result["status"] == "does-not-fit":
        result["arch_choice"] = f"fits no shipped array: {'; '.join(passed)}"
        return result
    result["arch_choice"] = (f"arch {result['arch']}: the smallest shipped array the point fits"
                             + (f"; passed over: {'; '.join(passed)}" if passed else ""))
    return result


def _evaluate_on(app: str, params: dict, stages, arch_name: str | None) -> dict:
    """One run of the stages on ``params``'s arch, or ``arch_name`` when it names none."""
    from .cache import code_digest
    result: dict = dict(params)
    result.update(app=app, stages=list(stages), status="ok", error=None, pes=None, mems=None,
                  sram_words=None, cycles=None, fits=None, out_of=None, seconds={},
                  notes=[], code=code_digest(), arch=params.get("arch", arch_name))
    try:
        unknown = [s for s in stages if s not in STAGES]
        if unknown:
            raise PointError(f"unknown stage(s) {', '.join(unknown)}; stages: {', '.join(STAGES)}")
        pt = make_point(app, params, arch_name)
    except _user_errors() as e:
        return _failed(result, "params", e, "user")
    failed = _run_stages(result, pt, stages)
    if failed is not None and failed[1] is not None and _tileable(pt, failed[1]):
        whole_why = str(failed[1]).splitlines()[0]
        result.update(status="ok", error=None)
        result.pop("error_kind", None)
        failed = _tile_point(result, pt, stages, whole_why)
        if failed is None and pt.flow.runs > 1:
            failed = _run_stages(result, pt, stages)
            if failed is None:
                _tiled_metrics(result, pt, whole_why)
    if failed is not None:
        return failed[0]
    result.update(fit(pt.arch, pt.metrics, pt.resources))
    if result["fits"] is False:
        result["status"] = "does-not-fit"
    return result


def _run_stages(result: dict, pt: Point, stages) -> tuple[dict, BaseException | None] | None:
    """Run ``stages`` on ``pt``; ``None`` when all ran, else the failed result and the
    user error that failed it (``None`` for a failed check or an internal error)."""
    for name in stages:
        t0 = time.perf_counter()
        try:
            STAGES[name](pt)
        except _user_errors() as e:
            _record(result, pt, name, time.perf_counter() - t0)
            return _failed(result, name, e, "user"), e
        except CheckFailed as e:    # a failed check: reported, not cached
            _record(result, pt, name, time.perf_counter() - t0)
            return _failed(result, name, e, "check"), None
        except Exception as e:      # an internal error: reported, never raised, not cached
            _record(result, pt, name, time.perf_counter() - t0)
            result["traceback"] = traceback.format_exc(limit=-3)
            return _failed(result, name, e, "internal"), None
        _record(result, pt, name, time.perf_counter() - t0)
    return None


# --------------------------------------------------------------------------------------------
# a point that does not fit one run: runs of one output tile (compiler.tiling, docs/tiling.md)

TILE_ATTEMPTS = 3           # tile shapes compiled before a point is reported as not fitting


def _tileable(pt: Point, e: BaseException) -> bool:
    """Whether the whole program failed for its size (the cycle counter, a memory chain, a
    register value: ``compiler.pipeline.size_errors``; a buffer the mapping refused, as
    ``compile_fitting`` takes it) and can be tried as runs of one tile."""
    from ..pipeline import size_errors
    return (isinstance(e, size_errors() + (MappingRefused,)) and pt.flow is not None
            and pt.flow.runs == 1
            and pt.flow.source is not None and pt.backend != "rv")


def _tile_point(result: dict, pt: Point, stages, why: str
                ) -> tuple[dict, BaseException | None] | None:
    """Compile ``pt`` as runs of one output tile (``compiler.pipeline.compile_tiled``, the
    fewest runs whose tile fits the arch, through the furthest of the point's stages from
    the netlist to place and route) and make its flow the tile's; ``None`` when a tile fits.
    When no output tile fits, none for want of hardware, and the app declares its reduction,
    channel blocks (:func:`_channel_blocks`). A tile or block that runs out of a resource of
    the array leaves the point "does-not-fit" with that resource (a genuine lack of
    hardware); any other failure is the point's error."""
    from ..pipeline import compile_tiled
    from ..tiling.region import TilingError
    until = "pnr" if "pnr" in stages or "sim" in stages else "netlist"
    t0 = time.perf_counter()
    flow = None
    try:
        flow = compile_tiled(pt.flow.source, pt.arch, until, attempts=TILE_ATTEMPTS,
                             threshold=pt.threshold, policy=pt.policy)
    except TilingError as e:
        tiled, short = f"; tiled: {str(e).splitlines()[0]}", getattr(e, "resources", None)
        if not short:                   # no output tile ran short of hardware: channel blocks
            try:
                flow = _channel_blocks(pt, until)
            except TilingError as e2:
                tiled += f"; channel blocks: {str(e2).splitlines()[0]}"
                short = getattr(e2, "resources", None)
        result["seconds"]["tiling"] = round(time.perf_counter() - t0, 3)
        if short:
            pt.resources = short
            pt.notes.append(f"whole program: {why}{tiled}")
            result["notes"] = list(pt.notes)
            return None
        if flow is None:
            return _failed(result, "tiling", TilingError(f"{why}{tiled}"), "user"), None
    result["seconds"]["tiling"] = round(time.perf_counter() - t0, 3)
    pt.flow = flow
    return None


def _channel_blocks(pt: Point, until: str):
    """The point as channel blocks (``compiler.pipeline.compile_channel_blocks``) when its
    app declares them (``None`` when it does not); raises ``TilingError`` when none fits."""
    from ..pipeline import compile_channel_blocks
    if getattr(pt.flow.source.module, "CHANNEL_BLOCKS", None) is None:
        return None
    return compile_channel_blocks(pt.flow.source, pt.arch, until, attempts=TILE_ATTEMPTS,
                                  threshold=pt.threshold, policy=pt.policy)


def _tiled_metrics(result: dict, pt: Point, why: str) -> None:
    """A tiled point's figures: ``runs``, ``tile`` (the output box), ``cycles_per_run`` (one
    run's schedule) and ``cycles`` (all runs: the loads and read-backs between runs are the
    host's and not counted)."""
    flow = pt.flow
    per_run = pt.metrics.get("cycles")
    shape = list(flow.tiling.shape) if flow.tiling is not None else None
    pt.metrics.update(runs=flow.runs, tile=shape, cycles_per_run=per_run,
                      cycles=flow.runs * per_run)
    how = []
    if flow.blocks is not None:
        b = flow.blocks
        pt.metrics["channel_blocks"] = b.runs
        how.append(f"{b.runs} channel blocks of {b.block} {b.spec['size']}")
    if shape is not None:
        how.append(f"{flow.tiling.runs} output tiles {shape}")
    pt.notes.append(f"tiled: whole program: {why}; {flow.runs} runs ({' x '.join(how)}), "
                    f"{per_run} cycles per run")
    result.update(pt.metrics)
    result["notes"] = list(pt.notes)


def _record(result: dict, pt: Point, stage: str, seconds: float) -> None:
    result["seconds"][stage] = round(seconds, 3)
    result.update(pt.metrics)
    result["notes"] = list(pt.notes) + ([PES_PENDING, FIT_BASIS] if result.get("pes") is None
                                         else [])


def _failed(result: dict, stage: str, e: BaseException, kind: str) -> dict:
    msg = str(e).splitlines()[0] if str(e) else type(e).__name__
    if kind == "internal":
        msg = f"internal error: {type(e).__name__}: {msg}"
    result.update(status="error", error=f"{stage}: {msg}", error_kind=kind)
    return result
