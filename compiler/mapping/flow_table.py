"""Enumerated value flow of a unified buffer (thesis §5.1.1 and §5.1.4, evaluated with numpy).

:mod:`.dependence` states the dependence-distance analysis with isl maps (eqs. 5.1-5.3). For
buffers written more than once (an outer tile loop reloads them, e.g. resnet's ``in_mem``), the
"latest write that landed by the read's cycle" is an isl ``lexmax`` over a map whose size grows
with the number of output ports and the quasi-affine schedule; on resnet that took longer than
the whole compile budget. Every port of a mappable buffer is an affine stream over a box
(:func:`.common.port_stream`), so this module enumerates the streams instead -- exactly the
same finite sets -- and answers the same questions with sorting and binary search:

* :func:`latest_writers`: per read, the input port and landing cycle of the latest write of the
  same element with ``t_write <= t_read`` (the value flow of :func:`.dependence.value_flow`);
* :func:`constant_distance`: the Table 5.2 row of an output port (one input port, one delay);
* :func:`share_delay`: the smallest delay with which one output port's stream feeds another
  (§5.1.4, :func:`.port_sharing.shares_with`).

:func:`tables` returns ``None`` when a port is not a box stream or the buffer is too large to
enumerate; callers then fall back to the isl formulation.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..ir.ubuf import UnifiedBuffer
from .common import MappingError, Stream, port_stream
from .vectorize import enumerate_affine

MAX_POINTS = 20_000_000


@dataclass
class PortTable:
    """One port enumerated: access cycle and element id of every instance."""
    name: str
    time: np.ndarray
    elem: np.ndarray


@dataclass
class FlowTables:
    outs: dict[str, PortTable]
    # the writes of every input port sorted by (element, cycle, port number)
    w_key: np.ndarray
    w_elem: np.ndarray
    w_time: np.ndarray
    w_port: np.ndarray
    tspan: int
    espan: int = 1
    # per output port: its (cycle, element) keys sorted, and the sorting permutation
    _keys: dict = field(default_factory=dict, repr=False)

    def read_keys(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        if name not in self._keys:
            t = self.outs[name]
            key = t.time * self.espan + t.elem
            order = np.argsort(key, kind="stable")
            self._keys[name] = (key[order], order)
        return self._keys[name]


def tables(ub: UnifiedBuffer) -> FlowTables | None:
    """Enumerate every port of ``ub`` (``None`` if some port is not an affine box stream or the
    buffer has more than :data:`MAX_POINTS` accesses)."""
    try:
        streams: list[Stream] = [port_stream(p) for p in ub.ports]
    except MappingError:
        return None
    if not streams or sum(int(np.prod(s.extents, dtype=np.int64)) for s in streams) > MAX_POINTS:
        return None
    ndim = len(streams[0].addr)
    addrs = [[enumerate_affine(s.extents, a) for a in s.addr] for s in streams]
    lows = [min(int(a[d].min()) for a in addrs) for d in range(ndim)]
    highs = [max(int(a[d].max()) for a in addrs) for d in range(ndim)]
    elems = []
    for s, a in zip(streams, addrs):
        e, sc = np.zeros(int(np.prod(s.extents, dtype=np.int64)), np.int64), 1
        for d in range(ndim):
            e = e + (a[d] - lows[d]) * sc
            sc *= highs[d] - lows[d] + 1
        elems.append(e)
    ports = [PortTable(s.name, enumerate_affine(s.extents, s.time), e)
             for s, e in zip(streams, elems)]
    ins = [t for t, p in zip(ports, ub.ports) if p.direction == "in"]
    outs = {t.name: t for t, p in zip(ports, ub.ports) if p.direction == "out"}
    tmin = min(int(t.time.min()) for t in ports)
    tspan = max(int(t.time.max()) for t in ports) - tmin + 2
    if ins:
        w_elem = np.concatenate([t.elem for t in ins])
        w_time = np.concatenate([t.time for t in ins]) - tmin
        w_port = np.concatenate([np.full(len(t.time), k, np.int64) for k, t in enumerate(ins)])
    else:
        w_elem = w_time = w_port = np.zeros(0, np.int64)
    order = np.lexsort((w_port, w_time, w_elem))
    w_elem, w_time, w_port = w_elem[order], w_time[order], w_port[order]
    for t in ports:
        t.time = t.time - tmin
    espan = max(int(t.elem.max()) for t in ports) + 1
    return FlowTables(outs, w_elem * tspan + w_time, w_elem, w_time, w_port, tspan, espan)


def latest_writers(ft: FlowTables, pout: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per read of ``pout`` (in its enumeration order): ``(found, port, t_write)`` of the latest
    write of the same element that landed at a cycle ``<= t_read`` (ties: the highest port
    number, as :func:`.dependence.value_flow`)."""
    r = ft.outs[pout]
    pos = np.searchsorted(ft.w_key, r.elem * ft.tspan + r.time, side="right") - 1
    ok = pos >= 0
    posc = np.where(ok, pos, 0)
    if len(ft.w_key):
        ok &= ft.w_elem[posc] == r.elem
        return ok, ft.w_port[posc], ft.w_time[posc]
    z = np.zeros(len(r.time), np.int64)
    return np.zeros(len(r.time), bool), z, z


