"""Choosing the tile shape for an arch: the fewest runs whose tile fits the global buffer, the
counters and the array (thesis §7.1; docs/tiling.md).

Candidates are output boxes of ``ceil(S / k)`` (rounded up to the alignment the indices need,
:meth:`.plan._Analysis.alignment`) per dimension, ordered by the number of runs, then by the
words the host moves per run. A candidate is first checked against the global buffer without
compiling: every host buffer of its tile Program must fit the banks its streams can use (one
bank per IO stream, as the netlist places them: ``bank_words`` times the buffer's loads for
an input, times its writers for an output). The first that passes is compiled
(:func:`compiler.pipeline.compile_app` on the tile Program); a tile that does not fit (the
cycle counter, a resource of the array, a chain of memories) rules out every box at least as
large in every dimension, and the next candidate is tried. Pure functions over the Program;
the compile goes through the driver.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from math import ceil, prod

from ubgen.arch import Arch

from ..ir.program import Program
from .plan import TilePlan, _Analysis, plan_tiles, starts
from .region import TilingError

MAX_RUNS = 16384            # candidates beyond this many runs are not considered


@dataclass
class Candidate:
    shape: tuple[int, ...]
    runs: int


@dataclass
class Choice:
    """The chosen plan and what was passed over (``"<shape>: <reason>"``)."""
    plan: TilePlan
    passed_over: list[str] = field(default_factory=list)


def candidates(an: _Analysis, align: tuple[int, ...]) -> list[Candidate]:
    """Every box shape ``ceil(S_d / k_d)`` rounded up to ``align``, fewest runs first, larger
    boxes first among equals."""
    per_dim = []
    for s, a in zip(an.whole, align):
        opts = {}
        for k in range(1, s + 1):
            t = min(s, ceil(ceil(s / k) / a) * a)
            st = starts(s, t, a)
            if st is not None:
                opts.setdefault(t, len(st))
            if ceil(s / k) <= a:
                break
        per_dim.append(sorted(opts.items(), reverse=True))
    out = []
    for combo in itertools.product(*per_dim):
        runs = prod(n for _t, n in combo)
        if runs <= MAX_RUNS:
            out.append(Candidate(tuple(t for t, _n in combo), runs))
    out.sort(key=lambda c: (c.runs, -prod(c.shape)))
    return out


def glb_fits(program: Program, arch: Arch, regions: int = 1) -> str | None:
    """Why the tile Program's host buffers do not fit the global buffer (``None``: they do):
    each IO stream takes one bank; a buffer read by ``n`` loads (written by ``n`` ops) has
    ``n`` banks' words. ``regions`` = 2: each bank holds two regions (the double buffer of an
    overlapped host, ``compiler.backend.glb.double_buffer``), half its words each."""
    loads: dict[str, int] = {}
    stores: dict[str, set[str]] = {}
    for op in program.ops():
        for ld in op.loads:
            loads[ld.buffer] = loads.get(ld.buffer, 0) + 1
        stores.setdefault(op.store.buffer, set()).add(op.name)
    total = 0
    for b, d in program.buffers.items():
        if d.kind == "temp":
            continue
        words = prod(d.shape)
        total += words
        streams = loads.get(b, 0) if d.kind == "input" else len(stores.get(b, ()))
        cap = arch.glb.bank_words * max(1, streams) // regions
        if words > cap:
            return f"{d.kind} {b} needs {words} GLB words, its {max(1, streams)} stream(s) " \
                   f"have {cap}" + (f" in each of {regions} regions" if regions > 1 else "")
    if total > arch.glb.banks * arch.glb.bank_words // regions:
        return f"host buffers need {total} GLB words, the global buffer has " \
               f"{arch.glb.banks * arch.glb.bank_words // regions}" + \
               (f" in each of {regions} regions" if regions > 1 else "")
    return None


def dominated(shape: tuple[int, ...], failed: list[tuple[int, ...]]) -> bool:
    return any(all(a >= b for a, b in zip(shape, f)) for f in failed)


def choose(program: Program, arch: Arch, compile_fits, attempts: int = 8,
           log=None, regions: int = 1) -> Choice:
    """The first candidate (module docstring) whose tile fits the global buffer (in each of
    ``regions`` regions, :func:`glb_fits`) and for which ``compile_fits(plan)`` returns
    ``None`` (else a one-line reason). Raises :class:`TilingError` when ``attempts`` compiles
    fail or no candidate is left."""
    say = log or (lambda msg: None)
    an = _Analysis(program)
    probe = tuple(max(1, ceil(s / 2)) for s in an.whole)
    align = an.alignment(probe)
    failed: list[tuple[int, ...]] = []
    passed: list[str] = []
    tried = 0
    for runs, same in itertools.groupby(candidates(an, align), key=lambda c: c.runs):
        if runs == 1:
            continue                      # the whole program: the caller's own attempt
        group = []
        for c in same:
            if dominated(c.shape, failed):
                continue
            try:
                quick = plan_tiles(program, c.shape, check_all=False, analysis=an)
            except TilingError as e:
                passed.append(f"{list(c.shape)}: {e}")
                continue
            if glb_fits(quick.program, arch, regions) is not None:
                failed.append(c.shape)
                continue
            group.append((quick.host_words(), c))
        for _words, best in sorted(group, key=lambda g: g[0]):
            try:
                plan = plan_tiles(program, best.shape, analysis=an)
            except TilingError as e:
                passed.append(f"{list(best.shape)}: {e}")
                continue
            tried += 1
            say(f"tile {list(best.shape)}: {plan.runs} runs, {plan.host_words()} host words "
                f"per run; compiling the tile")
            why = compile_fits(plan)
            if why is None:
                return Choice(plan, passed)
            passed.append(f"{list(best.shape)}: {why}")
            failed.append(best.shape)
            if tried >= attempts:
                raise TilingError(f"{program.name}: no tile fits {arch.name} after {tried} "
                                  f"compiled tile shapes ({passed[-1]})")
    raise TilingError(f"{program.name}: no tile shape fits {arch.name}"
                      + (f" ({passed[-1]})" if passed else ""))
