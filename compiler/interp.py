"""The reference interpreter: the golden model of a :class:`~compiler.ir.program.Program`
(docs/design.md §3, "reference interpreter"; thesis §4.1 gives the loop-nest semantics).

Semantics
---------
Ops execute instance by instance in program order (the sequential loop-nest order: loops
iterate ``start .. start+extent-1``, the children of a loop body run in order). With
``order=f``, ``f(op_name, env) -> int`` gives every op instance a time and all instances of all
ops execute sorted by that time, ties broken by program order. An instance reads its loads
(in declaration order: the kernel's arguments), evaluates its kernel and writes its store.

Values are two's-complement bit patterns of their :class:`IntType` (at most 16 bits). Kernels
compute with the PE's semantics (``ubgen/pe/ops.py``, :func:`pe_reference`; the tests check that
the two agree on random words): operands are first extended to 16-bit words (sign-extended when
their type is signed), then

* ``add sub mul mac`` keep the low 16 bits (``mac(a, b, c) = a*b + c``); ``udiv`` is the
  unsigned quotient, ``a udiv 0 = 0`` (PE UDIV);
* ``shl lshr ashr`` shift by ``b & 15`` (the shift amount is taken mod 16, no saturation);
  ``ashr`` shifts the signed value;
* ``smin smax slt sle sgt sge`` compare signed values, ``umin umax ult ule ugt uge`` unsigned;
  ``eq ne`` compare words; comparisons give 0/1 (type u1);
* ``abs(a) = |s(a)|`` (PE ABS); ``absdiff(a, b)`` is ``|s(a) - s(b)|`` (PE ABSDIFF) when the
  first operand's type is signed and ``|a - b|`` (PE UABSDIFF) when it is unsigned;
* ``select(c, a, b) = a if c & 1 else b`` (PE SEL with ``c`` on bit0); ``pass(a) = a``;
* ``LoopPhase(loop, m, r)`` is 1 when the instance's value of loop ``loop`` is ``r`` mod ``m``;
* ``Lookup(table, i)`` reads ``table[i]`` with ``i`` taken as an unsigned word; ``i`` outside
  the table is an :class:`InterpError`;

and the result is truncated to the node's type. A store converts the kernel's value to the
buffer's type (sign- or zero-extend from the value's type, then truncate), a load converts the
buffer's value to the kernel argument's type the same way. Input arrays are wrapped to their
buffer's type.

Errors (one line, :class:`InterpError`): a missing, unknown or ill-shaped input, an access
outside a buffer's declared shape, a read of an element never written (temp and output buffers
start unwritten), an output element never written, a lookup outside its table.

Implementation
--------------
The default engine is vectorized and exact for any program and any ``order``: it enumerates
every op instance with numpy, gives each its global rank in execution order, resolves every read
to the write instance that supplies it (sorting the accesses of each buffer by element and rank),
and then evaluates the resulting dataflow graph: ops in a topological order of the op-level
dependence graph, each op in one numpy evaluation over all its instances; ops in a dependence
cycle (an op reading its own earlier instances, as a reduction does) wavefront by wavefront
(all instances whose suppliers are computed). A reduction ``acc[x] = acc[x] + w*in`` over
``r`` therefore runs in ``extent(r)`` wavefronts, each vectorized over ``x``. ``scalar=True`` selects the plain instance-by-instance engine (the
reference for the tests of the fast one).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import networkx as nx
import numpy as np

from ubgen.arch import WORD_WIDTH

from .ir.expr import Arg, Call, Const, Kernel, Lookup, LoopPhase
from .ir.program import Loop, Op, Program
from .ir.types import IntType

__all__ = ["InterpError", "run", "run_all", "eval_kernel", "numpy_dtype", "from_pattern",
           "vectorized"]

Order = Callable[[str, dict], int]
WORD = WORD_WIDTH
WORD_MASK = (1 << WORD) - 1


class InterpError(ValueError):
    """A program cannot be executed on the given inputs (one-line message naming the cause)."""


# --- values ------------------------------------------------------------------------------

def _mask(t: IntType) -> int:
    return (1 << t.bits) - 1


def _check_type(t: IntType, what: str) -> None:
    if not 1 <= t.bits <= WORD:
        raise InterpError(f"{what}: type {t} is wider than the PE's {WORD}-bit word")


def _to_word(x: np.ndarray, t: IntType) -> np.ndarray:
    """Bit pattern of type ``t`` -> 16-bit word (sign-extended when ``t`` is signed)."""
    if t.signed and t.bits < WORD:
        x = np.where(x >> (t.bits - 1) & 1, x | (WORD_MASK ^ _mask(t)), x)
    return x


def _convert(x: np.ndarray, src: IntType, dst: IntType) -> np.ndarray:
    if src == dst:
        return x
    return _to_word(x, src) & _mask(dst)


def _signed(w: np.ndarray) -> np.ndarray:
    return w - ((w & 0x8000) << 1)


def from_pattern(x: np.ndarray, t: IntType) -> np.ndarray:
    """Bit patterns of type ``t`` -> numpy array of its values (``numpy_dtype(t)``)."""
    x = np.asarray(x, dtype=np.int64)
    if t.signed:
        x = x - ((x >> (t.bits - 1) & 1) << t.bits)
    return x.astype(numpy_dtype(t))


def numpy_dtype(t: IntType) -> np.dtype:
    """uint16/int16 for 16-bit types, uint8/int8 for narrower ones (u1 -> uint8)."""
    return np.dtype(f"{'int' if t.signed else 'uint'}{8 if t.bits <= 8 else 16}")


_BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "udiv": lambda a, b: np.where(b == 0, 0, a // np.maximum(b, 1)),
    "shl": lambda a, b: a << (b & (WORD - 1)),
    "lshr": lambda a, b: a >> (b & (WORD - 1)),
    "ashr": lambda a, b: _signed(a) >> (b & (WORD - 1)),
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "smin": lambda a, b: np.minimum(_signed(a), _signed(b)),
    "smax": lambda a, b: np.maximum(_signed(a), _signed(b)),
    "umin": np.minimum,
    "umax": np.maximum,
    "eq": lambda a, b: (a == b).astype(np.int64),
    "ne": lambda a, b: (a != b).astype(np.int64),
    "slt": lambda a, b: (_signed(a) < _signed(b)).astype(np.int64),
    "sle": lambda a, b: (_signed(a) <= _signed(b)).astype(np.int64),
    "sgt": lambda a, b: (_signed(a) > _signed(b)).astype(np.int64),
    "sge": lambda a, b: (_signed(a) >= _signed(b)).astype(np.int64),
    "ult": lambda a, b: (a < b).astype(np.int64),
    "ule": lambda a, b: (a <= b).astype(np.int64),
    "ugt": lambda a, b: (a > b).astype(np.int64),
    "uge": lambda a, b: (a >= b).astype(np.int64),
}


def _apply(node: Call, words: list[np.ndarray]) -> np.ndarray:
    op = node.op
    if op in _BINARY:
        return _BINARY[op](*words)
    if op == "absdiff":
        a, b = words
        return np.abs(_signed(a) - _signed(b)) if node.args[0].type.signed else np.abs(a - b)
    if op == "abs":
        return np.abs(_signed(words[0]))
    if op == "pass":
        return words[0]
    if op == "select":
        return np.where(words[0] & 1, words[1], words[2])
    if op == "mac":
        return words[0] * words[1] + words[2]
    raise InterpError(f"unknown kernel op '{op}'")  # pragma: no cover - Call validates ops


def eval_kernel(kernel: Kernel, args: list[np.ndarray], n: int, where: str = "",
                loops: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """Evaluate ``kernel`` on argument bit patterns (arrays of length ``n``, one per load, in
    the types of ``kernel``'s ``Arg`` nodes); returns the body's bit patterns (int64).
    ``loops`` gives the enclosing loops' values of the ``n`` instances (for
    :class:`~compiler.ir.expr.LoopPhase` leaves)."""
    memo: dict[int, np.ndarray] = {}
    for node in kernel.nodes():
        _check_type(node.type, f"{where}kernel {kernel.name}")
        if isinstance(node, Arg):
            if not 0 <= node.index < len(args):
                raise InterpError(f"{where}kernel {kernel.name}: arg{node.index} has no load")
            val = np.asarray(args[node.index], dtype=np.int64) & _mask(node.type)
        elif isinstance(node, Const):
            val = np.full(n, node.value & _mask(node.type), dtype=np.int64)
        elif isinstance(node, Call):
            words = [_to_word(memo[id(a)], a.type) for a in node.args]
            val = _apply(node, words) & _mask(node.type)
        elif isinstance(node, LoopPhase):
            if loops is None or node.loop not in loops:
                raise InterpError(f"{where}kernel {kernel.name}: no value of loop {node.loop} "
                                  f"for its phase")
            val = (np.asarray(loops[node.loop], dtype=np.int64) % node.modulus
                   == node.residue).astype(np.int64)
        elif isinstance(node, Lookup):
            i = _to_word(memo[id(node.index)], node.index.type)
            bad = i >= len(node.table)
            if bad.any():
                raise InterpError(f"{where}kernel {kernel.name}: lookup index "
                                  f"{int(i[bad][0])} outside its table of {len(node.table)}")
            table = np.array(node.table, dtype=np.int64) & _mask(node.type)
            val = table[i]
        else:  # pragma: no cover
            raise InterpError(f"kernel {kernel.name}: unknown node {node!r}")
        memo[id(node)] = np.broadcast_to(val, (n,))
    return np.asarray(memo[id(kernel.body)], dtype=np.int64)


# --- program structure -----------------------------------------------------------------------

@dataclass
class _OpInfo:
    op: Op
    loops: list[Loop]
    n: int                       # number of instances
    offset: int                  # first global instance id
    rank_const: int              # sequential rank = rank_const + sum(w * (v - start))
    rank_weights: list[int]


def _op_infos(program: Program) -> list[_OpInfo]:
    """Each op with its sequential-rank formula: all instances of a loop body are contiguous
    in program order, so the rank is affine in the loop variables."""
    count: dict[int, int] = {}

    def instances(node) -> int:
        if isinstance(node, Op):
            return 1
        if id(node) not in count:
            count[id(node)] = sum(instances(c) for c in node.children)
        return count[id(node)] * (node.extent if isinstance(node, Loop) else 1)

    infos: list[_OpInfo] = []
    offset = 0

    def walk(children, base: int, loops: list[Loop], weights: list[int]):
        nonlocal offset
        for child in children:
            if isinstance(child, Op):
                n = int(np.prod([lp.extent for lp in loops], dtype=np.int64)) if loops else 1
                infos.append(_OpInfo(child, list(loops), n, offset, base, list(weights)))
                offset += n
            else:
                walk(child.children, base, loops + [child], weights + [count[id(child)]])
            base += instances(child)

    for c in program.children:
        instances(c)
    walk(program.children, 0, [], [])
    return infos


def _env(info: _OpInfo) -> dict[str, np.ndarray]:
    """Loop variable values of all instances, in sequential order (outermost loop slowest),
    as broadcastable arrays."""
    k = len(info.loops)
    env = {}
    for j, lp in enumerate(info.loops):
        shape = [1] * k
        shape[j] = lp.extent
        env[lp.name] = np.arange(lp.start, lp.start + lp.extent, dtype=np.int64).reshape(shape)
    return env


def _loop_values(info: _OpInfo, loc: np.ndarray) -> dict[str, np.ndarray]:
    """The loop variables of the instances ``loc`` (local sequential indices) of ``info``."""
    out, rest = {}, np.asarray(loc, dtype=np.int64)
    for lp in reversed(info.loops):
        out[lp.name] = lp.start + rest % lp.extent
        rest = rest // lp.extent
    return out


def _instance_env(info: _OpInfo, i: int) -> dict[str, int]:
    env = {}
    for lp in reversed(info.loops):
        env[lp.name] = lp.start + i % lp.extent
        i //= lp.extent
    return dict(reversed(list(env.items())))


def _fmt_env(env: dict[str, int]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in env.items()) + "}" if env else "{}"


def _prepare_inputs(program: Program, inputs: dict
                    ) -> tuple[dict[str, np.ndarray], dict[str, tuple[int, ...]]]:
    """Check and wrap inputs; returns flat bit-pattern arrays and their shapes (an input
    declared without a shape takes the array's)."""
    decls = {n: b for n, b in program.buffers.items() if b.kind == "input"}
    unknown = sorted(set(inputs) - set(decls))
    if unknown:
        raise InterpError(f"unknown input '{unknown[0]}' (inputs: {', '.join(sorted(decls))})")
    out, shapes = {}, {}
    for name, decl in decls.items():
        if name not in inputs:
            raise InterpError(f"missing input '{name}'")
        _check_type(decl.type, f"input {name}")
        arr = np.asarray(inputs[name])
        if arr.dtype.kind not in "iub":
            raise InterpError(f"input '{name}' has dtype {arr.dtype}, expected integers")
        if decl.shape is not None and tuple(arr.shape) != tuple(decl.shape):
            raise InterpError(f"input '{name}' has shape {tuple(arr.shape)}, expected "
                              f"{tuple(decl.shape)}")
        out[name] = arr.astype(np.int64).reshape(-1) & _mask(decl.type)
        shapes[name] = tuple(arr.shape)
    return out, shapes


@dataclass
class _Layout:
    """Where a buffer's elements live in its flat array: element = lo + unravel(flat)."""
    lo: tuple[int, ...]
    shape: tuple[int, ...]
    declared: bool

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


def _layouts(program: Program, stores: dict[str, list[list[np.ndarray]]],
             in_shapes: dict[str, tuple[int, ...]]) -> dict[str, _Layout]:
    out = {}
    for name, decl in program.buffers.items():
        shape = in_shapes.get(name, decl.shape)
        if shape is not None:
            out[name] = _Layout((0,) * len(shape), tuple(shape), True)
        elif name in stores:
            dims = len(stores[name][0])
            lo = tuple(min(int(ix[d].min()) for ix in stores[name]) for d in range(dims))
            hi = tuple(max(int(ix[d].max()) for ix in stores[name]) for d in range(dims))
            out[name] = _Layout(lo, tuple(h - l + 1 for l, h in zip(lo, hi)), False)
    return out


# --- the vectorized engine -----------------------------------------------------------------

def _times(info: _OpInfo, order: Order) -> np.ndarray:
    """``order`` for all instances of an op: one call over the loop box in array form when
    ``order`` is marked vectorized (:func:`vectorized`; ``Schedule.time_fn`` is), else one call
    per instance."""
    if getattr(order, "vectorized", False):
        t = np.asarray(order(info.op.name, _env(info)))
        if t.dtype.kind not in "iu":
            raise InterpError(f"op {info.op.name}: the vectorized order gave {t.dtype} times, "
                              f"expected integers")
        return _full(info, t).astype(np.int64)
    return np.array([int(order(info.op.name, _instance_env(info, i))) for i in range(info.n)],
                    dtype=np.int64)


def vectorized(order: Order) -> Order:
    """Mark ``order`` as vectorized: called with every loop variable as a numpy array (the loop
    box in broadcast form), it returns the times of all instances at once, element for element
    what it returns for one instance. The interpreter then calls it once per op."""
    order.vectorized = True
    return order


def _first_bad(info: _OpInfo, ranks: np.ndarray, bad: np.ndarray) -> int:
    """Local instance index of the earliest (in execution order) instance flagged in ``bad``."""
    cand = np.flatnonzero(bad)
    return int(cand[np.argmin(ranks[info.offset + cand])])


def _full(info: _OpInfo, a: np.ndarray) -> np.ndarray:
    """A broadcast-form array over the op's loop box, one value per instance."""
    return np.broadcast_to(a, [lp.extent for lp in info.loops]).reshape(-1)


def _ranks(infos: list[_OpInfo], order: Order | None) -> np.ndarray:
    """Global execution rank of every instance: the sequential rank, or with ``order`` the
    rank of (time, sequential rank)."""
    total = sum(i.n for i in infos)
    seq = np.empty(total, dtype=np.int64)
    for info in infos:
        env = _env(info)
        r = np.full(info.n, info.rank_const, dtype=np.int64)
        if info.loops:
            r = r + sum(w * (env[lp.name] - lp.start) for w, lp in zip(info.rank_weights,
                                                                       info.loops)).reshape(-1)
        seq[info.offset:info.offset + info.n] = r
    if order is None:
        return seq
    times = np.concatenate([_times(i, order) for i in infos]) if infos else seq
    ranks = np.empty(total, dtype=np.int64)
    ranks[np.lexsort((seq, times))] = np.arange(total, dtype=np.int64)
    return ranks


def _index_arrays(info: _OpInfo, acc) -> list[np.ndarray]:
    """An access's indices in broadcast form (the shape of the loop box, size-1 axes where an
    index does not depend on a loop)."""
    env = _env(info)
    return [np.asarray(i.evaluate(env), dtype=np.int64) for i in acc.index]


def _flatten(info: _OpInfo, buf: str, lay: _Layout | None, ix: list[np.ndarray], what: str,
             ranks: np.ndarray) -> np.ndarray:
    """Flat element numbers of an access; reads outside an inferred (undeclared) shape read
    elements never written and get the sentinel -1; other accesses outside the shape fail."""
    if lay is None:
        return np.full(info.n, -1, dtype=np.int64)
    bad = None
    if not all(int(a.min()) >= lo and int(a.max()) < lo + ext
               for a, lo, ext in zip(ix, lay.lo, lay.shape)):
        bad = np.zeros(info.n, bool)
        for a, lo, ext in zip(ix, lay.lo, lay.shape):
            bad |= _full(info, (a < lo) | (a >= lo + ext))
        if lay.declared or what == "writes":
            i = _first_bad(info, ranks, bad)
            elem = ", ".join(str(int(_full(info, a)[i])) for a in ix)
            raise InterpError(f"op {info.op.name}: {what} {buf}[{elem}] at "
                              f"{_fmt_env(_instance_env(info, i))}, outside its shape "
                              f"{list(lay.shape)}")
    flat = np.zeros((), dtype=np.int64)
    for a, lo, ext in zip(ix, lay.lo, lay.shape):
        flat = flat * ext + (a - lo)
    flat = _full(info, flat)
    return flat if bad is None else np.where(bad, -1, flat)


@dataclass
class _Accesses:
    """Every access as flat element numbers (:func:`_flatten`), and the buffers' layouts."""
    stores: list[np.ndarray]                  # per op
    loads: list[list[np.ndarray]]             # per op, per load
    layouts: dict[str, _Layout]


def _accesses(program: Program, infos: list[_OpInfo], ranks: np.ndarray,
              in_shapes: dict[str, tuple[int, ...]]) -> _Accesses:
    idx_store = [_index_arrays(info, info.op.store) for info in infos]
    stores: dict[str, list[list[np.ndarray]]] = {}
    for info, st in zip(infos, idx_store):
        stores.setdefault(info.op.store.buffer, []).append(st)
    layouts = _layouts(program, stores, in_shapes)
    flat_store = [_flatten(info, info.op.store.buffer, layouts.get(info.op.store.buffer),
                           idx_store[k], "writes", ranks) for k, info in enumerate(infos)]
    flat_load = [[_flatten(info, acc.buffer, layouts.get(acc.buffer),
                           _index_arrays(info, acc), "reads", ranks)
                  for acc in info.op.loads] for info in infos]
    return _Accesses(flat_store, flat_load, layouts)


@dataclass
class _Dataflow:
    """Who supplies every read, and who wrote every element last."""
    supplier: list[list[np.ndarray | None]]              # per op, per load; None: an input
    final: dict[str, tuple[np.ndarray, np.ndarray]]      # buffer -> (elements, writer ids)


def _writes_by_element(infos: list[_OpInfo], acc: _Accesses, buf: str, ranks: np.ndarray):
    """The writes to ``buf`` sorted by (element, rank): the dense element numbers, their sort
    keys, writer ids and element indices."""
    total = len(ranks)
    w_f = np.concatenate([acc.stores[k] for k, i in enumerate(infos)
                          if i.op.store.buffer == buf])
    w_gid = np.concatenate([np.arange(i.offset, i.offset + i.n, dtype=np.int64)
                            for i in infos if i.op.store.buffer == buf])
    elems = np.unique(w_f)                   # written elements, numbered densely
    w_e = np.searchsorted(elems, w_f)
    w_key = w_e * (2 * total) + 2 * ranks[w_gid] + 1
    perm = np.argsort(w_key)
    return elems, w_key[perm], w_gid[perm], w_e[perm]


def _dataflow(program: Program, infos: list[_OpInfo], acc: _Accesses,
              ranks: np.ndarray) -> _Dataflow:
    """Resolve every read of a written buffer to its supplying write (global instance id): the
    last write to the same element with a smaller execution rank (-1: none)."""
    total = len(ranks)
    supplier = [[None if program.buffers[a.buffer].kind == "input" else np.full(i.n, -1, np.int64)
                 for a in i.op.loads] for i in infos]
    final = {}
    for buf in {i.op.store.buffer for i in infos}:
        elems, w_key, w_gid, w_e = _writes_by_element(infos, acc, buf, ranks)
        last = np.ones(len(w_e), bool)
        last[:-1] = w_e[1:] != w_e[:-1]
        final[buf] = (elems[w_e[last]], w_gid[last])
        for k, info in enumerate(infos):
            for j, a in enumerate(info.op.loads):
                if a.buffer != buf:
                    continue
                f = acc.loads[k][j]
                e = np.minimum(np.searchsorted(elems, f), len(elems) - 1)
                r_key = e * (2 * total) + 2 * ranks[info.offset:info.offset + info.n]
                pos = np.searchsorted(w_key, r_key) - 1
                hit = (elems[e] == f) & (pos >= 0) & (w_e[np.maximum(pos, 0)] == e)
                supplier[k][j] = np.where(hit, w_gid[np.maximum(pos, 0)], -1)
    return _Dataflow(supplier, final)


def _check_reads(infos: list[_OpInfo], flow: _Dataflow, ranks: np.ndarray) -> None:
    """A read of an element never written before it (the earliest such read) is an error."""
    for k, info in enumerate(infos):
        for j, acc in enumerate(info.op.loads):
            s = flow.supplier[k][j]
            if s is not None and (s < 0).any():
                i = _first_bad(info, ranks, s < 0)
                env = _instance_env(info, i)
                elem = ", ".join(str(ix.evaluate(env)) for ix in acc.index)
                raise InterpError(f"op {info.op.name}: reads {acc.buffer}[{elem}] at "
                                  f"{_fmt_env(env)} before it is written")


def _op_graph(infos: list[_OpInfo], flow: _Dataflow, offsets: np.ndarray) -> nx.DiGraph:
    """The op-level dependence graph: an edge from every op that supplies a read of another."""
    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(infos)))
    for k in range(len(infos)):
        for s in flow.supplier[k]:
            if s is not None:
                used = np.bincount(np.searchsorted(offsets, s, "right") - 1,
                                   minlength=len(infos))
                graph.add_edges_from((int(src), k) for src in np.flatnonzero(used))
    return graph