def constant_distance(ft: FlowTables, pout: str) -> tuple[int, int] | None:
    """``(input port number, delay)`` when every read of ``pout`` takes the value of one input
    port written a constant number of cycles earlier, else ``None``."""
    found, port, tw = latest_writers(ft, pout)
    if not len(found) or not found.all():
        return None
    if (port != port[0]).any():
        return None
    delay = ft.outs[pout].time - tw
    if (delay != delay[0]).any():
        return None
    return int(port[0]), int(delay[0])


def share_delay(ft: FlowTables, p: str, q: str, single_assignment: bool,
                flows: dict | None = None) -> int | None:
    """§5.1.4: the smallest ``d >= 0`` such that every read of ``q`` at cycle ``t`` reads the
    element ``p`` read at ``t - d`` and (unless the buffer is single-assignment) sees the same
    latest write; ``None`` when there is none."""
    tp, tq = ft.outs[p], ft.outs[q]
    espan = ft.espan
    pkey, _order = ft.read_keys(p)
    # candidates: the delays that match q's first read with a read of p of the same element
    first = int(np.argmin(tq.time))
    t0, e0 = int(tq.time[first]), int(tq.elem[first])
    cands = np.unique(t0 - tp.time[(tp.elem == e0) & (tp.time <= t0)])
    if not len(cands):
        return None
    qkey = tq.time * espan + tq.elem
    rng = np.random.default_rng(0)
    probe = rng.choice(len(qkey), size=min(64, len(qkey)), replace=False)
    vf = None
    for d in cands.tolist():
        shifted = qkey - d * espan
        if not _contains(pkey, shifted[probe]) or not _contains(pkey, shifted):
            continue
        if single_assignment:
            return d
        if vf is None:
            vf = {n: _flow(ft, n, flows) for n in (p, q)}
        if _same_flow(ft, vf[p], p, vf[q], tq, d):
            return d
    return None


def _contains(sorted_keys: np.ndarray, keys: np.ndarray) -> bool:
    pos = np.searchsorted(sorted_keys, keys)
    pos = np.minimum(pos, len(sorted_keys) - 1)
    return bool((sorted_keys[pos] == keys).all())


def _flow(ft: FlowTables, name: str, cache: dict | None):
    if cache is not None and name in cache:
        return cache[name]
    v = latest_writers(ft, name)
    if cache is not None:
        cache[name] = v
    return v


def _same_flow(ft: FlowTables, fp, p: str, fq, tq: PortTable, d: int) -> bool:
    """Every read of q that has a writer sees the writer (port, cycle) that p's read at
    ``t - d`` of the same element sees."""
    found_q, port_q, tw_q = fq
    found_p, port_p, tw_p = fp
    espan = ft.espan
    pk, order = ft.read_keys(p)
    qsel = np.nonzero(found_q)[0]
    qkey = (tq.time[qsel] - d) * espan + tq.elem[qsel]
    pos = np.searchsorted(pk, qkey)
    pos = np.minimum(pos, len(pk) - 1)
    if not (pk[pos] == qkey).all():
        return False
    idx = order[pos]
    return bool(found_p[idx].all() and (port_p[idx] == port_q[qsel]).all()
                and (tw_p[idx] == tw_q[qsel]).all())
