"""Compute kernels as typed expression DAGs over the PE's op set (docs/design.md §3.1, §5.2).

A kernel's arguments are the values of the op's loads, in declaration order (thesis §4.1:
"the sequence of the function's input argument corresponds to the declaration order of the
memory load operations"). Nodes are immutable and hashed by identity, so shared subexpressions
form a DAG.

Op names (``Call.op``) follow the PE: add sub mul udiv shl lshr ashr and or xor smin smax umin
umax abs absdiff select eq ne slt sle sgt sge ult ule ugt uge mac pass. Comparisons have type u1.
Signedness of ``min``/``max``/``shr``/comparisons built with Python operators follows the
operand type (signed -> smin/ashr/slt, unsigned -> umin/lshr/ult); ``a // b`` is ``udiv``
(unsigned, ``a // 0 = 0``: PE UDIV) and is refused on signed operands (the PE has no signed
divider). ``==``/``!=`` compare nodes (they are hashed by identity): equality is
``a.eq(b)``/``a.ne(b)``, and a ``bool`` in a kernel is refused. docs/apps.md ("Kernel
operations and what they cost") lists every operation and its PEs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .types import IntType, u16, u1

BINARY_OPS = {"add", "sub", "mul", "udiv", "shl", "lshr", "ashr", "and", "or", "xor", "smin", "smax",
              "umin", "umax", "absdiff"}
COMPARE_OPS = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"}
UNARY_OPS = {"abs", "pass"}
TERNARY_OPS = {"select", "mac"}
ALL_OPS = BINARY_OPS | COMPARE_OPS | UNARY_OPS | TERNARY_OPS


class Expr:
    """Base class of kernel expression nodes; Python operators build new nodes."""
    type: IntType

    def _bin(self, op_s: str, op_u: str, other, swap=False) -> "Call":
        other = as_expr(other, self.type)
        a, b = (other, self) if swap else (self, other)
        return Call(op_s if a.type.signed else op_u, (a, b))

    def __add__(self, o): return self._bin("add", "add", o)
    def __radd__(self, o): return self._bin("add", "add", o, True)
    def __sub__(self, o): return self._bin("sub", "sub", o)
    def __rsub__(self, o): return self._bin("sub", "sub", o, True)
    def __mul__(self, o): return self._bin("mul", "mul", o)
    def __rmul__(self, o): return self._bin("mul", "mul", o, True)
    def __floordiv__(self, o):
        if self.type.signed or as_expr(o, self.type).type.signed:
            raise TypeError("'//' divides unsigned words only (PE UDIV); the operands are signed")
        return self._bin("udiv", "udiv", o)

    def __lshift__(self, o): return self._bin("shl", "shl", o)
    def __rlshift__(self, o): return self._bin("shl", "shl", o, True)
    def __rshift__(self, o): return self._bin("ashr", "lshr", o)
    def __rrshift__(self, o): return self._bin("ashr", "lshr", o, True)
    def __and__(self, o): return self._bin("and", "and", o)
    def __rand__(self, o): return self._bin("and", "and", o, True)
    def __or__(self, o): return self._bin("or", "or", o)
    def __ror__(self, o): return self._bin("or", "or", o, True)
    def __xor__(self, o): return self._bin("xor", "xor", o)
    def __rxor__(self, o): return self._bin("xor", "xor", o, True)
    def __neg__(self): return self._bin("sub", "sub", 0, True)
    def __lt__(self, o): return self._bin("slt", "ult", o)
    def __le__(self, o): return self._bin("sle", "ule", o)
    def __gt__(self, o): return self._bin("sgt", "ugt", o)
    def __ge__(self, o): return self._bin("sge", "uge", o)

    def eq(self, o): return self._bin("eq", "eq", o)
    def ne(self, o): return self._bin("ne", "ne", o)

    def __abs__(self): return Call("abs", (self,))
    def __hash__(self): return id(self)
    def __eq__(self, other): return self is other


@dataclass(eq=False, repr=False)
class Arg(Expr):
    """The value of the op's ``index``-th load."""
    index: int
    type: IntType = u16

    def __repr__(self): return f"arg{self.index}"


