"""The Program IR: a loop-nest AST with compute kernels (thesis §4.1, docs/design.md §3.1).

The loop-nest DSL *is* this IR's construction API, with Pythonic names::

    prog = Program("brighten_blur")
    prog.add_input("input", (64, 64, 16))
    prog.add_output("blur", (63, 63, 16))
    prog.add_buffer("brighten", (64, 64))      # a temp buffer
    t = prog.add_loop("t", 0, 16)
    y = t.add_loop("y_br", 0, 64); x = y.add_loop("x_br", 0, 64)
    op = x.add_op("brighten")
    op.add_load("input", "x_br", "y_br", "t")
    op.add_store("brighten", "x_br", "y_br")
    op.add_function(Kernel.from_fn("brighten_kernel", lambda a: a * 2, u16))

Loop bounds follow the thesis: ``add_loop(name, start, extent)`` iterates
``start <= name < start + extent``. Index expressions are quasi-affine (:mod:`.index`), given as
strings or built from ``loop.var``. An op has any number of loads, at most one store, and one
kernel whose arguments are the loads in declaration order. Every buffer an op loads or stores
is declared (``add_input``, ``add_output``, ``add_buffer``; a temp's shape may be ``None``, then
inferred); :meth:`Program.validate` names the op and the buffer otherwise.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterator, Union

from .expr import Arg, Call, Const, Expr, Kernel, Lookup, LoopPhase, loop_phases
from .index import Index, IndexError_, parse_index
from .types import IntType, u16


class ProgramError(ValueError):
    """A malformed program: names the op and the offending construct."""


class ProgramWarning(UserWarning):
    """A program that compiles but probably not as meant (one line naming the cause and what
    to change); the command lines print each once (:func:`compiler.frontend.source.warnings_once`)."""


@dataclass
class BufferDecl:
    """A named array. ``kind`` is input (from the host/GLB), output (to the host/GLB) or temp.

    ``level`` is an optional memory-level hint: GLB, MEM or REG (thesis §5.4)."""
    name: str
    shape: tuple[int, ...] | None
    type: IntType = u16
    kind: str = "temp"
    level: str | None = None


@dataclass
class Access:
    buffer: str
    index: tuple[Index, ...]

    def __str__(self) -> str:
        return f"{self.buffer}[{', '.join(map(str, self.index))}]"


@dataclass(eq=False)
class Op:
    """An operation node: loads -> kernel -> store (thesis §4.1)."""
    name: str
    parent: "Loop | Program" = field(repr=False)
    loads: list[Access] = field(default_factory=list)
    store: Access | None = None
    kernel: Kernel | None = None
    unit: str | None = None   # compute unit; ops naming the same unit share hardware

    def _index(self, buffer: str, idx) -> tuple[Index, ...]:
        names = {lp.name for lp in self.loops}
        try:
            return tuple(parse_index(i, names) for i in idx)
        except IndexError_ as e:
            raise ProgramError(f"op {self.name}: access to {buffer}: {e}") from None

    def add_load(self, buffer: str, *index) -> Access:
        acc = Access(buffer, self._index(buffer, index))
        self.loads.append(acc)
        return acc

    def add_store(self, buffer: str, *index) -> Access:
        if self.store is not None:
            raise ProgramError(f"op {self.name}: has a store already ({self.store})")
        self.store = Access(buffer, self._index(buffer, index))
        return self.store

    def add_function(self, kernel: Kernel, unit: str | None = None) -> Kernel:
        self.kernel = kernel
        self.unit = unit
        return kernel

    @property
    def compute_unit(self) -> str:
        return self.unit or self.name

    @property
    def loops(self) -> list["Loop"]:
        """Enclosing loops, outermost first."""
        out, node = [], self.parent
        while isinstance(node, Loop):
            out.append(node)
            node = node.parent
        return out[::-1]

    def __str__(self) -> str:
        fn = self.kernel.name if self.kernel else "?"
        return f"{self.store} = {fn}({', '.join(map(str, self.loads))})"


@dataclass(eq=False)
class Loop:
    """``for name in [start, start + extent)``; children run in order in each iteration."""
    name: str
    start: int
    extent: int
    parent: "Loop | Program" = field(repr=False)
    children: list[Union["Loop", Op]] = field(default_factory=list)

    @property
    def var(self) -> Index:
        return Index(terms=((self.name, 1),))

    def add_loop(self, name: str, start: int, extent: int) -> "Loop":
        prog = self.program
        if name in prog._loop_names:
            raise ProgramError(f"loop name '{name}' is used twice")
        if extent < 1:
            raise ProgramError(f"loop {name}: extent {extent} must be at least 1")
        loop = Loop(name, int(start), int(extent), self)
        prog._loop_names.add(name)
        self.children.append(loop)
        return loop

    def add_op(self, name: str) -> Op:
        prog = self.program
        if name in prog._op_names:
            raise ProgramError(f"op name '{name}' is used twice")
        op = Op(name, self)
        prog._op_names.add(name)
        self.children.append(op)
        return op

    @property
    def program(self) -> "Program":
        node = self
        while isinstance(node, Loop):
            node = node.parent
        return node


@dataclass(eq=False)
class Program:
    """The root of the loop-nest AST, plus buffer declarations."""
    name: str
    children: list[Union[Loop, Op]] = field(default_factory=list)
    buffers: dict[str, BufferDecl] = field(default_factory=dict)
    _loop_names: set = field(default_factory=set, repr=False)
    _op_names: set = field(default_factory=set, repr=False)

    add_loop = Loop.add_loop
    add_op = Loop.add_op

    @property
    def program(self) -> "Program":
        return self

    def add_buffer(self, name: str, shape=None, type: IntType = u16, kind: str = "temp",
                   level: str | None = None) -> BufferDecl:
        if kind not in ("input", "output", "temp"):
            raise ProgramError(f"buffer {name}: kind must be input, output or temp")
        if level not in (None, "GLB", "MEM", "REG"):
            raise ProgramError(f"buffer {name}: level must be GLB, MEM or REG")
        decl = BufferDecl(name, tuple(shape) if shape is not None else None, type, kind, level)
        self.buffers[name] = decl
        return decl

    def add_input(self, name: str, shape, type: IntType = u16) -> BufferDecl:
        return self.add_buffer(name, shape, type, "input")

    def add_output(self, name: str, shape, type: IntType = u16) -> BufferDecl:
        return self.add_buffer(name, shape, type, "output")

    # --- traversal --------------------------------------------------------------------
    def ops(self) -> list[Op]:
        """All ops in program (sequential) order."""
        out = []

        def walk(nodes):
            for n in nodes:
                if isinstance(n, Op):
                    out.append(n)
                else:
                    walk(n.children)

        walk(self.children)
        return out

    def loops(self) -> list[Loop]:
        out = []

        def walk(nodes):
            for n in nodes:
                if isinstance(n, Loop):
                    out.append(n)
                    walk(n.children)

        walk(self.children)
        return out

    def op(self, name: str) -> Op:
        for o in self.ops():
            if o.name == name:
                return o
        raise KeyError(name)

    def validate(self) -> "Program":
        """Structural checks; raises :class:`ProgramError` naming the op: a missing store or
        function, a kernel whose arity differs from the loads, a load or store of an
        undeclared buffer or with the wrong number of indices, a store to an input."""
        for op in self.ops():
            if op.store is None:
                raise ProgramError(f"op {op.name}: has no store")
            if op.kernel is None:
                raise ProgramError(f"op {op.name}: has no function")
            if op.kernel.n_args != len(op.loads):
                raise ProgramError(f"op {op.name}: kernel {op.kernel.name} takes "
                                   f"{op.kernel.n_args} arguments but the op has "
                                   f"{len(op.loads)} loads")
            loops = {lp.name for lp in op.loops}
            for ph in loop_phases(op.kernel):
                if ph.loop not in loops:
                    raise ProgramError(f"op {op.name}: kernel {op.kernel.name} reads the phase "
                                       f"of loop {ph.loop}, which does not enclose the op")
            for kind, acc in [("loads", a) for a in op.loads] + [("stores", op.store)]:
                decl = self.buffers.get(acc.buffer)
                if decl is None:
                    raise ProgramError(f"op {op.name}: {kind} undeclared buffer {acc.buffer} "
                                       f"(declare it with add_input, add_output or add_buffer)")
                if decl.shape is not None and len(decl.shape) != len(acc.index):
                    raise ProgramError(f"op {op.name}: {acc} has {len(acc.index)} indices but "
                                       f"{acc.buffer} has {len(decl.shape)} dimensions")
            if self.buffers[op.store.buffer].kind == "input":
                raise ProgramError(f"op {op.name}: stores to input buffer {op.store.buffer}")
        return self

    # --- printing and serialization ----------------------------------------------------
    def __str__(self) -> str:
        lines = [f"program {self.name}"]
        for b in self.buffers.values():
            lines.append(f"  {b.kind} {b.name}{list(b.shape) if b.shape else ''}: {b.type}"
                         + (f" @{b.level}" if b.level else ""))

        def walk(nodes, depth):
            for n in nodes:
                pad = "  " * depth
                if isinstance(n, Loop):
                    lines.append(f"{pad}for {n.name} in [{n.start}, {n.start + n.extent}):")
                    walk(n.children, depth + 1)
                else:
                    lines.append(f"{pad}{n.name}: {n}")

        walk(self.children, 1)
        return "\n".join(lines)

    def to_dict(self) -> dict:
        def node(n):
            if isinstance(n, Loop):
                return {"loop": n.name, "start": n.start, "extent": n.extent,
                        "children": [node(c) for c in n.children]}
            return {"op": n.name, "loads": [_acc(a) for a in n.loads],
                    "store": _acc(n.store) if n.store else None,
                    "kernel": kernel_to_dict(n.kernel) if n.kernel else None, "unit": n.unit}
        return {"program": self.name,
                "buffers": [{"name": b.name, "shape": list(b.shape) if b.shape else None,
                             "type": str(b.type), "kind": b.kind, "level": b.level}
                            for b in self.buffers.values()],
                "children": [node(c) for c in self.children]}

    @staticmethod
    def from_dict(data: dict) -> "Program":
        prog = Program(data["program"])
        for b in data["buffers"]:
            prog.add_buffer(b["name"], b["shape"], IntType.parse(b["type"]), b["kind"], b["level"])

        def build(parent, n):
            if "loop" in n:
                lp = parent.add_loop(n["loop"], n["start"], n["extent"])
                for c in n["children"]:
                    build(lp, c)
            else:
                op = parent.add_op(n["op"])
                for a in n["loads"]:
                    op.add_load(a["buffer"], *a["index"])
                if n["store"]:
                    op.add_store(n["store"]["buffer"], *n["store"]["index"])
                if n["kernel"]:
                    op.add_function(kernel_from_dict(n["kernel"]), n["unit"])

        for c in data["children"]:
            build(prog, c)
        return prog

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)


def _acc(a: Access) -> dict:
    return {"buffer": a.buffer, "index": [str(i).replace("floor((", "((").replace(")/", ")//")
                                          for i in a.index]}


def kernel_to_dict(k: Kernel) -> dict:
    """Serialize a kernel DAG as a node list (operands before users)."""
    nodes = k.nodes()
    ids = {id(n): i for i, n in enumerate(nodes)}
    out = []
    for n in nodes:
        if isinstance(n, Arg):
            out.append({"arg": n.index, "type": str(n.type)})
        elif isinstance(n, Const):
            out.append({"const": n.value, "type": str(n.type)})
        elif isinstance(n, Call):
            out.append({"call": n.op, "args": [ids[id(a)] for a in n.args], "type": str(n.type)})
        elif isinstance(n, Lookup):
            out.append({"lookup": list(n.table), "index": ids[id(n.index)], "type": str(n.type)})
        elif isinstance(n, LoopPhase):
            out.append({"phase": n.loop, "modulus": n.modulus, "residue": n.residue,
                        "type": str(n.type)})
    return {"name": k.name, "n_args": k.n_args, "arg_types": [str(t) for t in k.arg_types],
            "nodes": out}


def kernel_from_dict(d: dict) -> Kernel:
    built: list[Expr] = []
    for n in d["nodes"]:
        t = IntType.parse(n["type"])
        if "arg" in n:
            built.append(Arg(n["arg"], t))
        elif "const" in n:
            built.append(Const(n["const"], t))
        elif "call" in n:
            built.append(Call(n["call"], tuple(built[i] for i in n["args"]), t))
        elif "phase" in n:
            built.append(LoopPhase(n["phase"], n["modulus"], n["residue"]))
        else:
            built.append(Lookup(tuple(n["lookup"]), built[n["index"]], t))
    return Kernel(d["name"], d["n_args"], built[-1],
                  tuple(IntType.parse(t) for t in d["arg_types"]))
