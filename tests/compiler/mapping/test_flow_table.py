"""Enumerated value flow (compiler.mapping.flow_table) against plain-Python references and
the isl formulation (thesis §5.1.1, §5.1.4)."""
import time

import islpy as isl
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.ir.ubuf import UnifiedBuffer
from compiler.mapping import flow_table
from compiler.mapping.dependence import constant_distances
from compiler.mapping.port_sharing import share_output_ports, shares_with

from .fixtures import brighten_buffer, port


def _accesses(p):
    """Plain-Python enumeration of a port: [(cycle, element tuple)]."""
    out, pts = [], []
    p.domain.foreach_point(pts.append)
    for pt in pts:
        s = pt.to_set()
        (t,) = [int(v) for v in _coords(p.schedule.intersect_domain(s).range())]
        el = tuple(_coords(p.access.intersect_domain(s).range()))
        out.append((t + (p.latency if p.direction == "in" else 0), el))
    return out


def _coords(s):
    pts = []
    s.foreach_point(pts.append)
    (pt,) = pts
    n = pt.get_space().dim(isl.dim_type.set)
    return [pt.get_coordinate_val(isl.dim_type.set, i).to_python() for i in range(n)]


def _reference_flow(ub, pout):
    """Per read (sorted by cycle): the (port, cycle) of the latest write landed by then."""
    writes = [(t, k, el) for k, p in enumerate(ub.inputs) for t, el in _accesses(p)]
    out = {}
    for t, el in _accesses(pout):
        cands = [(tw, k) for tw, k, e in writes if e == el and tw <= t]
        out[(t, el)] = max(cands) if cands else None
    return out


def _reloaded(n: int, tiles: int, gap: int, delays: list[int]) -> UnifiedBuffer:
    """A buffer reloaded ``tiles`` times (every element rewritten per tile, like resnet's
    ``in_mem`` under its ``ko`` loop), read by ports ``delays`` cycles after each write."""
    ports = [port("ld", "in", f"{{ ld[k, i] : 0 <= k < {tiles} and 0 <= i < {n} }}",
                  "{ ld[k, i] -> b[i] }", f"{{ ld[k, i] -> [{gap}k + i] }}")]
    for j, d in enumerate(delays):
        ports.append(port(f"r{j}", "out", f"{{ r{j}[k, i] : 0 <= k < {tiles} and 0 <= i < {n} }}",
                          f"{{ r{j}[k, i] -> b[i] }}", f"{{ r{j}[k, i] -> [{gap}k + i + {d}] }}"))
    return UnifiedBuffer("b", [n], "temp", "u16", ports)


def test_latest_writers_match_reference_on_rewritten_buffer():
    ub = _reloaded(6, 3, 20, [2, 7, 25])
    ft = flow_table.tables(ub)
    for pout in ub.outputs:
        ref = _reference_flow(ub, pout)
        found, port_no, tw = flow_table.latest_writers(ft, pout.name)
        t = ft.outs[pout.name].time
        tmin = min(min(a for a, _ in _accesses(p)) for p in ub.ports)
        got = {}
        for i in range(len(t)):
            got[int(t[i]) + tmin] = (int(tw[i]) + tmin, int(port_no[i])) if found[i] else None
        assert got == {k[0]: v for k, v in ref.items()}


def test_constant_distances_on_rewritten_buffer():
    # delay 2 and 7 read the current tile's value; a read 25 cycles later sees the NEXT
    # tile's rewrite (gap 20) for all but the last tile: not one constant delay
    ub = _reloaded(6, 3, 20, [2, 7, 25])
    d = constant_distances(ub)
    assert {k: v.delay for k, v in d.items()} == {"r0": 2, "r1": 7}


def test_brighten_distances_table_5_2():
    d = constant_distances(brighten_buffer(16))
    assert {k: v.delay for k, v in d.items()} == {"blur_1": 17, "blur_2": 16, "blur_3": 1,
                                                   "blur_4": 0}


def _reference_share(ub, p, q):
    """Plain Python §5.1.4: the smallest d >= 0 with q(t) = p(t - d) (same element, same
    latest write) for every read of q."""
    fp, fq = _reference_flow(ub, p), _reference_flow(ub, q)
    pread = {t: (el, w) for (t, el), w in fp.items()}
    tmax = max(t for t, _ in fq) + 1
    for d in range(tmax + 1):
        if all(pread.get(t - d) == (el, w) for (t, el), w in fq.items()):
            return d
    return None