def _evaluate(program: Program, infos: list[_OpInfo], ins: dict[str, np.ndarray],
              acc: _Accesses, flow: _Dataflow) -> np.ndarray:
    """The value of every instance: ops in a topological order of the op graph, each op at
    once; ops in a cycle (a reduction reads its own earlier instances) wavefront by wavefront
    over their instances (:func:`_wavefronts`)."""
    total = sum(i.n for i in infos)
    values = np.zeros(total, dtype=np.int64)
    offsets = np.array([i.offset for i in infos] + [total], dtype=np.int64)

    def evaluate(k: int, loc: np.ndarray) -> None:
        info = infos[k]
        args = []
        for j, a in enumerate(info.op.loads):
            btype = program.buffers[a.buffer].type
            s = flow.supplier[k][j]
            v = ins[a.buffer][acc.loads[k][j][loc]] if s is None else values[s[loc]]
            args.append(_convert(v, btype, _arg_type(info.op.kernel, j, btype)))
        res = eval_kernel(info.op.kernel, args, len(loc), f"op {info.op.name}: ",
                          _loop_values(info, loc))
        values[info.offset + loc] = _convert(res, info.op.kernel.body.type,
                                             program.buffers[info.op.store.buffer].type)

    graph = _op_graph(infos, flow, offsets)
    dag = nx.condensation(graph)
    for comp in nx.topological_sort(dag):
        members = sorted(dag.nodes[comp]["members"])
        if len(members) == 1 and not graph.has_edge(members[0], members[0]):
            evaluate(members[0], np.arange(infos[members[0]].n))
        else:
            _wavefronts(members, infos, flow.supplier, offsets, evaluate)
    return values


