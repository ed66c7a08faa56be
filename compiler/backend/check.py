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
* **unrouted outputs**: every switch-box select written that no traced route goes through
  selects its mux's constant 0 (``zero_sel`` of the routing graph), so it passes nothing on;
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
_SB_SEL = re.compile(r"^sb(\d+)_([NESW])_(\d+)_sel$")


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
    return _Checker(bits, net, tiles, graph, index).run()


class _Checker:
    """One run of :func:`check_bitstream`: the tile registers rebuilt from the bitstream, and
    one method per check, in the order of the module docstring. Errors accumulate in
    ``errors`` in the order they are found."""

    def __init__(self, bits: Bitstream, net: Netlist, tiles: dict[str, int], graph,
                 index: RegisterIndex):
        self.net, self.tiles, self.graph, self.index = net, tiles, graph, index
        self.rev = _reverse(graph)
        self.errors: list[str] = []
        self.report = CheckReport(ok=False)
        self.state: dict[tuple[int, str], int] = {}
        self.window: dict[tuple[int, str], dict[int, int]] = {}
        self.decode(bits)
        self.core_regs: dict[int, list[str]] = {}
        self.cb_ports: dict[int, list[str]] = {}
        for (tid, name) in index.regs:
            if not _INTERCONNECT.match(name):
                self.core_regs.setdefault(tid, []).append(name)
            elif name.startswith("cb_"):
                self.cb_ports.setdefault(tid, []).append(name[3:-4])
        self.node_at = {t: n for n, t in tiles.items()}
        self.register_pes: set[int] = set()
        self.segments: dict[tuple[int, str], _Segment] = {}
        self.routed: set[str] = set()       # switch-box muxes some traced route goes through

    def run(self) -> CheckReport:
        self.check_node_tiles()
        self.check_register_pes()
        found = self.connections()
        self.compare_with_netlist(found)
        self.check_unrouted_outputs()
        self.report.max_comb_hops = self.max_comb_hops()
        self.report.errors = self.errors
        self.report.ok = not self.errors
        return self.report

    # --- tile registers ------------------------------------------------------------------
    def decode(self, bits: Bitstream) -> None:
        """Every write through the register map: a register value or a window word."""
        for addr, value in bits.writes:
            dec = self.index.decode(addr)
            if dec is None:
                self.errors.append(f"write to {addr:#x}: not a tile register")
                continue
            tid, name, idx = dec
            if idx is None:
                self.state[(tid, name)] = value
            else:
                self.window.setdefault((tid, name), {})[idx] = value

    def reg(self, tid: int, name: str) -> int:
        """A register's value: its last write, else its reset value."""
        return self.state.get((tid, name), self.index.reset.get((tid, name), 0))

    def check_node_tiles(self) -> None:
        """Every netlist node's tile is of its kind and holds exactly its core registers and
        window words."""
        for n in sorted(self.net.graph.nodes):
            d = self.net.graph.nodes[n]
            tid = self.tiles[n]
            kind = self.index.kind.get(tid)
            if kind != d["kind"]:
                self.errors.append(f"{n} ({d['kind']}) sits on a {kind} tile {tid}")
                continue
            self.check_core_registers(n, d, tid)
            self.check_window(n, d, tid)
            self.report.computes[f"T{tid}"] = _describe(d, self.reg, tid)
            self.report.tiles += 1

    def check_core_registers(self, n: str, d: dict, tid: int) -> None:
        index = self.index
        for name in self.core_regs.get(tid, []):
            want = d["config"].get(name, index.reset[(tid, name)])
            want &= (1 << index.regs[(tid, name)][1]) - 1
            if self.reg(tid, name) != want:
                self.errors.append(f"{n} (tile {tid}): register {name} is "
                                   f"{self.reg(tid, name)}, the netlist says {want}")
        for name in d["config"]:
            if (tid, name) not in index.regs:
                self.errors.append(f"{n} (tile {tid}): no register {name}")

    def check_window(self, n: str, d: dict, tid: int) -> None:
        got = {}
        for (t, _w), words in self.window.items():
            if t == tid:
                got.update(words)
        want = {o: w & WORD_MASK for o, w in d["window"].items()}
        if got != want:
            self.errors.append(f"{n} (tile {tid}): window holds {len(got)} words, the netlist "
                               f"{len(want)}" + ("" if len(got) != len(want) else
                                                 " (different values)"))

    def check_register_pes(self) -> None:
        """Every other tile with core registers written is a register PE: ``PASS``, nothing
        but ``out_reg`` besides."""
        reg, index = self.reg, self.index
        core_written = {tid for (tid, name) in self.state if not _INTERCONNECT.match(name)} | \
            {tid for tid, _n in self.window}
        for tid in sorted(core_written - set(self.node_at)):
            if index.kind.get(tid) != "pe":
                self.errors.append(f"tile {tid} ({index.kind.get(tid)}) is configured but holds "
                                   f"no netlist node")
                continue
            extra = [nm for nm in self.core_regs[tid] if nm not in ("op", "out_reg")
                     and reg(tid, nm) != index.reset[(tid, nm)]]
            if reg(tid, "op") != int(PEOp.PASS) or extra:
                self.errors.append(f"tile {tid} holds no netlist node and is not a register PE "
                                   f"(op {reg(tid, 'op')}, "
                                   f"{', '.join(extra) or 'no other registers'})")
                continue
            self.register_pes.add(tid)
            self.report.computes[f"T{tid}"] = f"register PE (out_reg {reg(tid, 'out_reg')})"
        self.report.register_pes = len(self.register_pes)

    def check_unrouted_outputs(self) -> None:
        """Every switch-box select the bitstream writes belongs to a traced route, or selects
        the mux's constant 0 (the routing graph's ``zero_sel``): an output no route uses must
        pass nothing on to its neighbour (docs/energy.md "An unused tile")."""
        for (tid, name), value in sorted(self.state.items()):
            mo = _SB_SEL.match(name)
            if mo is None:
                continue
            mux = f"T{tid}.sb{mo[1]}.mux.{mo[2]}.{mo[3]}"
            if mux in self.routed or not self.graph.has_node(mux):
                continue
            if value != self.graph.nodes[mux]["zero_sel"]:
                self.errors.append(f"tile {tid}: {name} = {value} on an output no route uses "
                                   f"(its constant 0 is {self.graph.nodes[mux]['zero_sel']})")

    # --- wires -----------------------------------------------------------------------------
    def trace(self, tid: int, port: str) -> _Segment | None:
        """The core output driving input ``port`` of tile ``tid`` and the switch-box hops and
        enabled pipeline registers on the way (None: constant 0 or a broken route)."""
        key = (tid, port)
        if key in self.segments:
            return self.segments[key]
        sel = self.reg(tid, f"cb_{port}_sel")
        if sel == 0:
            return None
        node = self.rev.sel.get((f"T{tid}.cb.{port}", sel))
        if node is None:
            self.errors.append(f"tile {tid} input {port}: connection box select {sel} reads "
                               f"no track (constant 0)")
            return None
        walk = self.walk_back(tid, port, node)
        if walk is None:
            return None
        node, hops, runs, run = walk
        # runs were collected walking backwards: runs[0] is the run after the last register
        regs = len(runs)
        if regs:
            last, first = runs[0], run
            inner = max(runs[1:], default=0)
        else:
            last = first = run
            inner = 0
        seg = _Segment(self.graph.nodes[node]["tile"], self.graph.nodes[node]["port"], hops,
                       regs, first, last, inner)
        self.segments[key] = seg
        return seg

    def walk_back(self, tid: int, port: str, node: str):
        """From the track a connection box selects back to a core output, by the fixed
        drivers and the muxes' selects: ``(output node, switch-box hops, the unregistered
        runs ended by each enabled pipeline register, the run before the first)``, or None
        (an error is recorded)."""
        rev, graph, reg = self.rev, self.graph, self.reg
        hops = run = 0
        runs: list[int] = []
        seen = set()
        while True:
            if node in seen or len(seen) > 100000:
                self.errors.append(f"tile {tid} input {port}: the route loops at {node}")
                return None
            seen.add(node)
            kind = graph.nodes[node]["kind"]
            if kind == "port_out":
                return node, hops, runs, run
            if kind == "sb_in":
                drv = rev.fixed.get(node)
                if drv is None:
                    self.errors.append(f"tile {tid} input {port}: {node} has no driver")
                    return None
                node = drv
                continue
            if kind != "sb_out":
                self.errors.append(f"tile {tid} input {port}: unexpected {kind} node {node}")
                return None
            mux = rev.fixed[node]
            hops += 1
            pipe = rev.pipe_of.get(mux)
            if pipe is not None and reg(*pipe):
                runs.append(run)
                run = 0
            else:
                run += 1
            msel = reg(*rev.reg_of[mux])
            self.routed.add(mux)
            node = rev.sel.get((mux, msel))
            if node is None:
                self.errors.append(f"tile {tid} input {port}: mux {mux} select {msel} reads "
                                   f"no input (constant 0)")
                return None

    def source(self, v: str, port: str, seg: _Segment):
        """The netlist node's output driving ``v.port`` through ``seg`` and any register PEs
        before it, with the total latency: ``(src_tile, src_port, latency)``, or None when the
        chain of register PEs breaks."""
        lat = seg.regs
        src_tile, src_port = seg.src_tile, seg.src_port
        guard = 0
        while src_tile in self.register_pes and guard < 10000:
            guard += 1
            lat += self.reg(src_tile, "out_reg")
            inp = {"res": "data0", "res_p": "bit0"}[src_port]
            up = self.trace(src_tile, inp)
            if up is None:
                self.errors.append(f"register PE tile {src_tile} feeding {v}.{port} has no "
                                   f"routed {inp}")
                break
            lat += up.regs
            src_tile, src_port = up.src_tile, up.src_port
        if src_tile in self.register_pes:
            return None
        return src_tile, src_port, lat

    def connections(self) -> dict[tuple[str, str], tuple[str, str, int]]:
        """``(v, port) -> (u, src_port, latency)`` for every routed input of a netlist
        node's tile."""
        found = {}
        for v in sorted(self.net.graph.nodes):
            tid = self.tiles[v]
            for port in sorted(self.cb_ports.get(tid, [])):
                seg = self.trace(tid, port)
                if seg is None:
                    continue
                src = self.source(v, port, seg)
                if src is None:
                    continue
                src_tile, src_port, lat = src
                if src_tile not in self.node_at:
                    self.errors.append(f"{v}.{port} is driven by tile {src_tile}.{src_port}, "
                                       f"which holds no netlist node")
                    continue
                found[(v, port)] = (self.node_at[src_tile], src_port, lat)
        return found

    def compare_with_netlist(self, found) -> None:
        """The connections found are exactly the netlist's edges, with their latencies."""
        expected = {(v, d["dst_port"]): (u, d["src_port"], d["latency"])
                    for u, v, d in self.net.graph.edges(data=True)}
        for key in sorted(set(expected) | set(found)):
            e, f = expected.get(key), found.get(key)
            if e == f:
                continue
            v, port = key
            if f is None:
                self.errors.append(f"{v}.{port} should be driven by {e[0]}.{e[1]} (+{e[2]}) "
                                   f"but its connection box selects nothing")
            elif e is None:
                self.errors.append(f"{v}.{port} is driven by {f[0]}.{f[1]} (+{f[2]}); the "
                                   f"netlist has no such edge")
            elif e[:2] != f[:2]:
                self.errors.append(f"{v}.{port} is driven by {f[0]}.{f[1]}, the netlist says "
                                   f"{e[0]}.{e[1]}")
            else:
                self.errors.append(f"{v}.{port} <- {e[0]}.{e[1]}: latency {f[2]}, the netlist "
                                   f"says {e[2]}")
        self.report.edges = sum(1 for k in expected if expected[k] == found.get(k))

    # --- combinational paths ---------------------------------------------------------------
    def max_comb_hops(self) -> int:
        """The longest run of switch-box hops without a register, continued through
        combinational PEs (``out_reg = 0``)."""
        self.written = {tid for tid, _n in self.state} | {tid for tid, _n in self.window}
        self.into: dict[int, list[_Segment]] = {}
        for (t, _p), seg in self.segments.items():
            self.into.setdefault(t, []).append(seg)
        self.arrivals: dict[int, int] = {}
        longest = 0
        for seg in self.segments.values():
            up = self.arrive(seg.src_tile) if self.comb_tile(seg.src_tile) else 0
            longest = max(longest, seg.inner, seg.last, seg.first + up)
        return longest

    def comb_tile(self, t: int) -> bool:
        """A configured PE whose output is not registered."""
        return self.index.kind.get(t) == "pe" and (t, "out_reg") in self.index.regs \
            and self.reg(t, "out_reg") == 0 and t in self.written

    def arrive(self, t: int, stack=()) -> int:
        """Longest unregistered run of hops arriving at a combinational tile ``t``."""
        if t in self.arrivals:
            return self.arrivals[t]
        if t in stack:
            self.errors.append(f"combinational loop through tile {t}")
            return 0
        best = 0
        for seg in self.into.get(t, []):
            up = self.arrive(seg.src_tile, stack + (t,)) if self.comb_tile(seg.src_tile) else 0
            best = max(best, seg.last if seg.regs else seg.hops + up)
        self.arrivals[t] = best
        return best


def _describe(d: dict, reg, tid: int) -> str:
    if d["kind"] == "pe":
        try:
            op = PEOp(reg(tid, "op")).name
        except ValueError:
            op = f"op {reg(tid, 'op')}"
        return f"PE {op}" + (" (registered)" if reg(tid, "out_reg") else "")
    return f"{d['kind'].upper()} {d.get('label', '')}"
