"""The bitstream checker: from the bitstream and the routing graph alone, what each tile
computes and what connects to what with which latency, compared with the netlist
(docs/pnr.md "Checking the bitstream").

Independent of the placer and router: it reads nothing they produced but the bitstream and
which tile holds each netlist node. It decodes every write through the full register map
(``ubgen.array.graph.full_regmap``; an address outside it is an error), rebuilds every tile's
register values (writes over reset values), and then

* **tiles**: every netlist node's tile holds exactly the node's core registers (registers the
  node does not name at their reset value) and window words;
* **wires**: for every core input of a used tile whose connection box selects a track, it walks
  the routing graph backwards by the select registers (connection box -> incoming track ->
  the neighbour's outgoing track -> its switch-box mux -> the mux's selected input ...) until
  it reaches a core output, counting the muxes whose pipeline register is enabled. A tile
  that holds no netlist node but has core registers written must be a register PE (``PASS``,
  nothing else configured); the walk continues through it (``res`` from ``data0``, ``res_p``
  from ``bit0``), adding its output register. The connections found between netlist nodes,
  ``(u, src_port) -> (v, dst_port)`` with their latency, must equal the netlist's edges, and
  every netlist edge must be found;
* **combinational paths**: the longest run of switch-box hops without a register, continued
  through combinational PEs (``out_reg = 0``), is reported as ``max_comb_hops``.
"""
from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field

from ubgen.arch import WORD_MASK
from ubgen.pe.ops import PEOp

from .bitstream import Bitstream, RegisterIndex
from .netlist import Netlist

_INTERCONNECT = re.compile(r"^(sb\d+_[NESW]_\d+_(sel|pipe)|cb_\w+_sel)$")


@dataclass
class CheckReport:
    ok: bool
    errors: list[str] = field(default_factory=list)
    tiles: int = 0
    edges: int = 0
    register_pes: int = 0
    max_comb_hops: int = 0
    computes: dict[str, str] = field(default_factory=dict)   # tile -> what it computes

    def summary(self) -> str:
        if self.ok:
            return (f"pass: {self.tiles} tiles, {self.edges} connections with their latencies, "
                    f"{self.register_pes} register PEs, longest combinational path "
                    f"{self.max_comb_hops} switch-box hops")
        more = f" (+{len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        return f"fail: {self.errors[0]}{more}"


class _Reverse:
    """The routing graph read backwards: ``(node, select) -> source`` of every mux and
    connection box, the fixed driver of every other node."""

    def __init__(self, g):
        self.sel: dict[tuple[str, int], str] = {}
        self.fixed: dict[str, str] = {}
        self.reg_of: dict[str, tuple[int, str]] = {}
        self.pipe_of: dict[str, tuple[int, str]] = {}
        for u, v, d in g.edges(data=True):
            kv = g.nodes[v]["kind"]
            if kv in ("sb_mux", "cb"):
                self.sel[(v, d["sel"])] = u
                self.reg_of[v] = tuple(d["reg"])
            elif kv == "sb_out" and g.nodes[u]["kind"] == "sb_mux":
                self.fixed[v] = u
                if d["reg"] is not None:
                    self.pipe_of[u] = tuple(d["reg"])
            elif kv in ("sb_in", "port_in"):
                self.fixed[v] = u


_REVERSE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _reverse(g) -> _Reverse:
    if g not in _REVERSE:
        _REVERSE[g] = _Reverse(g)
    return _REVERSE[g]


@dataclass
class _Segment:
    src_tile: int
    src_port: str
    hops: int
    regs: int
    first: int      # hops before the first register (all hops when none)
    last: int       # hops after the last register
    inner: int      # longest run between two registers