def _unwritten_error(name: str, mask: np.ndarray, shape: tuple[int, ...]) -> InterpError:
    missing = np.unravel_index(int(np.flatnonzero(~mask.reshape(-1))[0]), shape)
    return InterpError(f"output {name}: element [{', '.join(map(str, missing))}] is never "
                       f"written ({int((~mask).sum())} of {mask.size} unwritten)")


def _final_buffers(program: Program, ins: dict[str, np.ndarray], in_shapes: dict,
                   acc: _Accesses, flow: _Dataflow, values: np.ndarray,
                   allow_partial: bool) -> dict[str, np.ndarray]:
    """Every buffer's final contents (an output must be written in full unless
    ``allow_partial``)."""
    out = {}
    for name, decl in program.buffers.items():
        if decl.kind == "input":
            out[name] = from_pattern(ins[name], decl.type).reshape(in_shapes[name])
            continue
        lay = acc.layouts.get(name)
        if lay is None:
            if decl.kind == "output" and not allow_partial:
                raise InterpError(f"output {name} is never written")
            continue
        data = np.zeros(lay.size, dtype=np.int64)
        mask = np.zeros(lay.size, dtype=bool)
        if name in flow.final:
            elems, writers = flow.final[name]
            data[elems] = values[writers]
            mask[elems] = True
        if decl.kind == "output" and not allow_partial and not mask.all():
            raise _unwritten_error(name, mask, lay.shape)
        out[name] = from_pattern(data, decl.type).reshape(lay.shape)
    return out