@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 5), tiles=st.integers(1, 3), extra=st.integers(0, 8),
       delays=st.lists(st.integers(0, 14), min_size=2, max_size=3))
def test_share_delay_matches_reference(n, tiles, extra, delays):
    ub = _reloaded(n, tiles, n + extra, delays)      # one access per port per cycle
    ft = flow_table.tables(ub)
    sa = tiles == 1
    for p in ub.outputs:
        for q in ub.outputs:
            fast = flow_table.share_delay(ft, p.name, q.name, sa, {})
            assert fast == _reference_share(ub, p, q), (p.name, q.name)


def test_share_delay_matches_isl_on_single_assignment():
    ub = _reloaded(4, 1, 10, [1, 3, 6])
    ft = flow_table.tables(ub)
    for p in ub.outputs:
        for q in ub.outputs:
            assert flow_table.share_delay(ft, p.name, q.name, True, {}) == shares_with(ub, p, q)


def _broadcast(ic: int, oc: int, n: int) -> UnifiedBuffer:
    """``oc`` engines each read ``ic`` channels of the same pixel in the same cycle (resnet's
    input-channel reuse, thesis §7.3 / Table 7.8 text)."""
    ports = [port("ld", "in", f"{{ ld[x, c] : 0 <= x < {n} and 0 <= c < {ic} }}",
                  "{ ld[x, c] -> a[c, x] }", f"{{ ld[x, c] -> [{ic}x + c] }}")]
    for k in range(oc):
        for c in range(ic):
            nm = f"e{k}_{c}"
            ports.append(port(nm, "out", f"{{ {nm}[t, x] : 0 <= t < 2 and 0 <= x < {n} }}",
                              f"{{ {nm}[t, x] -> a[{c}, x] }}",
                              f"{{ {nm}[t, x] -> [{ic * n + 5} + {n}t + x] }}"))
    return UnifiedBuffer("a", [ic, n], "temp", "u16", ports)


def test_input_channel_broadcast_one_leader_per_channel():
    ic, oc = 4, 3
    ub = _broadcast(ic, oc, 5)
    shares = share_output_ports(ub, [p.name for p in ub.outputs])
    leaders = {s.leader for s in shares}
    assert leaders == {f"e0_{c}" for c in range(ic)}
    assert len(shares) == (oc - 1) * ic and all(s.delay == 0 for s in shares)
    assert {s.follower for s in shares} == {f"e{k}_{c}" for k in range(1, oc) for c in range(ic)}


def test_not_a_box_falls_back_to_isl():
    # a triangular domain is not an affine box stream: no table, the isl path answers
    ub = UnifiedBuffer("t", [4], "temp", "u16", [
        port("w", "in", "{ w[i, j] : 0 <= j <= i < 4 }", "{ w[i, j] -> t[i] }",
             "{ w[i, j] -> [4i + j] }"),
        port("r", "out", "{ r[i] : 0 <= i < 4 }", "{ r[i] -> t[i] }", "{ r[i] -> [4i + 5] }")])
    assert flow_table.tables(ub) is None
    assert constant_distances(ub) == {}


def test_resnet_in_mem_dependence_and_sharing_fast():
    """resnet's 64-port ``in_mem`` (written once per output-channel tile): the passes that took
    more than 15 minutes finish in seconds; the 8 engines of one input channel share one read
    (oc_unroll - 1 followers per input channel, delay 0: one memory, broadcast)."""
    from apps import resnet
    from compiler.schedule.report import schedule_program
    ub = schedule_program(resnet.build(width=4, height=4)).buffers["in_mem"]
    t0 = time.perf_counter()
    assert constant_distances(ub) == {}
    shares = share_output_ports(ub, [p.name for p in ub.outputs])
    assert time.perf_counter() - t0 < 20
    icu, ocu = resnet.SIZES["ic_unroll"], resnet.SIZES["oc_unroll"]
    assert len(shares) == (ocu - 1) * icu and all(s.delay == 0 for s in shares)
    assert len({s.leader for s in shares}) == icu