def check_bitstream(bits: Bitstream, net: Netlist, tiles: dict[str, int], graph,
                    index: RegisterIndex) -> CheckReport:
    """Check ``bits`` against ``net`` whose nodes sit on ``tiles`` (``node -> tile_id``)."""
    errors: list[str] = []
    state: dict[tuple[int, str], int] = {}
    window: dict[tuple[int, str], dict[int, int]] = {}
    for addr, value in bits.writes:
        dec = index.decode(addr)
        if dec is None:
            errors.append(f"write to {addr:#x}: not a tile register")
            continue
        tid, name, idx = dec
        if idx is None:
            state[(tid, name)] = value
        else:
            window.setdefault((tid, name), {})[idx] = value
    rev = _reverse(graph)

    def reg(tid, name):
        return state.get((tid, name), index.reset.get((tid, name), 0))

    core_regs: dict[int, list[str]] = {}
    cb_ports: dict[int, list[str]] = {}
    for (tid, name) in index.regs:
        if not _INTERCONNECT.match(name):
            core_regs.setdefault(tid, []).append(name)
        elif name.startswith("cb_"):
            cb_ports.setdefault(tid, []).append(name[3:-4])
    written = {tid for tid, _n in state} | {tid for tid, _n in window}
    core_written = {tid for (tid, name) in state if not _INTERCONNECT.match(name)} | \
        {tid for tid, _n in window}
    node_at = {t: n for n, t in tiles.items()}
    report = CheckReport(ok=False)

    # --- tiles ----------------------------------------------------------------------------
    for n in sorted(net.graph.nodes):
        d = net.graph.nodes[n]
        tid = tiles[n]
        if index.kind.get(tid) != d["kind"]:
            errors.append(f"{n} ({d['kind']}) sits on a {index.kind.get(tid)} tile {tid}")
            continue
        for name in core_regs.get(tid, []):
            want = d["config"].get(name, index.reset[(tid, name)])
            want &= (1 << index.regs[(tid, name)][1]) - 1
            if reg(tid, name) != want:
                errors.append(f"{n} (tile {tid}): register {name} is {reg(tid, name)}, the "
                              f"netlist says {want}")
        for name in d["config"]:
            if (tid, name) not in index.regs:
                errors.append(f"{n} (tile {tid}): no register {name}")
        got = {}
        for (t, _w), words in window.items():
            if t == tid:
                got.update(words)
        want_w = {o: w & WORD_MASK for o, w in d["window"].items()}
        if got != want_w:
            errors.append(f"{n} (tile {tid}): window holds {len(got)} words, the netlist "
                          f"{len(want_w)}" + ("" if len(got) != len(want_w) else
                                             " (different values)"))
        report.computes[f"T{tid}"] = _describe(d, reg, tid)
        report.tiles += 1
    register_pes: set[int] = set()
    for tid in sorted(core_written - set(node_at)):
        if index.kind.get(tid) != "pe":
            errors.append(f"tile {tid} ({index.kind.get(tid)}) is configured but holds no "
                          f"netlist node")
            continue
        extra = [nm for nm in core_regs[tid] if nm not in ("op", "out_reg")
                 and reg(tid, nm) != index.reset[(tid, nm)]]
        if reg(tid, "op") != int(PEOp.PASS) or extra:
            errors.append(f"tile {tid} holds no netlist node and is not a register PE "
                          f"(op {reg(tid, 'op')}, {', '.join(extra) or 'no other registers'})")
            continue
        register_pes.add(tid)
        report.computes[f"T{tid}"] = f"register PE (out_reg {reg(tid, 'out_reg')})"
    report.register_pes = len(register_pes)

    # --- wires ----------------------------------------------------------------------------
    segments: dict[tuple[int, str], _Segment] = {}

    def trace(tid: int, port: str) -> _Segment | None:
        """The core output driving input ``port`` of tile ``tid`` (None: constant 0)."""
        key = (tid, port)
        if key in segments:
            return segments[key]
        cb = f"T{tid}.cb.{port}"
        sel = reg(tid, f"cb_{port}_sel")
        if sel == 0:
            return None
        node = rev.sel.get((cb, sel))
        if node is None:
            errors.append(f"tile {tid} input {port}: connection box select {sel} reads "
                          f"no track (constant 0)")
            return None
        hops = regs = 0
        runs, run = [], 0
        seen = set()
        while True:
            if node in seen or len(seen) > 100000:
                errors.append(f"tile {tid} input {port}: the route loops at {node}")
                return None
            seen.add(node)
            kind = graph.nodes[node]["kind"]
            if kind == "port_out":
                break
            if kind == "sb_in":
                drv = rev.fixed.get(node)
                if drv is None:
                    errors.append(f"tile {tid} input {port}: {node} has no driver")
                    return None
                node = drv
                continue
            if kind == "sb_out":
                mux = rev.fixed[node]
                hops += 1
                pipe = rev.pipe_of.get(mux)
                if pipe is not None and reg(*pipe):
                    regs += 1
                    runs.append(run)
                    run = 0
                else:
                    run += 1
                msel = reg(*rev.reg_of[mux])
                src = rev.sel.get((mux, msel))
                if src is None:
                    errors.append(f"tile {tid} input {port}: mux {mux} select {msel} reads "
                                  f"no input (constant 0)")
                    return None
                node = src
                continue
            errors.append(f"tile {tid} input {port}: unexpected {kind} node {node}")
            return None
        # runs were collected walking backwards: runs[0] is the run after the last register
        if regs:
            last, first = runs[0], run
            inner = max(runs[1:], default=0)
        else:
            last = first = run
            inner = 0
        src_tile = graph.nodes[node]["tile"]
        seg = _Segment(src_tile, graph.nodes[node]["port"], hops, regs, first, last, inner)
        segments[key] = seg
        return seg

    found: dict[tuple[str, str], tuple[str, str, int]] = {}
    for v in sorted(net.graph.nodes):
        tid = tiles[v]
        for port in sorted(cb_ports.get(tid, [])):
            seg = trace(tid, port)
            if seg is None:
                continue
            lat = seg.regs
            src_tile, src_port = seg.src_tile, seg.src_port
            guard = 0
            while src_tile in register_pes and guard < 10000:
                guard += 1
                lat += reg(src_tile, "out_reg")
                inp = {"res": "data0", "res_p": "bit0"}[src_port]
                up = trace(src_tile, inp)
                if up is None:
                    errors.append(f"register PE tile {src_tile} feeding {v}.{port} has no "
                                  f"routed {inp}")
                    break
                lat += up.regs
                src_tile, src_port = up.src_tile, up.src_port
            if src_tile in register_pes:
                continue
            if src_tile not in node_at:
                errors.append(f"{v}.{port} is driven by tile {src_tile}.{src_port}, which "
                              f"holds no netlist node")
                continue
            found[(v, port)] = (node_at[src_tile], src_port, lat)
    expected = {(v, d["dst_port"]): (u, d["src_port"], d["latency"])
                for u, v, d in net.graph.edges(data=True)}
    for key in sorted(set(expected) | set(found)):
        e, f = expected.get(key), found.get(key)
        if e == f:
            continue
        v, port = key
        if f is None:
            errors.append(f"{v}.{port} should be driven by {e[0]}.{e[1]} (+{e[2]}) but its "
                          f"connection box selects nothing")
        elif e is None:
            errors.append(f"{v}.{port} is driven by {f[0]}.{f[1]} (+{f[2]}); the netlist "
                          f"has no such edge")
        elif e[:2] != f[:2]:
            errors.append(f"{v}.{port} is driven by {f[0]}.{f[1]}, the netlist says "
                          f"{e[0]}.{e[1]}")
        else:
            errors.append(f"{v}.{port} <- {e[0]}.{e[1]}: latency {f[2]}, the netlist "
                          f"says {e[2]}")
    report.edges = sum(1 for k in expected if expected[k] == found.get(k))

    # --- combinational paths -----------------------------------------------------------------
    def comb_tile(t):
        return index.kind.get(t) == "pe" and (t, "out_reg") in index.regs \
            and reg(t, "out_reg") == 0 and t in written

    into: dict[int, list[_Segment]] = {}
    for (t, _p), seg in segments.items():
        into.setdefault(t, []).append(seg)
    memo: dict[int, int] = {}

    def arrive(t, stack=()):
        """Longest unregistered run of hops arriving at a combinational tile ``t``."""
        if t in memo:
            return memo[t]
        if t in stack:
            errors.append(f"combinational loop through tile {t}")
            return 0
        best = 0
        for seg in into.get(t, []):
            up = arrive(seg.src_tile, stack + (t,)) if comb_tile(seg.src_tile) else 0
            best = max(best, seg.last if seg.regs else seg.hops + up)
        memo[t] = best
        return best

    longest = 0
    for seg in segments.values():
        up = arrive(seg.src_tile) if comb_tile(seg.src_tile) else 0
        longest = max(longest, seg.inner, seg.last, seg.first + up)
    report.max_comb_hops = longest
    report.errors = errors
    report.ok = not errors
    return report


def _describe(d: dict, reg, tid: int) -> str:
    if d["kind"] == "pe":
        try:
            op = PEOp(reg(tid, "op")).name
        except ValueError:
            op = f"op {reg(tid, 'op')}"
        return f"PE {op}" + (" (registered)" if reg(tid, "out_reg") else "")
    return f"{d['kind'].upper()} {d.get('label', '')}"