def _execute(program: Program, inputs: dict, order: Order | None, allow_partial: bool
             ) -> dict[str, np.ndarray]:
    """The vectorized engine (module docstring, "Implementation")."""
    program.validate()
    for name, decl in program.buffers.items():
        _check_type(decl.type, f"buffer {name}")
    ins, in_shapes = _prepare_inputs(program, inputs)
    infos = _op_infos(program)
    ranks = _ranks(infos, order)
    acc = _accesses(program, infos, ranks, in_shapes)
    flow = _dataflow(program, infos, acc, ranks)
    _check_reads(infos, flow, ranks)
    values = _evaluate(program, infos, ins, acc, flow)
    return _final_buffers(program, ins, in_shapes, acc, flow, values, allow_partial)


def _wavefronts(members: list[int], infos: list[_OpInfo], supplier, offsets: np.ndarray,
                evaluate) -> None:
    """Evaluate the instances of the ops in ``members`` (a dependence cycle) in wavefronts:
    each wavefront holds every instance whose suppliers inside the cycle are computed."""
    base, start = {}, 0
    for k in members:                       # compact ids of the cycle's instances
        base[k] = start
        start += infos[k].n
    size = start

    def compact(g: np.ndarray) -> np.ndarray:
        k = np.searchsorted(offsets, g, "right") - 1
        out = np.full(len(g), -1, np.int64)
        for m in members:
            sel = k == m
            out[sel] = g[sel] - infos[m].offset + base[m]
        return out

    src, dst = [], []
    for k in members:
        ids = np.arange(infos[k].n, dtype=np.int64) + base[k]
        for s in supplier[k]:
            if s is not None:
                c = compact(s)
                src.append(c[c >= 0])
                dst.append(ids[c >= 0])
    src = np.concatenate(src) if src else np.zeros(0, np.int64)
    dst = np.concatenate(dst) if dst else np.zeros(0, np.int64)
    cycle = _Cycle(members, base, size, np.array([base[k] for k in members] + [size]), evaluate)
    if np.bincount(dst, minlength=size).max(initial=0) <= 1:
        _forest_wavefronts(cycle, src, dst)
    else:
        _kahn_wavefronts(cycle, src, dst)


