"""Random pipelines of the Halide-style DSL (compiler/frontend/halide.py) for the property test
test_halide_property.py: chains and diamonds of 2-D functions with pure definitions and update
definitions over reduction domains, random windows, strides (down- and up-sampling) and random
schedules (inline, ``compute_root``, ``compute_at``, ``store_at``, splits, reorders, unrolled
pure and reduction dimensions).

:func:`pipelines` is a hypothesis strategy of :class:`Spec` (plain data, so hypothesis prints
and shrinks it); :func:`build` turns a Spec into the DSL's output Func and output sizes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

from compiler.frontend.halide import (Func, Input, RDom, Var, cast, max_, min_, select)
from compiler.ir import s16, u16

OPS = ("+", "-", "*", "&", "^", "min", "max", "select")


@dataclass
class Read:
    src: int                  # -1: the input, else the index of an earlier function
    x: tuple[str, int]        # ("1" | "2" | "h", offset): x + d, 2*x + d, x // 2 + d
    y: tuple[str, int]


@dataclass
class Update:
    op: str                   # "+" (accumulate) or "max"
    read: Read                # the read inside the window, offsets added to r.x / r.y
    extents: tuple[int, int]  # the reduction domain
    unroll: tuple[bool, bool]  # unroll r.x, r.y


@dataclass
class FuncSpec:
    reads: list[Read]
    ops: list[str]            # len(reads) - 1 operators combining the reads, left to right
    shift: int                # final ``>> shift`` (0: none)
    init: int | None          # with updates, if not None: f = init; f = f + (the reads)
    updates: list[Update] = field(default_factory=list)
    split: int = 0            # split x by this factor (0: no split)
    reorder: bool = False     # y innermost
    unroll_x: bool = False    # unroll the split's inner x
    compute: str = "inline"   # inline | root | at | store_at
    at: int = 0               # compute_at the consumer's loop dims[at % len(dims)]
    store: int = 1            # store_at the consumer's loop dims[store % len(dims)]


@dataclass
class Spec:
    type: str                 # "u16" or "s16"
    funcs: list[FuncSpec]
    sizes: tuple[int, int]


def _coord(draw) -> tuple[str, int]:
    return draw(st.sampled_from(["1", "1", "1", "2", "h"])), draw(st.integers(0, 2))


@st.composite
def _read(draw, n_funcs: int, src: int | None = None) -> Read:
    if src is None:
        src = draw(st.integers(-1, n_funcs - 1))
    return Read(src, _coord(draw), _coord(draw))


@st.composite
def _update(draw, n_funcs: int) -> Update:
    rd = draw(_read(n_funcs))
    rd.x, rd.y = ("1", rd.x[1]), ("1", rd.y[1])
    return Update(draw(st.sampled_from(["+", "+", "max"])), rd,
                  (draw(st.integers(1, 3)), draw(st.integers(1, 3))),
                  (draw(st.booleans()), draw(st.booleans())))


@st.composite
def _func(draw, i: int) -> FuncSpec:
    first = draw(_read(i, src=i - 1))          # each function reads the one before: a chain
    reads = [first] + draw(st.lists(_read(i), max_size=2))   # more reads: diamonds
    updates = draw(st.lists(_update(i), max_size=2)) if draw(st.booleans()) else []
    return FuncSpec(reads, [draw(st.sampled_from(OPS)) for _ in reads[1:]],
                    draw(st.sampled_from([0, 0, 1, 2])),
                    draw(st.sampled_from([None, 0, 1])) if updates else None, updates,
                    draw(st.sampled_from([0, 0, 0, 2])), draw(st.booleans()),
                    draw(st.booleans()),
                    draw(st.sampled_from(["inline", "root", "at", "at", "store_at"])),
                    draw(st.integers(0, 3)), draw(st.integers(0, 3)))


@st.composite
def pipelines(draw, max_funcs: int = 4) -> Spec:
    n = draw(st.integers(1, max_funcs))
    return Spec(draw(st.sampled_from(["u16", "s16"])), [draw(_func(i)) for i in range(n)],
                (draw(st.integers(1, 6)), draw(st.integers(1, 5))))


def _index(v: Var, c: tuple[str, int]):
    kind, d = c
    return {"1": v + d, "2": 2 * v + d, "h": v // 2 + d}[kind]


def _combine(op: str, a, b):
    if op == "min":
        return min_(a, b)
    if op == "max":
        return max_(a, b)
    if op == "select":
        return select(a > b, a - b, b)
    return {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "^": a ^ b}[op]


def build(spec: Spec) -> tuple[Func, tuple[int, int]]:
    """The DSL pipeline of ``spec``: its output Func and output sizes."""
    t = u16 if spec.type == "u16" else s16
    x, y = Var("x"), Var("y")
    xo, xi = Var("xo"), Var("xi")
    inp = Input("input", t)
    funcs = [Func(f"f{i}") for i in range(len(spec.funcs))]

    def read(rd: Read, dx=0, dy=0):
        src = inp if rd.src < 0 else funcs[rd.src]
        return src[_index(x, rd.x) + dx, _index(y, rd.y) + dy]

    for f, fs in zip(funcs, spec.funcs):
        value = read(fs.reads[0])
        for op, rd in zip(fs.ops, fs.reads[1:]):
            value = _combine(op, value, read(rd))
        if fs.shift:
            value = value >> fs.shift
        if fs.init is None:
            f[x, y] = value
        else:                        # f = init, then f += the reads (an update without RDom)
            f[x, y] = cast(t, fs.init)
            f[x, y] = f[x, y] + value
        first = 0 if fs.init is None else 1
        for k, up in enumerate(fs.updates, first):
            r = RDom([(0, up.extents[0]), (0, up.extents[1])], f"r{k}")
            term = read(up.read, r.x, r.y)
            f[x, y] = f[x, y] + term if up.op == "+" else max_(f[x, y], term)
            if up.unroll[0]:
                f.update(k).unroll(r.x)
            if up.unroll[1]:
                f.update(k).unroll(r.y)
    for f, fs in zip(funcs, spec.funcs):
        if fs.split:
            f.split(x, xo, xi, fs.split)
            if fs.unroll_x:
                f.unroll(xi)
        if fs.reorder:
            f.reorder(y, xi if fs.split else x)
    for i, (f, fs) in enumerate(zip(funcs, spec.funcs)):
        if i == len(funcs) - 1 or fs.compute == "inline":
            continue
        consumer = funcs[i + 1]
        if fs.compute == "root":
            f.compute_root()
        else:
            dims = consumer.stages[0].dims          # innermost first
            f.compute_at(consumer, dims[fs.at % len(dims)])
            if fs.compute == "store_at":
                f.store_at(consumer, dims[fs.store % len(dims)])
    return funcs[-1], spec.sizes
