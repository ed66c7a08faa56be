"""Kernel mapping: a compute kernel's expression DAG -> a graph of PE operations and lookup ROMs
(thesis §6.3, "the compute kernels ... mapped into PEs"; paper §V "Finishing Steps"; HiMap
(seed 004) §III for kernels as PE graphs).

:data:`PE_OPS` is the one explicit table from the kernel IR's calls (``compiler.ir.expr``) to
the PE's op encoding (``ubgen.pe.ops.PEOp``). Before the table is applied the DAG is rewritten:

* **pass elimination**: ``pass(x)`` is ``x`` (a copy op's value is routed, not computed; the
  cycle its PE would take becomes routing latency);
* **constant folding**: a call whose operands are all constants is evaluated with the PE's
  reference semantics (``ubgen.pe.ops.pe_reference``), and neutral operands vanish
  (``x + 0``, ``x * 1``, ``x << 0``, ...); the constants that remain go into the PE's
  constant registers (``data<i>_const``), so they cost no PE;
* **common-subexpression elimination**: structurally equal calls on equal operands are one PE;
* **fusion**: ``a * b + c`` with a multiply used only there becomes one ``MAC`` PE;
* **strength reduction**: a multiply by a power of two left after fusion is a left shift.

A :class:`~compiler.ir.expr.LoopPhase` (``x % 2 == 0``) is an operand of its own kind
(``phase``, on the 1-bit network): the netlist builder gives it a schedule generator
(``compiler.backend.build``); used as a word it goes through a ``SEL`` PE (``phase ? 1 : 0``).

Every rewrite keeps the kernel's value bit for bit (16-bit words; the interpreter's semantics,
``compiler.interp``) and never makes the longest PE chain longer, so the PE graph fits inside
the op latency the scheduler used (``compiler.poly.extract.kernel_depth``). Lookups become MEM
tiles in ROM mode (one cycle, like the scheduler's ``mem_read_latency``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ubgen.arch import WORD_MASK, WORD_WIDTH
from ubgen.pe.ops import PEOp, pe_reference

from ..ir.expr import Arg, Call, Const, Expr, Kernel, Lookup, LoopPhase, needs_mask
from ..ir.types import IntType
from .netlist import NetlistError

PE_OPS: dict[str, PEOp] = {
    "add": PEOp.ADD, "sub": PEOp.SUB, "mul": PEOp.MUL, "mac": PEOp.MAC, "udiv": PEOp.UDIV,
    "shl": PEOp.SHL, "lshr": PEOp.LSHR, "ashr": PEOp.ASHR,
    "and": PEOp.AND, "or": PEOp.OR, "xor": PEOp.XOR,
    "smin": PEOp.SMIN, "smax": PEOp.SMAX, "umin": PEOp.UMIN, "umax": PEOp.UMAX,
    "abs": PEOp.ABS, "select": PEOp.SEL, "pass": PEOp.PASS,
    "eq": PEOp.EQ, "ne": PEOp.NE, "slt": PEOp.SLT, "sle": PEOp.SLE, "sgt": PEOp.SGT,
    "sge": PEOp.SGE, "ult": PEOp.ULT, "ule": PEOp.ULE, "ugt": PEOp.UGT, "uge": PEOp.UGE,
    # absdiff is |s(a) - s(b)| for a signed first operand, |a - b| otherwise (compiler.interp)
    "absdiff": PEOp.ABSDIFF, "uabsdiff": PEOp.UABSDIFF,
    "band": PEOp.BAND, "bor": PEOp.BOR, "bxor": PEOp.BXOR,
}
"""Kernel IR call -> PE op (``uabsdiff`` is ``absdiff`` on an unsigned first operand;
``band``/``bor``/``bxor`` are ``and``/``or``/``xor`` of 1-bit values computed on the 1-bit
network, from comparisons' ``res_p``)."""
BIT_LOGIC = {"and": "band", "or": "bor", "xor": "bxor"}

COMPARES = frozenset({"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"})
COMMUTATIVE = frozenset({"add", "mul", "and", "or", "xor", "smin", "smax", "umin", "umax",
                         "eq", "ne"})
MASK = WORD_MASK


@dataclass(frozen=True)
class Operand:
    """Where a PE input comes from: ``arg`` (the op's load ``value``), ``const`` (the word
    ``value``, held in a constant register), ``node`` (kernel node ``value``; ``bit`` = its
    1-bit ``res_p`` output instead of ``res``) or ``phase`` (the 1-bit loop phase
    ``KernelGraph.phases[value]``)."""
    kind: str
    value: int
    bit: bool = False


@dataclass
class KNode:
    """One PE (``kind`` = ``pe``, ``op`` a :class:`ubgen.pe.ops.PEOp`) or one lookup ROM
    (``kind`` = ``rom``: a MEM tile in ROM mode, ``table`` its words). ``inputs`` maps a core
    input port (``data0..2``, ``bit0..2``; a ROM's ``data_in0``) to its operand. ``sample`` is
    the cycle, relative to the op's loads, at which the node reads its inputs; its output is
    valid one cycle later (PE output register; ROM read)."""
    kind: str
    inputs: dict[str, Operand]
    op: PEOp | None = None
    table: tuple[int, ...] = ()
    label: str = ""
    sample: int = 0

    def latency(self, pe_latency: int = 1) -> int:
        return 1 if self.kind == "rom" else pe_latency


@dataclass
class KernelGraph:
    """The PE graph of one kernel: ``nodes`` in topological order and the kernel's ``result``
    (an operand: an argument when the kernel only passes a load through, a constant, or a
    node's ``res``)."""
    name: str
    nodes: list[KNode] = field(default_factory=list)
    result: Operand = Operand("const", 0)
    phases: list[LoopPhase] = field(default_factory=list)

    pe_latency: int = 1

    @property
    def depth(self) -> int:
        """Cycles from the loads to the result (0 for a pass-through or a constant)."""
        if self.result.kind != "node":
            return 0
        root = self.nodes[self.result.value]
        return root.sample + root.latency(self.pe_latency)

    @property
    def pes(self) -> int:
        return sum(n.kind == "pe" for n in self.nodes)

    @property
    def roms(self) -> int:
        return sum(n.kind == "rom" for n in self.nodes)


# --- value numbering ---------------------------------------------------------------------------
# A value is ("arg", k) | ("const", word) | ("call", op, operand values...) | ("lookup", table,
# index value); the tuples are hash-consed, so equal subexpressions are one value (CSE).


def _word(value: int, t: IntType) -> int:
    """The 16-bit word of a value of type ``t`` (sign-extended when ``t`` is signed)."""
    return t.wrap(value) & MASK


def _fold(op: str, words: list[int]) -> int:
    if op == "pass":
        return words[0]
    if op == "select":
        return words[1] if words[0] & 1 else words[2]
    a, b, c = (words + [0, 0, 0])[:3]
    res, res_p = pe_reference(PE_OPS[op], a, b, c)
    return res


class _Numbering:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.types: dict[tuple, IntType] = {}

    def value(self, e: Expr, memo: dict[int, tuple]) -> tuple:
        if id(e) in memo:
            return memo[id(e)]
        _check_type(e.type, self.kernel.name)
        if isinstance(e, Arg):
            v = ("arg", e.index)
        elif isinstance(e, Const):
            v = ("const", _word(e.value, e.type))
        elif isinstance(e, LoopPhase):
            v = ("phase", e.loop, e.modulus, e.residue)
        elif isinstance(e, Lookup):
            idx = self.value(e.index, memo)
            v = ("lookup", tuple(x & _mask(e.type) for x in e.table), idx)
            if idx[0] == "const":
                v = ("const", self._lookup_const(e, idx[1]))
        elif isinstance(e, Call):
            args = [self.value(a, memo) for a in e.args]
            v = self.call(e, args)
        else:  # pragma: no cover - the IR has no other nodes
            raise NetlistError(f"kernel {self.kernel.name}: unknown node {e!r}")
        self.types.setdefault(v, e.type)
        memo[id(e)] = v
        return v

    def _lookup_const(self, e: Lookup, index: int) -> int:
        if index >= len(e.table):
            raise NetlistError(f"kernel {self.kernel.name}: lookup index {index} outside its "
                               f"table of {len(e.table)}")
        return e.table[index] & _mask(e.type)

    def call(self, e: Call, args: list[tuple]) -> tuple:
        op = e.op
        if op == "absdiff" and not e.args[0].type.signed:
            op = "uabsdiff"
        if op == "pass":
            return args[0]
        if all(a[0] == "const" for a in args):
            return ("const", _fold(op, [a[1] for a in args]) & _mask(e.type))
        simple = _identity(op, args)
        if simple is not None:
            if simple[0] == "const":
                return ("const", simple[1] & _mask(e.type))
            if needs_mask(e):
                return ("call", "and", simple, ("const", 1))
            return simple
        if op in COMMUTATIVE and args[0] > args[1]:
            args = [args[1], args[0]] + args[2:]
        if needs_mask(e):
            # a 1-bit result the op can push out of 0..1: truncate like the IR (pe_stages)
            return ("call", "and", ("call", op, *args), ("const", 1))
        return ("call", op, *args)


def _mask(t: IntType) -> int:
    return (1 << t.bits) - 1


def _check_type(t: IntType, kernel: str) -> None:
    if t.bits not in (1, WORD_WIDTH):
        raise NetlistError(f"kernel {kernel}: type {t} is not supported by the 16-bit PE "
                           f"datapath (u16, s16 and u1 are)")


def _identity(op: str, args: list[tuple]) -> tuple | None:
    """``x`` for neutral operations (``x + 0``, ``x * 1``, ``x << 0``, ``x udiv 1``,
    ``umax(x, 0)``, ``umin(x, 0xFFFF)``, ...), ``0`` for absorbing ones (``x * 0``, ``x & 0``);
    ``None`` otherwise."""
    zero, one = ("const", 0), ("const", 1)
    if op in ("add", "or", "xor") and zero in args[:2]:
        return args[1] if args[0] == zero else args[0]
    if op in ("sub", "shl", "lshr", "ashr") and args[1] == zero:
        return args[0]
    if op == "mul" and one in args[:2]:
        return args[1] if args[0] == one else args[0]
    if op in ("mul", "and") and zero in args[:2]:
        return zero
    if op == "and" and ("const", MASK) in args[:2]:
        return args[1] if args[0] == ("const", MASK) else args[0]
    if op == "mac" and zero in args[:2]:
        return args[2]
    if op == "mac" and one in args[:2]:
        other = args[1] if args[0] == one else args[0]
        return ("call", "add", *sorted([other, args[2]])) if args[2] != zero else other
    if op == "select" and args[0][0] == "const":
        return args[1] if args[0][1] & 1 else args[2]
    if op == "udiv" and args[1] == one:
        return args[0]
    # unsigned bounds: umax(x, 0) and umin(x, 0xFFFF) are x (a clamp's lower bound 0)
    for bound, keep in (("umax", zero), ("umin", ("const", MASK))):
        if op == bound and keep in args[:2]:
            return args[1] if args[0] == keep else args[0]
    return None


# --- rewriting on the numbered DAG -------------------------------------------------------------


def _users(root: tuple) -> dict[tuple, int]:
    """How many times each value is used as an operand (the root counts once)."""
    count: dict[tuple, int] = {root: 1}
    seen: set[tuple] = set()

    def walk(v: tuple) -> None:
        if v in seen:
            return
        seen.add(v)
        for a in _operands(v):
            count[a] = count.get(a, 0) + 1
            walk(a)
    walk(root)
    return count


def _operands(v: tuple) -> tuple:
    if v[0] == "call":
        return v[2:]
    if v[0] == "lookup":
        return (v[2],)
    return ()


def _depth(v: tuple, memo: dict[tuple, int]) -> int:
    if v not in memo:
        ops = _operands(v)
        memo[v] = 0 if not ops else 1 + max(_depth(a, memo) for a in ops)
    return memo[v]


def _fuse_and_reduce(root: tuple) -> tuple:
    """``add(mul(a, b), c)`` -> ``mac(a, b, c)`` where the multiply has no other user (the
    deeper multiply when both operands are), then ``mul(x, 2^k)`` -> ``shl(x, k)``."""
    users = _users(root)
    depth: dict[tuple, int] = {}
    memo: dict[tuple, tuple] = {}

    def rewrite(v: tuple) -> tuple:
        if v in memo:
            return memo[v]
        if v[0] == "call":
            args = [rewrite(a) for a in v[2:]]
            out = ("call", v[1], *args)
            if v[1] == "add":
                cands = [i for i, a in enumerate(v[2:4]) if a[0] == "call" and a[1] == "mul"
                         and users.get(a, 0) == 1]
                if cands:
                    i = max(cands, key=lambda k: (_depth(v[2 + k], depth), -k))
                    mul = v[2 + i]
                    out = ("call", "mac", rewrite(mul[2]), rewrite(mul[3]), args[1 - i])
            elif v[1] == "mul":
                k = _log2_const(args[1]) if args[1][0] == "const" else None
                j = _log2_const(args[0]) if k is None and args[0][0] == "const" else None
                if k is not None:
                    out = ("call", "shl", args[0], ("const", k))
                elif j is not None:
                    out = ("call", "shl", args[1], ("const", j))
        elif v[0] == "lookup":
            out = ("lookup", v[1], rewrite(v[2]))
        else:
            out = v
        memo[v] = out
        return out
    return rewrite(root)


def _log2_const(c: tuple) -> int | None:
    w = c[1]
    if w > 1 and w & (w - 1) == 0:
        return w.bit_length() - 1
    return None


# --- emission ----------------------------------------------------------------------------------


def _phase_operand(g: KernelGraph, v: tuple) -> Operand:
    """The 1-bit operand of loop phase ``v`` (``("phase", loop, m, r)``), added to
    ``g.phases`` once."""
    keys = [(p.loop, p.modulus, p.residue) for p in g.phases]
    if v[1:] not in keys:
        g.phases.append(LoopPhase(*v[1:]))
        keys.append(v[1:])
    return Operand("phase", keys.index(v[1:]), bit=True)


def map_kernel(kernel: Kernel, pe_latency: int = 1) -> KernelGraph:
    """The PE graph of ``kernel`` (module docstring): a pure function of the kernel.
    ``pe_latency`` (0 or 1) is the PEs' output-register latency; a ROM read takes one cycle."""
    num = _Numbering(kernel)
    root = num.value(kernel.body, {})
    root = _fuse_and_reduce(root)
    g = KernelGraph(kernel.name, pe_latency=pe_latency)
    index: dict[tuple, int] = {}

    def operand(v: tuple) -> Operand:
        if v[0] == "phase":       # a phase as a word: SEL(phase, 1, 0)
            return Operand("node", emit(("call", "select", v, ("const", 1), ("const", 0))))
        if v[0] == "arg":
            return Operand("arg", v[1])
        if v[0] == "const":
            return Operand("const", v[1])
        return Operand("node", emit(v))

    def is_bit(v: tuple) -> bool:
        """``v`` is computed on the 1-bit network: a comparison, or a 1-bit ``and``/``or``/
        ``xor`` of such values and constants."""
        if v[0] == "phase":
            return True
        if v[0] != "call":
            return False
        if v[1] in COMPARES:
            return True
        t = num.types.get(v)
        return (v[1] in BIT_LOGIC and t is not None and t.bits == 1
                and all(a[0] == "const" or is_bit(a) for a in v[2:]))

    def bit_operand(v: tuple) -> Operand:
        if v[0] == "const":
            return Operand("const", v[1] & 1)
        if v[0] == "phase":
            return _phase_operand(g, v)
        return Operand("node", emit(v), bit=True)

    def cond(v: tuple) -> Operand:
        """A select's condition on the 1-bit network: a comparison's (or 1-bit logic's)
        ``res_p``, else the value's bit 0 through a ``ne(v & 1, 0)`` (only ``ne(v, 0)`` for
        0/1 values)."""
        if is_bit(v):
            return bit_operand(v)
        t = num.types.get(v)
        inner = v if t is not None and t.bits == 1 else ("call", "and", v, ("const", 1))
        return Operand("node", emit(("call", "ne", inner, ("const", 0))), bit=True)

    def emit(v: tuple) -> int:
        if v in index:
            return index[v]
        if v[0] == "lookup":
            if len(v[1]) > 1 << WORD_WIDTH:
                raise NetlistError(f"kernel {kernel.name}: lookup table of {len(v[1])} words")
            node = KNode("rom", {"data_in0": operand(v[2])}, table=v[1],
                         label=f"lut[{len(v[1])}]")
        else:
            op, args = v[1], v[2:]
            if op == "select":
                inputs = {"bit0": cond(args[0]), "data0": operand(args[1]),
                          "data1": operand(args[2])}
            elif is_bit(v) and op in BIT_LOGIC:
                op = BIT_LOGIC[op]
                inputs = {f"bit{i}": bit_operand(a) for i, a in enumerate(args)}
            else:
                inputs = {f"data{i}": operand(a) for i, a in enumerate(args)}
            node = KNode("pe", inputs, op=PE_OPS[op], label=op)
        deps = [g.nodes[o.value].sample + g.nodes[o.value].latency(pe_latency)
                for o in node.inputs.values() if o.kind == "node"]
        node.sample = max(deps, default=0)
        g.nodes.append(node)
        index[v] = len(g.nodes) - 1
        return index[v]

    g.result = operand(root)
    return g


def evaluate(g: KernelGraph, args: list[int], phases: list[int] = ()) -> int:
    """The value ``g`` computes for argument words ``args`` (16-bit) and loop-phase bits
    ``phases`` (one per ``g.phases``), with the PEs' reference model and the ROM tables: the
    semantics the netlist model replays cycle by cycle."""
    res: list[tuple[int, int]] = []

    def value(o: Operand) -> int:
        if o.kind == "arg":
            return args[o.value] & MASK
        if o.kind == "phase":
            return phases[o.value] & 1
        if o.kind == "const":
            return o.value
        return res[o.value][1 if o.bit else 0]

    for n in g.nodes:
        if n.kind == "rom":
            i = value(n.inputs["data_in0"])
            w = n.table[i] if i < len(n.table) else 0
            res.append((w, 0))
            continue
        words = [value(n.inputs[p]) if p in n.inputs else 0 for p in ("data0", "data1", "data2")]
        bits = [value(n.inputs[p]) if p in n.inputs else 0 for p in ("bit0", "bit1", "bit2")]
        res.append(pe_reference(n.op, *words, tuple(bits)))
    return value(g.result)