@dataclass
class _Cycle:
    """The instances of a dependence cycle, numbered compactly op by op."""
    members: list[int]
    base: dict[int, int]          # op -> its first compact id
    size: int
    cuts_at: np.ndarray           # the ops' first compact ids, and ``size``
    evaluate: Callable

    def run(self, part: np.ndarray) -> None:
        """Evaluate the (sorted) compact ids ``part``, op by op."""
        cuts = np.searchsorted(part, self.cuts_at)
        for i, k in enumerate(self.members):
            if cuts[i + 1] > cuts[i]:
                self.evaluate(k, part[cuts[i]:cuts[i + 1]] - self.base[k])


def _forest_wavefronts(cycle: _Cycle, src: np.ndarray, dst: np.ndarray) -> None:
    """Each instance has at most one supplier in the cycle (as in a chain of accumulations):
    depths by pointer jumping, then one wavefront per depth."""
    size = cycle.size
    anc = np.full(size + 1, size, np.int64)       # node ``size``: a root sentinel
    anc[dst] = src
    depth = np.ones(size + 1, np.int64)
    depth[anc == size] = 0
    while (anc[:size] != size).any():
        depth += depth[anc]
        anc = anc[anc]
    depth = depth[:size]
    small = depth.astype(np.uint16) if depth.max(initial=0) < 1 << 16 else depth
    order = np.argsort(small, kind="stable")     # a radix sort for 16-bit keys
    bounds = np.searchsorted(depth[order], np.arange(depth.max(initial=0) + 2))
    for lv in range(len(bounds) - 1):
        cycle.run(np.sort(order[bounds[lv]:bounds[lv + 1]]))


