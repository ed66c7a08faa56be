"""Host streams split over several IO tiles, a middle-end pass: Program -> Program
(docs/design.md §3, docs/scheduling.md "Streams split over several IO tiles").

An IO tile moves one word per cycle between the global buffer and the array (docs/io.md), so
a copy stage that streams a host input into an on-chip buffer (``stream_to_accelerator``), a
drain that streams a buffer to a host output, or an initialization that writes a constant into
a buffer, runs at one word per cycle. A compute stage whose ops are unrolled reads or writes
that buffer ``L`` words per cycle; behind (or ahead of) a one-word stream it waits. gemm at 8x8
(apps/gemm.py) loaded ``A`` in 4096 cycles before its first reduction sweep could finish, and
drained ``C`` in 4096 cycles after its last one: 11287 cycles for 4096 cycles of MACs. The
thesis's system feeds the array from the global buffer through many IO tiles in parallel
(§6.3, §7.1).

This pass splits such a *stream op* into ``k`` ops ``<op>_0 ... <op>_{k-1}``: op ``r`` walks
the same loops with one loop ``v`` (extent ``E``) narrowed to ``E / k`` and ``v`` replaced by
``k * v + r`` in its indices, so the ops' slices are the residues of ``v`` modulo ``k`` and
cover the op's elements exactly once (:func:`check_cover`). Each op has its own load and store
port, so the backend gives each its own IO tile and GLB layout (``compiler.backend.build``,
one IO tile per host port) and the host bundle follows from the netlist (``compiler.backend.
glb``). The on-chip buffer receives ``k`` write (or read) ports: buffer mapping banks it as it
banks the compute ops' ports, with every check as strict as before.

Which ops, which loop, which ``k``:

* a stream op is alone in its loop nest (its nest is a top-level node of the Program), its own
  compute unit, without a loop phase in its kernel, stores at one distinct loop variable per dimension (no constant), loads at
  most one buffer at the same variables (an elementwise op: its instances are independent),
  and either loads a host input and stores an on-chip buffer, loads an on-chip buffer and
  stores a host output, or loads nothing and stores an on-chip buffer (a constant);
* the *lanes* of the on-chip buffer in dimension ``d``: over the other ops touching it, grouped
  by their enclosing loop (one pipeline stage), the accesses ``c * u + e`` (one loop variable
  ``u``, coefficient ``c > 1``) in dimension ``d`` touch ``#{e mod c}`` new elements per
  step of ``u``: gemm's ``a_mem[8 * ko + kk, i]``, ``kk < 8``, has 8 lanes in dimension 0;
  a stencil window ``x + dx`` has coefficient 1 and one lane;
* the split is along the dimension with the most lanes ``L > 1`` (ties: the dimension whose
  loop is outermost in the stream op's nest) by ``k = L``, when ``L`` divides the loop's extent;
  with ``io_streams`` given (the arch's IO tiles), the largest ``k`` are halved until the host
  ports fit.

The split is exact: the op's instances read nothing it writes, so any order and any partition
of them computes the same values; the scheduler places the new ops (and the isl verifier checks
them) like any other. :func:`compiler.schedule.report.schedule_program` keeps the split only
when its schedule is shorter, and :func:`compiler.pipeline.map_scheduled` compiles without it
when mapping refuses a buffer of the split program.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..ir.expr import LoopPhase
from ..ir.index import Index
from ..ir.program import Op, Program, ProgramError
from .reduction_order import _plain_vars, band, nest_chain


@dataclass
class StreamSplit:
    """The Program after the pass; per split op: ``(buffer dimension, loop, k)``; the split
    ops that walk their slices serially (one op)."""
    program: Program
    split: dict[str, tuple[int, str, int]] = field(default_factory=dict)
    serial: frozenset[str] = frozenset()


def stream_buffer(program: Program, op: Op) -> str | None:
    """The on-chip buffer ``op`` streams to or from when it is a stream op (module docstring),
    else ``None``."""
    if op.store is None or op.unit is not None or len(op.loads) > 1:
        return None
    if op.kernel is not None and any(isinstance(n, LoopPhase) for n in op.kernel.nodes()):
        return None                 # a loop phase names the loop the split would renumber
    loops = band(op)
    if not loops or len(loops) != len(op.loops) or loops[0].parent is not program:
        return None
    dims = _plain_vars(op.store.index)
    if dims is None or set(dims) != {lp.name for lp in loops}:
        return None
    kind = {b: d.kind for b, d in program.buffers.items()}
    dst = kind[op.store.buffer]
    if not op.loads:
        return op.store.buffer if dst == "temp" else None
    ld = op.loads[0]
    if _plain_vars(ld.index) != dims:
        return None
    src = kind[ld.buffer]
    if src == "input" and dst == "temp":
        return op.store.buffer
    if src == "temp" and dst == "output":
        return ld.buffer
    return None


def _accesses(op: Op, buffer: str) -> list[tuple[Index, ...]]:
    acc = [a.index for a in op.loads if a.buffer == buffer]
    if op.store is not None and op.store.buffer == buffer:
        acc.append(op.store.index)
    return acc


def buffer_lanes(program: Program, buffer: str, exclude: set[str]) -> list[int]:
    """Per dimension of ``buffer``, the new elements the ops outside ``exclude`` touch per step
    (module docstring: the largest ``#{e mod c}`` over one stage's accesses ``c * u + e``)."""
    rank = len(program.buffers[buffer].shape or ())
    lanes = [1] * rank
    stages: dict[int, list[tuple[Index, ...]]] = {}
    for op in program.ops():
        if op.name not in exclude:
            stages.setdefault(id(op.parent), []).extend(_accesses(op, buffer))
    for accs in stages.values():
        for d in range(rank):
            groups: dict[tuple, set[int]] = {}
            for index in accs:
                ix = index[d]
                if ix.floors or len(ix.terms) != 1 or ix.terms[0][1] <= 1:
                    continue
                c = ix.terms[0][1]
                groups.setdefault(ix.terms, set()).add(ix.const % c)
            for residues in groups.values():
                lanes[d] = max(lanes[d], len(residues))
    return lanes


def plan_splits(program: Program, io_streams: int = 0,
                serial: frozenset[str] = frozenset()) -> dict[str, tuple[int, str, int]]:
    """``{stream op: (buffer dimension, loop, k)}`` (module docstring); the ``serial`` ops
    need no IO tiles of their own."""
    ops = program.ops()
    streams = {op.name: b for op in ops if (b := stream_buffer(program, op)) is not None}
    plan: dict[str, tuple[int, str, int]] = {}
    for op in ops:
        buf = streams.get(op.name)
        if buf is None:
            continue
        lanes = buffer_lanes(program, buf, set(streams))
        dims = _plain_vars(op.store.index)
        order = [lp.name for lp in op.loops]
        best = None
        for d, (ln, var) in enumerate(zip(lanes, dims)):
            extent = next(lp.extent for lp in op.loops if lp.name == var)
            if ln > 1 and extent % ln == 0:
                key = (ln, -order.index(var))
                if best is None or key > best[0]:
                    best = (key, (d, var, ln))
        if best is not None:
            plan[op.name] = best[1]
    return _fit_io(program, plan, io_streams, serial)


def _fit_io(program: Program, plan: dict, io_streams: int, serial: frozenset) -> dict:
    """``plan`` with the largest parallel splits halved until the host ports fit
    ``io_streams`` (a serial split keeps its one port)."""
    if not io_streams:
        return plan
    host = {b for b, d in program.buffers.items() if d.kind in ("input", "output")}
    ports = sum(sum(a.buffer in host for a in op.loads) + (op.store.buffer in host)
                for op in program.ops())
    plan = dict(plan)

    def wide() -> list[str]:
        return [n for n in plan if n not in serial and _touches_host(program.op(n), host)]
    while ports + sum(plan[n][2] - 1 for n in wide()) > io_streams:
        even = [n for n in wide() if plan[n][2] % 2 == 0]
        if not even:
            return {n: s for n, s in plan.items() if n not in wide()}
        n = max(even, key=lambda m: plan[m][2])
        d, v, k = plan[n]
        plan[n] = (d, v, k // 2)
        if k // 2 == 1:
            del plan[n]
    return plan


def _touches_host(op: Op, host: set[str]) -> bool:
    return op.store.buffer in host or any(a.buffer in host for a in op.loads)


def _split_node(node: dict, var: str, k: int) -> list[dict]:
    """The op dict ``node`` as ``k`` op dicts over the residues of ``var`` modulo ``k``."""
    def index(acc: dict, r: int) -> dict:
        return {"buffer": acc["buffer"],
                "index": [f"{k}*{var} + {r}" if ix == var else ix for ix in acc["index"]]}
    return [dict(node, op=f"{node['op']}_{r}", unit=None,
                 loads=[index(a, r) for a in node["loads"]], store=index(node["store"], r))
            for r in range(k)]


def _serial_node(node: dict, var: str, k: int, lane: str) -> dict:
    """The op dict ``node`` with ``var`` replaced by ``k * var + lane`` (one op)."""
    def index(acc: dict) -> dict:
        return {"buffer": acc["buffer"],
                "index": [f"{k}*{var} + {lane}" if ix == var else ix for ix in acc["index"]]}
    return dict(node, loads=[index(a) for a in node["loads"]], store=index(node["store"]))


def _rewrite(node: dict, plan: dict, serial: frozenset) -> dict:
    if "op" in node:
        return node
    chain = nest_chain(node)
    leaf = chain[-1]
    if "op" not in leaf or leaf["op"] not in plan:
        return node
    _d, var, k = plan[leaf["op"]]
    heads = [dict(h, extent=h["extent"] // k if h["loop"] == var else h["extent"])
             for h in chain[:-1]]
    if leaf["op"] in serial:
        # one op walking the slices one after another: the quotient loop outermost, the
        # residue loop innermost (the order a consumer reading k lanes per step walks)
        lane = f"{var}_lane"
        heads = ([h for h in heads if h["loop"] == var] + [h for h in heads if h["loop"] != var]
                 + [{"loop": lane, "start": 0, "extent": k}])
        ops = [_serial_node(leaf, var, k, lane)]
    else:
        ops = _split_node(leaf, var, k)
    for head in reversed(heads):
        ops = [{"loop": head["loop"], "start": head["start"], "extent": head["extent"],
                "children": ops}]
    return ops[0]


def _elements(op: Op, which: str) -> np.ndarray:
    """Every element ``op`` stores (``which="store"``) or loads, one row per instance."""
    acc = op.store if which == "store" else op.loads[0]
    loops = op.loops
    grids = np.meshgrid(*(np.arange(lp.start, lp.start + lp.extent) for lp in loops),
                        indexing="ij")
    env = {lp.name: g.ravel() for lp, g in zip(loops, grids)}
    n = grids[0].size if grids else 1
    return np.stack([np.broadcast_to(np.asarray(ix.evaluate(env)), (n,)) for ix in acc.index],
                    axis=1)


def check_cover(original: Op, parts: list[Op]) -> None:
    """The ops ``parts`` store every element ``original`` stores exactly once (no overlap, no
    gap, nothing outside), each from the element ``original`` loads for it; a one-line
    ``ProgramError`` otherwise."""
    want = {tuple(e) for e in _elements(original, "store").tolist()}
    got: list[tuple[int, ...]] = []
    for p in parts:
        st = _elements(p, "store")
        if original.loads and not np.array_equal(_elements(p, "load"), st):
            raise ProgramError(f"stream split of {original.name}: {p.name} loads other "
                               f"elements than it stores")
        got += map(tuple, st.tolist())
    if len(set(got)) != len(got):
        raise ProgramError(f"stream split of {original.name}: the parts overlap "
                           f"({len(got) - len(set(got))} elements stored twice)")
    if set(got) != want:
        miss, extra = len(want - set(got)), len(set(got) - want)
        raise ProgramError(f"stream split of {original.name}: the parts miss {miss} and add "
                           f"{extra} elements")


def split_streams(program: Program, io_streams: int = 0,
                  serial: frozenset[str] = frozenset()) -> StreamSplit:
    """``program`` with its stream ops split (module docstring); the same object when nothing
    is split. The ops named in ``serial`` are not split into parallel ops but walk their
    slices one after another (the quotient loop outermost, the residue loop innermost: one
    IO tile, in the order a consumer reading the lanes walks them). Each split is checked by
    :func:`check_cover`."""
    plan = plan_splits(program, io_streams, serial)
    if not plan:
        return StreamSplit(program)
    names = {op.name for op in program.ops()} | {lp.name for lp in program.loops()}
    plan = {n: s for n, s in plan.items()
            if not any(f"{n}_{r}" in names for r in range(s[2])) and f"{s[1]}_lane" not in names}
    if not plan:
        return StreamSplit(program)
    data = program.to_dict()
    data["children"] = [_rewrite(c, plan, serial) for c in data["children"]]
    new = Program.from_dict(data).validate()
    for name, (_d, _v, k) in plan.items():
        parts = [name] if name in serial else [f"{name}_{r}" for r in range(k)]
        check_cover(program.op(name), [new.op(p) for p in parts])
    return StreamSplit(new, plan, frozenset(serial) & set(plan))


__all__ = ["StreamSplit", "stream_buffer", "buffer_lanes", "plan_splits", "check_cover",
           "split_streams"]
