"""Helpers shared by the buffer-mapping passes: port timing, affine extraction, streams.

A port of a :class:`~compiler.ir.ubuf.UnifiedBuffer` is a triple (domain, access map, schedule)
of isl objects. The passes reason about it in two forms:

* as isl maps (dependence analysis, banking), through :func:`port_time` and :func:`t2addr`;
* as an affine :class:`Stream` over a box (what one controller can generate, docs/design.md §4):
  extents innermost first, an affine cycle and an affine multi-dimensional address.

Timing convention (the scheduler's, compiler/ir/schedule.py): a store of an op scheduled at
cycle ``T`` with latency ``L`` lands in the buffer at ``T + L``; a load reads at ``T``. A read at
cycle ``t`` sees the latest write that landed at a cycle ``<= t``.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import islpy as isl

from ..ir.ubuf import UBPort


class MappingError(ValueError):
    """A buffer that cannot be mapped onto the physical memories (one-line, names the buffer)."""


class SramConflict(MappingError):
    """A memory block's streams find no single-port SRAM schedule without a conflict."""


class TooSoon(MappingError):
    """A read comes too soon after its write for the wide-fetch SRAM (thesis §5.5.3)."""


class NotWideWord(MappingError):
    """A stream's addresses do not fill or fetch whole wide words (thesis §5.5.1-5.5.2): an
    accumulator rewritten at one address in turn, a column walk of a row-major buffer. A
    register file, which takes any address every cycle, may still hold it (§5.4)."""



def port_time(port: UBPort) -> isl.Map:
    """``{ instance -> [t] }``: the cycle at which the port accesses the buffer (a store's value
    lands ``latency`` cycles after its op's schedule)."""
    sched = port.schedule.intersect_domain(port.domain)
    if port.direction == "in" and port.latency:
        sched = sched.apply_range(shift_map(sched.get_ctx(), port.latency))
    return sched


def fire_disjoint(ports: list[UBPort]) -> bool:
    """No two of ``ports`` access the buffer in the same cycle (one select can serve them)."""
    times = [port_time(p).range() for p in ports]
    return all(a.intersect(b).is_empty() for a, b in itertools.combinations(times, 2))


def shift_map(ctx, d: int) -> isl.Map:
    """The cycle shift ``{ [t] -> [t + d] }``."""
    return isl.Map.read_from_str(ctx, f"{{ [t] -> [t + {d}] }}")


def shifted_port(port: UBPort, name: str, delay: int, direction: str = "out") -> UBPort:
    """A copy of ``port`` that accesses the same elements ``delay`` cycles after ``port`` does
    (the read side of a delay buffer, thesis Fig. 5.5 **MEM**)."""
    sched = port_time(port).apply_range(shift_map(port.domain.get_ctx(), delay))
    return replace(port, name=name, direction=direction, schedule=sched, latency=0)


def t2addr(port: UBPort) -> isl.Map:
    """Eq. 5.2: ``t2addr[p] = Inv(sched[p]).Apply(access_map[p])``: ``{ [t] -> element }``."""
    return port_time(port).reverse().apply_range(port.access.intersect_domain(port.domain))


# ----------------------------------------------------------------------------------------------
# Affine streams


@dataclass(frozen=True)
class Affine:
    """``start + sum_d strides[d] * i[d]`` (innermost dimension first)."""
    start: int
    strides: tuple[int, ...]

    def at(self, idx) -> int:
        return self.start + sum(s * i for s, i in zip(self.strides, idx))


@dataclass(frozen=True)
class Stream:
    """A port as one controller sees it: a box of ``extents`` (innermost first), the cycle of
    each point and its address, one :class:`Affine` per address dimension (buffer index order,
    first index innermost)."""
    name: str
    extents: tuple[int, ...]
    time: Affine
    addr: tuple[Affine, ...]


def _aff_coeffs(aff: isl.Aff, n_in: int, what: str) -> tuple[int, list[int]]:
    if aff.dim(isl.dim_type.div):
        raise MappingError(f"{what} is quasi-affine (floor/mod), not supported by a controller: "
                           f"split the loop instead of dividing its index")
    const = aff.get_constant_val()
    if not const.is_int():
        raise MappingError(f"{what} has a rational coefficient")
    coeffs = []
    for k in range(n_in):
        v = aff.get_coefficient_val(isl.dim_type.in_, k)
        if not v.is_int():
            raise MappingError(f"{what} has a rational coefficient")
        coeffs.append(v.to_python())
    return const.to_python(), coeffs


def affine_outputs(m: isl.Map, what: str) -> list[tuple[int, list[int]]]:
    """The affine form of every output dimension of a single-valued map whose domain is a box:
    ``[(const, [coeff per input dim]), ...]``. Raises :class:`MappingError` otherwise."""
    if not m.is_single_valued():
        raise MappingError(f"{what} is not a function")
    pma = isl.PwMultiAff.from_map(m)
    out = []
    for i in range(m.dim(isl.dim_type.out)):
        pieces: list[isl.Aff] = []
        pma.get_pw_aff(i).foreach_piece(lambda _s, a: pieces.append(a))
        if len(pieces) != 1:
            raise MappingError(f"{what} is piecewise, not one affine function")
        out.append(_aff_coeffs(pieces[0], m.dim(isl.dim_type.in_), what))
    return out