def _kahn_wavefronts(cycle: _Cycle, src: np.ndarray, dst: np.ndarray) -> None:
    """Any dependence graph inside the cycle: Kahn's algorithm, one wavefront per round."""
    size = cycle.size
    indeg = np.bincount(dst, minlength=size)
    by_src = np.argsort(src, kind="stable")
    consumers = dst[by_src]
    ptr = np.searchsorted(src[by_src], np.arange(size + 1))
    frontier = np.flatnonzero(indeg == 0)
    done = 0
    while len(frontier):
        done += len(frontier)
        cycle.run(frontier)
        lo, hi = ptr[frontier], ptr[frontier + 1]
        cnt = hi - lo
        if cnt.sum() == 0:
            break
        starts = np.repeat(lo - np.cumsum(cnt) + cnt, cnt)
        readers = consumers[starts + np.arange(cnt.sum())]
        u, c = np.unique(readers, return_counts=True)
        indeg[u] -= c
        frontier = u[indeg[u] == 0]
    if done != size:  # pragma: no cover - suppliers always precede their readers
        raise InterpError("internal error: cyclic dataflow")


def _arg_type(kernel: Kernel, j: int, default: IntType) -> IntType:
    if j < len(kernel.arg_types):
        return kernel.arg_types[j]
    for node in kernel.nodes():
        if isinstance(node, Arg) and node.index == j:
            return node.type
    return default