@dataclass(eq=False, repr=False)
class Const(Expr):
    value: int
    type: IntType = u16

    def __post_init__(self):
        self.value = self.type.wrap(self.value)

    def __repr__(self): return str(self.value)


@dataclass(eq=False, repr=False)
class Call(Expr):
    """A PE operation applied to argument expressions."""
    op: str
    args: tuple[Expr, ...]
    type: IntType = field(default=None)  # inferred

    def __post_init__(self):
        if self.op not in ALL_OPS:
            raise ValueError(f"unknown kernel op '{self.op}'")
        arity = (2 if self.op in BINARY_OPS | COMPARE_OPS else
                 1 if self.op in UNARY_OPS else 3)
        if len(self.args) != arity:
            raise ValueError(f"op '{self.op}' takes {arity} arguments, got {len(self.args)}")
        self.args = tuple(self.args)
        for a in self.args:
            if not isinstance(a, Expr):
                raise TypeError(f"op '{self.op}': argument {a!r} is not a kernel expression "
                                f"(constants are Const(value, type); == and != compare Python "
                                f"objects, write a.eq(b) / a.ne(b))")
        if self.type is None:
            if self.op in COMPARE_OPS:
                self.type = u1
            elif self.op == "select":
                self.type = self.args[1].type
            else:
                self.type = self.args[0].type

    def __repr__(self): return f"{self.op}({', '.join(map(repr, self.args))})"


@dataclass(eq=False, repr=False)
class Lookup(Expr):
    """``table[index]``: a lookup table (mapped to a MEM tile in ROM mode)."""
    table: tuple[int, ...]
    index: Expr
    type: IntType = u16

    def __post_init__(self):
        self.table = tuple(self.type.wrap(v) for v in self.table)

    def __repr__(self): return f"lut[{len(self.table)}]({self.index!r})"


@dataclass(eq=False, repr=False)
class LoopPhase(Expr):
    """1 when the value of the op's enclosing loop ``loop`` is ``residue`` modulo ``modulus``,
    else 0 (type u1): Halide's ``x % 2 == 0`` in a ``select`` (the reference camera pipeline's
    Bayer interleave). Not a memory read: the backend makes it a schedule generator, a MEM
    tile's spare output controller whose ``valid`` is 1 exactly at the cycles of the op's
    matching iterations (docs/backend.md)."""
    loop: str
    modulus: int
    residue: int
    type: IntType = u1

    def __post_init__(self):
        if self.modulus < 1 or not 0 <= self.residue < self.modulus:
            raise ValueError(f"loop phase {self.loop} % {self.modulus} == {self.residue}: "
                             f"needs modulus >= 1 and 0 <= residue < modulus")
        self.type = u1

    def __repr__(self): return f"({self.loop} % {self.modulus} == {self.residue})"


def as_expr(value, type_: IntType = u16) -> Expr:
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):     # ``a == b`` compares the nodes, it builds no comparison
        raise TypeError(f"cannot use {value!r} in a kernel expression (== and != compare "
                        f"Python objects; write a.eq(b) / a.ne(b))")
    if isinstance(value, int):
        return Const(value, type_)
    raise TypeError(f"cannot use {value!r} in a kernel expression")


def select(cond, a, b) -> Call:
    a = as_expr(a)
    return Call("select", (as_expr(cond, u1), a, as_expr(b, a.type)))


def minimum(a, b) -> Call:
    a = as_expr(a)
    return Call("smin" if a.type.signed else "umin", (a, as_expr(b, a.type)))


def maximum(a, b) -> Call:
    a = as_expr(a)
    return Call("smax" if a.type.signed else "umax", (a, as_expr(b, a.type)))


def absd(a, b) -> Call:
    a = as_expr(a)
    return Call("absdiff", (a, as_expr(b, a.type)))


