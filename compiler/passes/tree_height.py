"""Tree-height reduction of compute kernels, a middle-end pass: Program -> Program
(docs/design.md §3, docs/scheduling.md).

A kernel is evaluated as written, so ``a0 + a1 + ... + a8`` is a chain of 8 adders. Its
compute latency -- the longest PE chain of the kernel, ``L_compute`` in the op latency of
thesis eq. 4.7 (``compiler.poly.extract.kernel_depth``) -- is then 8 PEs where a balanced tree
needs 4. That latency is the per-instance cost of the sequential baseline (thesis §4.3 intro,
eqs. 4.8/4.9; paper Table VI) and the pipeline fill of every optimized schedule, and hardware
compilers reassociate such sums (the paper's sequential gaussian, 4096 + 62 * 62 * 6 cycles,
is one load + a 4-level tree of multiplies and adds + the shift per output pixel).

The pass
--------
A *chain* is a maximal tree of :data:`REASSOCIATIVE` ``Call`` nodes with the same op and the
same result type in which every node except the root has exactly one user (the operand slot of
its parent in the chain). Its *leaves* are the operands that are not chain nodes. A chain is
rebuilt over the same leaves as a binary tree by the classic greedy of tree-height reduction
(Huffman's merge with ``max(a, b) + L_PE`` in place of ``a + b``): repeatedly combine the two
operands that are ready earliest. Ready times are the leaves' depths under the latency model of
``kernel_depth`` (``pe_latency`` per PE, ``lookup_latency`` per lookup table), so a product
``a * w`` (ready after one PE) meets another product while the plain arguments are summed first,
and the resulting root is as early as any binary tree over those leaves can make it. Ties go to
the structurally shallower operand, then to the leaf order, so equal leaves give a perfectly
balanced tree (with all latencies 0 as well). Chains are rebuilt bottom-up, so a leaf is already
reduced when its chain is.

What the pass keeps:

* the number of ``Call`` nodes (PEs) and ``Lookup`` nodes: a chain of ``n`` leaves has ``n - 1``
  binary nodes before and after; no constant is folded and no node is duplicated;
* sharing: a node with more than one user is never absorbed into a chain (it is a leaf of the
  chains that use it and stays one node);
* types: every rebuilt node has the chain's type; leaves keep theirs;
* bit-exact values (the interpreter's semantics, ``compiler.interp``): ``add`` and ``mul``
  (low bits) of the chain's width are a commutative ring modulo ``2**bits``, ``and or xor`` act
  bit by bit, and the low bits of those results depend only on the low bits of the operands, so
  the truncation of each intermediate result to the chain type changes nothing.
  ``smin smax umin umax`` return one of their operands, which the truncation to the chain type
  preserves when the chain is 16 bits wide (the PE word) or every operand already has the chain
  type; a narrower chain with operands of another type is not reassociated. Signed and unsigned
  min/max are different ops and never meet in one chain.

``sub``, shifts, comparisons, ``select``, ``abs``, ``absdiff``, ``mac``, ``pass`` and lookups are
never reassociated; they end chains (as leaves or as the user of a chain's root).

``compiler.schedule.report.schedule_program`` runs the pass before extraction, so the latency
model, both schedules, the unified buffers and the interpreter runs of ``ubc`` and ``make sim``
all see the same balanced kernels (docs/scheduling.md).
"""
from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass

from ubgen.arch import WORD_WIDTH

from ..ir.expr import Arg, Call, Const, Expr, Kernel, Lookup, LoopPhase, expr_depth, pe_stages
from ..ir.program import Program, kernel_to_dict

REASSOCIATIVE = frozenset({"add", "mul", "and", "or", "xor", "smin", "smax", "umin", "umax"})
"""Associative and commutative PE ops (docs/design.md §5.2) whose chains are rebuilt as trees."""
SELECTING = frozenset({"smin", "smax", "umin", "umax"})
"""Ops whose result is one of their operands (associative only without a lossy truncation)."""


@dataclass(frozen=True)
class Latency:
    """The latency model of ``kernel_depth``: cycles per PE and per lookup-table read."""
    pe: int = 1
    lookup: int = 1


def _operands(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Lookup):
        return (node.index,)
    return ()


def _exact(node: Call) -> bool:
    """Whether ``node`` may be regrouped: min/max on a type narrower than the word only when
    every operand has that type (otherwise the truncation of an intermediate result loses the
    value a later comparison needs)."""
    return (node.op not in SELECTING or node.type.bits >= WORD_WIDTH
            or all(a.type == node.type for a in node.args))