# --- the scalar engine ---------------------------------------------------------------------

def _scalar_memory(program: Program, ins: dict[str, np.ndarray], in_shapes: dict
                   ) -> dict[str, dict[tuple, int]]:
    """Every buffer as a dict element -> value, the inputs filled."""
    mem: dict[str, dict[tuple, int]] = {}
    for name, decl in program.buffers.items():
        _check_type(decl.type, f"buffer {name}")
        mem[name] = {}
        if decl.kind == "input":
            for i, v in enumerate(ins[name]):
                mem[name][tuple(int(e) for e in np.unravel_index(i, in_shapes[name]))] = int(v)
    return mem


def _instances(program: Program, order: Order | None) -> list[tuple[Op, dict[str, int]]]:
    """Every op instance with its loop values, in program order or sorted by ``order`` (a
    stable sort: ties keep program order)."""
    instances: list[tuple[Op, dict[str, int]]] = []

    def walk(children, env):
        for c in children:
            if isinstance(c, Op):
                instances.append((c, dict(env)))
            else:
                for v in range(c.start, c.start + c.extent):
                    env[c.name] = v
                    walk(c.children, env)
                del env[c.name]

    walk(program.children, {})
    if order is not None:
        times = [int(order(op.name, env)) for op, env in instances]
        instances = [instances[i] for i in sorted(range(len(instances)), key=times.__getitem__)]
    return instances