def box(domain: isl.Set, what: str) -> list[tuple[int, int, int]]:
    """``[(lo, stride, extent)]`` per set dimension (outermost first) of a (strided) box.

    Banking restricts domains to one bank (``k mod 2 = b``), which makes strided boxes."""
    domain = domain.coalesce()
    if domain.is_empty():
        raise MappingError(f"{what}: empty iteration domain")
    out = []
    for d in range(domain.dim(isl.dim_type.set)):
        lo = domain.dim_min_val(d)
        hi = domain.dim_max_val(d)
        if not (lo.is_int() and hi.is_int()):
            raise MappingError(f"{what}: iteration domain is unbounded")
        lo, hi = lo.to_python(), hi.to_python()
        st = max(1, domain.get_stride(d).to_python()) if lo != hi else 1
        out.append((lo, st, (hi - lo) // st + 1))
    names = [f"i{d}" for d in range(len(out))]
    cons = []
    for n, (lo, st, ext) in zip(names, out):
        cons.append(f"{lo} <= {n} <= {lo + st * (ext - 1)}")
        if st > 1:
            cons.append(f"exists (e{n}: {n} = {lo} + {st}e{n})")
    tup = domain.get_tuple_name() if domain.has_tuple_name() else ""
    expect = isl.Set.read_from_str(domain.get_ctx(), f"{{ {tup}[{', '.join(names)}] : "
                                   f"{' and '.join(cons) or 'true'} }}")
    if not domain.is_equal(expect):
        raise MappingError(f"{what}: iteration domain is not a box")
    return out


def _floor_split(m: isl.Map) -> tuple[int, int] | None:
    """A ``floor(i_d / k)`` in some output of ``m``: ``(d, k)``, else ``None``."""
    n_in = m.dim(isl.dim_type.in_)
    pma = isl.PwMultiAff.from_map(m)
    for i in range(m.dim(isl.dim_type.out)):
        pieces: list[isl.Aff] = []
        pma.get_pw_aff(i).foreach_piece(lambda _s, a: pieces.append(a))
        for aff in pieces:
            for j in range(aff.dim(isl.dim_type.div)):
                div = aff.get_div(j)
                k = div.get_denominator_val().to_python()
                num = [(div.get_coefficient_val(isl.dim_type.in_, d) * k).to_python()
                       for d in range(n_in)]
                const = (div.get_constant_val() * k).to_python()
                nested = any(not div.get_coefficient_val(isl.dim_type.div, q).is_zero()
                             for q in range(div.dim(isl.dim_type.div)))
                if not nested and const == 0 and sorted(num)[-1] == 1 \
                        and sum(abs(c) for c in num) == 1:
                    return num.index(1), k
    return None


def split_floors(port: UBPort) -> UBPort:
    """Strip-mine every domain dimension ``x`` that the access map reads as ``floor(x / k)``
    into ``(x / k, x % k)`` (e.g. an upsample read ``A[x/2]``), so that the access becomes
    affine in the new dimensions; the order of the instances is unchanged."""
    for _ in range(8):
        acc = port.access.intersect_domain(port.domain)
        found = _floor_split(acc)
        if found is None:
            return port
        d, k = found
        n = port.domain.dim(isl.dim_type.set)
        name = port.domain.get_tuple_name() if port.domain.has_tuple_name() else ""
        ins = [f"i{j}" for j in range(n)]
        outs = ins[:d] + [f"o{d}", f"r{d}"] + ins[d + 1:]
        split = isl.Map.read_from_str(
            port.domain.get_ctx(), f"{{ {name}[{', '.join(ins)}] -> {name}[{', '.join(outs)}] : "
                                   f"i{d} = {k}o{d} + r{d} and 0 <= r{d} < {k} }}")
        port = replace(port, domain=port.domain.apply(split),
                       access=acc.apply_domain(split),
                       schedule=port.schedule.intersect_domain(port.domain).apply_domain(split))
    return port


def unit_box(port: UBPort) -> UBPort:
    """Re-index a port's (strided) box domain to ``0 <= j_d < extent_d`` with unit steps
    (``i_d = lo_d + stride_d * j_d``), so that accesses like ``floor(k / 8)`` over ``k = b + 8j``
    become affine (``j``)."""
    dims = box(port.domain, f"port {port.name}")
    ctx = port.domain.get_ctx()
    name = port.domain.get_tuple_name() if port.domain.has_tuple_name() else ""
    js = [f"j{d}" for d in range(len(dims))]
    image = [f"{lo} + {st}j{d}" for d, (lo, st, _e) in enumerate(dims)]
    cons = " and ".join(f"0 <= j{d} < {e}" for d, (_lo, _st, e) in enumerate(dims)) or "true"
    param = isl.Map.read_from_str(ctx, f"{{ {name}[{', '.join(js)}] -> {name}[{', '.join(image)}]"
                                       f" : {cons} }}")
    return replace(port, domain=param.domain(),
                   access=param.apply_range(port.access.intersect_domain(port.domain)),
                   schedule=param.apply_range(port_time(port)), latency=0)


def port_stream(port: UBPort, name: str | None = None) -> Stream:
    """The :class:`Stream` of a port: its domain re-indexed from 0 with unit steps
    (:func:`unit_box`), innermost first, with the port's access cycle (:func:`port_time`) and
    access map. Floor divisions of single loop variables in the access map are strip-mined
    (:func:`split_floors`)."""
    what = f"port {port.name}"
    port = split_floors(unit_box(port))
    dims = box(port.domain, what)
    (t0, tc), = affine_outputs(port_time(port), f"{what} schedule")
    acc = affine_outputs(port.access.intersect_domain(port.domain), f"{what} access map")

    def form(const, coeffs):
        start = const + sum(c * lo for c, (lo, _st, _e) in zip(coeffs, dims))
        strides = tuple(c * st for c, (_lo, st, _e) in zip(coeffs, dims))
        return Affine(start, strides[::-1])

    return Stream(name or port.name, tuple(e for _lo, _st, e in dims)[::-1], form(t0, tc),
                  tuple(form(c, k) for c, k in acc))