def _absorbed(nodes: list[Expr]) -> set[int]:
    """Ids of the chain nodes that are not a chain's root (absorbed into their only user)."""
    uses = Counter(id(a) for n in nodes for a in _operands(n))
    out: set[int] = set()
    for n in nodes:
        if not (isinstance(n, Call) and n.op in REASSOCIATIVE and _exact(n)):
            continue
        for a in n.args:
            if (isinstance(a, Call) and a.op == n.op and a.type == n.type
                    and uses[id(a)] == 1 and _exact(a)):
                out.add(id(a))
    return out


def _leaves(root: Call, absorbed: set[int]) -> list[Expr]:
    """The operands of the chain rooted at ``root``, left to right."""
    out: list[Expr] = []
    stack = list(reversed(root.args))
    while stack:
        node = stack.pop()
        if id(node) in absorbed:
            stack.extend(reversed(node.args))
        else:
            out.append(node)
    return out


def _tree(op: str, type_, leaves: list[Expr], depth: dict[int, int], latency: Latency) -> Expr:
    """The binary ``op`` tree over ``leaves`` whose root is ready earliest (greedy merge of the
    two earliest operands; ties: structurally shallower, then leaf order). Records the depth
    of every new node in ``depth``."""
    # (ready time, structural height, sequence number, first leaf index, node)
    heap = [(depth[id(leaf)], 0, k, k, leaf) for k, leaf in enumerate(leaves)]
    heapq.heapify(heap)
    seq = len(heap)
    while len(heap) > 1:
        d1, h1, _, f1, a = heapq.heappop(heap)
        d2, h2, _, f2, b = heapq.heappop(heap)
        if f2 < f1:
            a, b = b, a
        node = Call(op, (a, b), type_)
        depth[id(node)] = latency.pe * pe_stages(node) + max(d1, d2)
        heapq.heappush(heap, (depth[id(node)], 1 + max(h1, h2), seq, min(f1, f2), node))
        seq += 1
    return heap[0][-1]


def balance_kernel(kernel: Kernel, latency: Latency = Latency()) -> Kernel:
    """``kernel`` with every reassociable chain rebuilt as an earliest-ready tree (module doc).

    Returns ``kernel`` itself when no chain changes shape; never modifies it."""
    nodes = kernel.nodes()
    absorbed = _absorbed(nodes)
    new: dict[int, Expr] = {}        # old node id -> rebuilt node
    depth: dict[int, int] = {}       # rebuilt node id -> ready time (kernel_depth's model)
    for n in nodes:
        if id(n) in absorbed:
            continue
        if isinstance(n, Call) and any(id(a) in absorbed for a in n.args):
            built = _tree(n.op, n.type, [new[id(leaf)] for leaf in _leaves(n, absorbed)],
                          depth, latency)
        elif isinstance(n, Call):
            args = tuple(new[id(a)] for a in n.args)
            built = n if all(x is y for x, y in zip(args, n.args)) else Call(n.op, args, n.type)
            depth[id(built)] = latency.pe * pe_stages(built) + max(depth[id(a)] for a in args)
        elif isinstance(n, Lookup):
            index = new[id(n.index)]
            built = n if index is n.index else Lookup(n.table, index, n.type)
            depth[id(built)] = latency.lookup + depth[id(index)]
        else:
            assert isinstance(n, (Arg, Const, LoopPhase)), n
            built = n
            depth[id(built)] = 0
        new[id(n)] = built
    body = new[id(kernel.body)]
    if body is kernel.body or (expr_depth(body, latency.pe, latency.lookup)
                               > expr_depth(kernel.body, latency.pe, latency.lookup)):
        return kernel          # (a 1-bit chain's masks can make a tree deeper than the chain)
    return Kernel(kernel.name, kernel.n_args, body, kernel.arg_types)


def balance_program(program: Program, latency: Latency = Latency()) -> Program:
    """A new Program equal to ``program`` except that every op's kernel is
    :func:`balance_kernel`'s (``program`` is not modified). Loops, accesses, buffers, kernel
    names and compute units are unchanged."""
    kernels: dict[int, Kernel] = {}
    by_op = {}
    for op in program.ops():
        if op.kernel is not None:
            if id(op.kernel) not in kernels:
                kernels[id(op.kernel)] = balance_kernel(op.kernel, latency)
            by_op[op.name] = kernel_to_dict(kernels[id(op.kernel)])
    data = program.to_dict()

    def visit(node: dict) -> None:
        if "op" in node:
            if node["op"] in by_op:
                node["kernel"] = by_op[node["op"]]
        else:
            for child in node["children"]:
                visit(child)

    for child in data["children"]:
        visit(child)
    return Program.from_dict(data).validate()