def _scalar_element(program: Program, in_shapes: dict, op: Op, acc, env: dict[str, int],
                    what: str) -> tuple[int, ...]:
    el = tuple(int(i.evaluate(env)) for i in acc.index)
    shape = in_shapes.get(acc.buffer, program.buffers[acc.buffer].shape)
    if shape is not None and not all(0 <= e < s for e, s in zip(el, shape)):
        raise InterpError(f"op {op.name}: {what} {acc.buffer}[{', '.join(map(str, el))}] "
                          f"at {_fmt_env(env)}, outside its shape {list(shape)}")
    return el


def _scalar_step(program: Program, in_shapes: dict, mem: dict, op: Op,
                 env: dict[str, int]) -> None:
    """One instance: read its loads, evaluate its kernel, write its store."""
    args = []
    for j, acc in enumerate(op.loads):
        el = _scalar_element(program, in_shapes, op, acc, env, "reads")
        if el not in mem[acc.buffer]:
            raise InterpError(f"op {op.name}: reads {acc.buffer}[{', '.join(map(str, el))}] "
                              f"at {_fmt_env(env)} before it is written")
        btype = program.buffers[acc.buffer].type
        args.append(_convert(np.array([mem[acc.buffer][el]]), btype,
                             _arg_type(op.kernel, j, btype)))
    el = _scalar_element(program, in_shapes, op, op.store, env, "writes")
    res = eval_kernel(op.kernel, args, 1, f"op {op.name}: ",
                      {k: np.array([v]) for k, v in env.items()})
    btype = program.buffers[op.store.buffer].type
    mem[op.store.buffer][el] = int(_convert(res, op.kernel.body.type, btype)[0])


def _scalar_buffer(name: str, decl, cells: dict[tuple, int], in_shapes: dict,
                   allow_partial: bool) -> np.ndarray:
    """One buffer's dict as an array: its declared (or input) shape, else the bounding box of
    its elements."""
    shape = in_shapes.get(name, decl.shape)
    if shape is not None:
        lo, shape = (0,) * len(shape), tuple(shape)
    else:
        keys = np.array(list(cells))
        lo = tuple(int(v) for v in keys.min(0))
        shape = tuple(int(h) - l + 1 for h, l in zip(keys.max(0), lo))
    data = np.zeros(shape, dtype=np.int64)
    mask = np.zeros(shape, dtype=bool)
    for el, v in cells.items():
        pos = tuple(int(e) - l for e, l in zip(el, lo))
        data[pos], mask[pos] = v, True
    if decl.kind == "output" and not allow_partial and not mask.all():
        raise _unwritten_error(name, mask, shape)
    return from_pattern(data, decl.type)


def _execute_scalar(program: Program, inputs: dict, order: Order | None, allow_partial: bool
                    ) -> dict[str, np.ndarray]:
    """Instance by instance, with dictionaries for buffers: the reference for the fast engine."""
    program.validate()
    ins, in_shapes = _prepare_inputs(program, inputs)
    mem = _scalar_memory(program, ins, in_shapes)
    for op, env in _instances(program, order):
        _scalar_step(program, in_shapes, mem, op, env)
    out = {}
    for name, decl in program.buffers.items():
        if not mem[name]:
            if decl.kind == "output" and not allow_partial:
                raise InterpError(f"output {name} is never written")
            continue
        out[name] = _scalar_buffer(name, decl, mem[name], in_shapes, allow_partial)
    return out


# --- entry points ----------------------------------------------------------------------------

def run_all(program: Program, inputs: dict[str, np.ndarray], order: Order | None = None, *,
            scalar: bool = False, allow_partial: bool = False) -> dict[str, np.ndarray]:
    """Execute ``program``; returns every buffer (inputs, temps, outputs) as a numpy array
    indexed like the program (``arr[x, y, ...]``). Buffers without a declared shape span the
    bounding box of their writes (offset to start at 0); unwritten temp elements read as 0."""
    engine = _execute_scalar if scalar else _execute
    return engine(program, inputs, order, allow_partial)


def run(program: Program, inputs: dict[str, np.ndarray], order: Order | None = None, *,
        scalar: bool = False, allow_partial: bool = False) -> dict[str, np.ndarray]:
    """Execute ``program`` and return its output buffers (``kind == "output"``)."""
    res = run_all(program, inputs, order, scalar=scalar, allow_partial=allow_partial)
    return {n: a for n, a in res.items() if program.buffers[n].kind == "output"}
