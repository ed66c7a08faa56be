"""Polyhedral extraction (thesis §4.1, eqs. 4.1–4.5; paper §V-B): Program -> PolyProgram.

Each op's iteration domain is the Cartesian product of its enclosing loop bounds; each load and
the store become an access map. Two user errors are caught here with isl, each reported as a
one-line :class:`ExtractError` naming the op and the access:

* an out-of-bounds access (the image of the domain under the access map leaves the declared
  shape of the buffer);
* a read of a value never written (an element of a temp/output buffer that some op reads and
  no op writes).
"""
from __future__ import annotations

import islpy as isl

from ..ir.expr import Call, Kernel, Lookup, expr_depth
from ..ir.poly import PolyAccess, PolyOp, PolyProgram
from ..ir.program import Access, Loop, Op, Program
from ..ir.hw import HwParams


class ExtractError(ValueError):
    """A program that cannot be analysed: names the op and the offending access."""


def kernel_depth(kernel: Kernel | None, params: HwParams) -> int:
    """Compute latency of a kernel: the longest chain of PEs (and lookup-table reads) from an
    argument to the result (:func:`compiler.ir.expr.expr_depth`)."""
    if kernel is None:
        return 0
    return expr_depth(kernel.body, params.pe_latency, params.mem_read_latency)


def op_latency(op: Op, params: HwParams) -> int:
    """Eq. 4.7: L_op = L_mem_ld + L_compute + L_mem_st (0 with zero latencies; an instance still
    occupies its unit for its issue cycle)."""
    ld = params.mem_read_latency if op.loads else 0
    return ld + kernel_depth(op.kernel, params) + params.mem_write_latency


def _tuple(name: str, items) -> str:
    return f"{name}[{', '.join(map(str, items))}]"


def _domain_text(op: Op) -> str:
    cons = [f"{lp.start} <= {lp.name} < {lp.start + lp.extent}" for lp in op.loops]
    head = _tuple(op.name, [lp.name for lp in op.loops])
    return f"{{ {head} : {' and '.join(cons)} }}" if cons else f"{{ {head} }}"


def _access_map(ctx, op: Op, acc: Access, domain: isl.Set) -> isl.Map:
    text = (f"{{ {_tuple(op.name, [lp.name for lp in op.loops])} -> "
            f"{_tuple(acc.buffer, acc.index)} }}")
    try:
        return isl.Map.read_from_str(ctx, text).intersect_domain(domain)
    except isl.Error:
        raise ExtractError(f"op {op.name}: non-affine index in {acc}") from None


def _order_map(ctx, op: Op, depth: int) -> isl.Map:
    """2d+1 program-order schedule of one op, padded to ``depth`` loops."""
    coords, node = [], op
    while not isinstance(node, Program):
        parent = node.parent
        coords.append((parent.children.index(node), node.name if isinstance(node, Loop) else None))
        node = parent
    coords.reverse()                 # [(pos, loopname)...] root first; last entry is the op
    out = []
    for pos, loop_name in coords:
        out.append(str(pos))
        if loop_name is not None:
            out.append(loop_name)
    out += ["0"] * (2 * depth + 1 - len(out))
    text = f"{{ {_tuple(op.name, [lp.name for lp in op.loops])} -> [{', '.join(out)}] }}"
    return isl.Map.read_from_str(ctx, text)


def _point_text(s: isl.Set) -> str:
    """The lexicographically first point of ``s`` as ``name[i, j]``."""
    p = s.lexmin().sample_point()
    n = s.dim(isl.dim_type.set)
    coords = [str(p.get_coordinate_val(isl.dim_type.set, i).to_python()) for i in range(n)]
    return f"{s.get_tuple_name()}[{', '.join(coords)}]"


def _box(ctx, buffer: str, shape) -> isl.Set:
    names = [f"i{k}" for k in range(len(shape))]
    cons = " and ".join(f"0 <= {v} < {n}" for v, n in zip(names, shape))
    return isl.Set.read_from_str(ctx, f"{{ {_tuple(buffer, names)} : {cons} }}" if cons
                                 else f"{{ {buffer}[] }}")


def extract(program: Program, params: HwParams | None = None,
            ctx: isl.Context | None = None) -> PolyProgram:
    """Build the PolyProgram of ``program`` and check its accesses (see module doc)."""
    params = params or HwParams()
    ctx = ctx or isl.DEFAULT_CONTEXT
    program.validate()
    ops = program.ops()
    depth = max((len(op.loops) for op in ops), default=0)
    poly_ops: dict[str, PolyOp] = {}
    for op in ops:
        domain = isl.Set.read_from_str(ctx, _domain_text(op))
        loads = [PolyAccess(op.name, a.buffer, "load", k, _access_map(ctx, op, a, domain))
                 for k, a in enumerate(op.loads)]
        store = PolyAccess(op.name, op.store.buffer, "store", 0,
                           _access_map(ctx, op, op.store, domain))
        poly_ops[op.name] = PolyOp(
            name=op.name, dims=tuple(lp.name for lp in op.loops),
            bounds=tuple((lp.start, lp.extent) for lp in op.loops), domain=domain,
            loads=loads, store=store, unit=op.compute_unit,
            kernel=op.kernel.name if op.kernel else "", latency=op_latency(op, params),
            order=_order_map(ctx, op, depth))
    buffers = {b.name: {"shape": list(b.shape) if b.shape else None, "kind": b.kind,
                        "type": str(b.type)} for b in program.buffers.values()}
    poly = PolyProgram(program.name, poly_ops, buffers, ctx)
    _check_bounds(program, poly)
    _check_written(program, poly)
    return poly


def _check_bounds(program: Program, poly: PolyProgram) -> None:
    for op in program.ops():
        pop = poly.ops[op.name]
        for acc, pacc in zip(op.loads + [op.store], pop.loads + [pop.store]):
            shape = program.buffers[acc.buffer].shape
            if shape is None:
                continue
            outside = pacc.access.range().subtract(_box(poly.ctx, acc.buffer, shape))
            if not outside.is_empty():
                verb = "reads" if pacc.kind == "load" else "writes"
                raise ExtractError(
                    f"op {op.name}: {acc} {verb} out of bounds, e.g. {_point_text(outside)} "
                    f"outside shape {tuple(shape)}")


def _check_written(program: Program, poly: PolyProgram) -> None:
    for op in program.ops():
        pop = poly.ops[op.name]
        for acc, pacc in zip(op.loads, pop.loads):
            if program.buffers[acc.buffer].kind == "input":
                continue
            written = poly.writes(acc.buffer).range()
            read = isl.UnionSet.from_set(pacc.access.range())
            missing = read.subtract(written)
            if not missing.is_empty():
                example = _point_text(isl.Set.from_union_set(missing)) if \
                    missing.n_set() == 1 else acc.buffer
                raise ExtractError(f"op {op.name}: {acc} reads a value never written, "
                                   f"e.g. {example}")