@dataclass(eq=False)
class Kernel:
    """A named compute function: ``body`` is an Expr over ``Arg(0..n_args-1)``.

    ``unit`` names the hardware compute unit; ops whose kernels share a unit share hardware
    (thesis §4.3.3, compute sharing). By default each kernel is its own unit.
    """
    name: str
    n_args: int
    body: Expr
    arg_types: tuple[IntType, ...] = ()

    @staticmethod
    def from_fn(name: str, fn: Callable[..., Expr], *arg_types: IntType) -> "Kernel":
        """Build a kernel by calling ``fn`` on fresh ``Arg`` nodes of the given types."""
        args = [Arg(i, t) for i, t in enumerate(arg_types)]
        return Kernel(name, len(args), as_expr(fn(*args)), tuple(arg_types))

    def nodes(self) -> list[Expr]:
        """Every node of the DAG once, in post-order (operands before users)."""
        seen, order = set(), []

        def visit(e: Expr):
            if id(e) in seen:
                return
            seen.add(id(e))
            if isinstance(e, Call):
                for a in e.args:
                    visit(a)
            elif isinstance(e, Lookup):
                visit(e.index)
            order.append(e)

        visit(self.body)
        return order

    def __repr__(self): return f"{self.name}({', '.join(f'arg{i}' for i in range(self.n_args))}) = {self.body!r}"


def loop_phases(kernel: "Kernel") -> list[LoopPhase]:
    """The :class:`LoopPhase` leaves of ``kernel``, in post-order."""
    return [n for n in kernel.nodes() if isinstance(n, LoopPhase)]


def one_bit(e: Expr) -> bool:
    """``e``'s value is 0 or 1: a 1-bit type or the constant 0 or 1."""
    return e.type.bits == 1 or isinstance(e, Const) and e.value in (0, 1)


def bit_valued(e: Expr) -> bool:
    """``e`` is computed on the PE's 1-bit network (DESIGN of the PE: comparisons and the 1-bit
    logic ops drive ``res_p``, a schedule generator's ``valid`` is a :class:`LoopPhase`): a
    comparison, a loop phase, or a 1-bit ``and``/``or``/``xor`` whose operands are such values
    or the constants 0 and 1."""
    if isinstance(e, LoopPhase):
        return True
    if not isinstance(e, Call):
        return False
    if e.op in COMPARE_OPS:
        return True
    return (e.op in ("and", "or", "xor") and e.type.bits == 1
            and all(bit_valued(a) or isinstance(a, Const) and a.value in (0, 1)
                    for a in e.args))


def needs_mask(e: Call) -> bool:
    """A 1-bit result the 16-bit PE op can leave outside 0..1 (the IR truncates it to its type):
    any op but a comparison, an ``and`` with a 1-bit operand, and an ``or``/``xor``/``select``
    of 1-bit operands."""
    if e.type.bits != 1 or e.op in COMPARE_OPS:
        return False
    if e.op == "and":
        return not any(one_bit(a) for a in e.args)
    if e.op in ("or", "xor"):
        return not all(one_bit(a) for a in e.args)
    if e.op == "select":
        return not all(one_bit(a) for a in e.args[1:])
    return True


def pe_stages(e: Call) -> int:
    """PE stages a kernel node takes (the latency model of thesis eq. 4.7 in PEs): 1, plus the
    PEs that bring a ``select``'s condition onto the 1-bit network when it is not computed
    there (``ne(c, 0)`` for a 1-bit value, ``ne(c & 1, 0)`` otherwise), plus an ``and 1`` for a
    1-bit result the op can push out of range (:func:`needs_mask`). ``pass`` counts 1 (the
    backend routes it and needs no more)."""
    n = 1
    if e.op == "select" and not bit_valued(e.args[0]):
        n += 1 if e.args[0].type.bits == 1 else 2
    return n + needs_mask(e)


def expr_depth(body: Expr, pe: int = 1, lookup: int = 1) -> int:
    """The longest chain of PE stages (:func:`pe_stages`, ``pe`` cycles each) and lookup-table
    reads (``lookup`` cycles) from an argument to ``body``: a kernel's compute latency (thesis
    eq. 4.7, ``L_compute``)."""
    depth: dict[int, int] = {}
    for n in Kernel("_", 0, body).nodes():
        if isinstance(n, Call):
            depth[id(n)] = pe * pe_stages(n) + max(depth[id(a)] for a in n.args)
        elif isinstance(n, Lookup):
            depth[id(n)] = lookup + depth[id(n.index)]
        else:
            depth[id(n)] = 0
    return depth[id(body)]
