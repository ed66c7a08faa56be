"""The combinational graph of a synthesized FPGA netlist, as nextpnr's timing analyser sees it
(docs/fpga.md "The CGRA on the FPGA: what stops nextpnr").

Reads the Yosys JSON netlist the FPGA flow writes (``build/fpga/<target>_<design>/top.json``;
a hierarchical one, as ``cgra_4x4`` is synthesized with ``-noflatten``, is flattened here) and
builds the graph of its nets with an edge from every input net to every output net of a
combinational cell arc (ECP5 cells: LUT4, PFUMX, L6MUX21, CCU2C, the read port of the
distributed RAM TRELLIS_DPR16X4, an unregistered MULT18X18D; flip-flops, block RAMs and I/O cut
the graph). Prints

* the nets, the combinational arcs, the largest strongly connected component (a set of nets
  every one of which reaches every other through logic: combinational loops), and
* how deep the recursive depth-first search of nextpnr's ``TimingAnalyser::topo_sort``
  (``TopoSort::sort_worker``: every node visits its drivers) can go: at most the longest path
  of the graph of components, a loop component counting all its nets; and how deep it goes in
  three random orders (nextpnr's order is that of its interned names, unknown here). nextpnr's
  nodes are cell ports, two per arc (an input and an output), so its recursion is about twice
  as deep as the net graph's.

    python bench/comb_graph.py build/fpga/ecp5_cgra_2x2/top.json [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

# cell type -> (inputs, outputs) of its combinational arcs (every input reaches every output)
COMB = {
    "LUT4": (("A", "B", "C", "D"), ("Z",)),
    "PFUMX": (("ALUT", "BLUT", "C0"), ("Z",)),
    "L6MUX21": (("D0", "D1", "SD"), ("Z",)),
    "CCU2C": (("A0", "B0", "C0", "D0", "A1", "B1", "C1", "D1", "CIN"), ("S0", "S1", "COUT")),
    "TRELLIS_DPR16X4": (("RAD[0]", "RAD[1]", "RAD[2]", "RAD[3]"), ("DO[0]", "DO[1]", "DO[2]",
                                                                    "DO[3]")),
}
SEQUENTIAL = {"TRELLIS_FF", "DP16KD", "TRELLIS_IO", "$scopeinfo"}


def _bits(conn) -> list:
    return list(conn)


class Flat:
    """The flattened netlist: net ids, and per combinational cell its arcs as net edges."""

    def __init__(self, netlist: dict):
        self.modules = netlist["modules"]
        top = next(n for n, m in self.modules.items() if m.get("attributes", {}).get("top"))
        self.next_id = 0
        self.edges: dict[int, set[int]] = defaultdict(set)   # net -> nets it drives
        self.nets = 0
        self.cells = 0
        self.unknown: dict[str, int] = defaultdict(int)
        ports = {}
        for name, p in self.modules[top]["ports"].items():
            for b in p["bits"]:
                if not isinstance(b, str):
                    ports.setdefault(b, self._new())
        self._module(top, ports)

    def _is_module(self, t: str) -> bool:
        """A user module to flatten (not a cell library's black or white box)."""
        m = self.modules.get(t)
        if m is None or t in COMB or t in SEQUENTIAL or t == "MULT18X18D":
            return False
        attrs = m.get("attributes", {})
        return not any(k in attrs for k in ("blackbox", "whitebox", "lib_whitebox"))

    def _new(self) -> int:
        self.next_id += 1
        return self.next_id

    def _module(self, name: str, outer: dict[int, int]) -> None:
        """Instantiate module ``name`` whose port bits are the outer nets ``outer``."""
        mod = self.modules[name]
        local: dict[int, int] = dict(outer)

        def net(b):
            if isinstance(b, str):
                return None                       # a constant
            if b not in local:
                local[b] = self._new()
            return local[b]
        for cname, cell in mod["cells"].items():
            t = cell["type"]
            if self._is_module(t):                # a submodule instance
                sub = self.modules[t]
                mapping = {}
                for pname, bits in cell["connections"].items():
                    sbits = sub["ports"][pname]["bits"]
                    for sb, b in zip(sbits, bits):
                        n = net(b)
                        if n is not None and not isinstance(sb, str):
                            mapping[sb] = n
                self._module(t, mapping)
                continue
            self.cells += 1
            conn = cell["connections"]
            if t == "MULT18X18D" and all(cell["parameters"].get(k, "NONE").strip() == "NONE"
                                         for k in ("REG_OUTPUT_CLK", "REG_INPUTA_CLK",
                                                   "REG_INPUTB_CLK")):
                ins = [p for p in conn if p.startswith(("A", "B")) and len(p) <= 3]
                outs = [p for p in conn if p.startswith("P")]
            elif t in COMB:
                ins, outs = COMB[t]
            else:
                if t not in SEQUENTIAL:
                    self.unknown[t] += 1
                continue
            srcs = [net(b) for p in ins for b in _port_bits(conn, p)]
            dsts = [net(b) for p in outs for b in _port_bits(conn, p)]
            for s in srcs:
                if s is None:
                    continue
                for d in dsts:
                    if d is not None:
                        self.edges[s].add(d)
        self.nets = self.next_id


def _port_bits(conn: dict, port: str) -> list:
    if port in conn:
        return _bits(conn[port])
    if "[" in port:                                   # DO[2] -> bit 2 of DO
        base, idx = port[:-1].split("[")
        bits = conn.get(base)
        return [bits[int(idx)]] if bits and int(idx) < len(bits) else []
    return []


def components(edges: dict[int, set[int]]) -> dict[int, int]:
    """The strongly connected component of every node (iterative Tarjan): node -> id."""
    index, low, on, stack, comp = {}, {}, set(), [], {}
    counter = 0
    nodes = sorted(set(edges) | {d for ds in edges.values() for d in ds})
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(edges.get(w, ()))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp[w] = v
                    if w == v:
                        break
    return comp


def depth_bound(edges: dict[int, set[int]], comp: dict[int, int]) -> int:
    """The longest path of the graph of components, each component counting all its nodes:
    no depth-first search, in any order, recurses deeper (a search can stay inside a loop
    component for every node of it)."""
    size: dict[int, int] = defaultdict(int)
    for c in comp.values():
        size[c] += 1
    succ: dict[int, set[int]] = defaultdict(set)
    indeg: dict[int, int] = defaultdict(int)
    for s, ds in edges.items():
        for d in ds:
            a, b = comp[s], comp[d]
            if a != b and b not in succ[a]:
                succ[a].add(b)
                indeg[b] += 1
    best = {c: size[c] for c in size}
    ready = [c for c in size if indeg[c] == 0]
    while ready:
        a = ready.pop()
        for b in succ[a]:
            best[b] = max(best[b], best[a] + size[b])
            indeg[b] -= 1
            if indeg[b] == 0:
                ready.append(b)
    return max(best.values(), default=0)


def dfs_depth(edges: dict[int, set[int]], seed: int) -> int:
    """The deepest recursion of ``TopoSort::sort_worker`` (each node visits its drivers; a
    node on the active path ends the branch) with nodes and drivers in a random order
    (``seed``): nextpnr's order is that of interned cell and port names, unknown here."""
    import random
    rnd = random.Random(seed)
    drivers: dict[int, list[int]] = defaultdict(list)
    for s, ds in edges.items():
        for d in ds:
            drivers[d].append(s)
    for v in drivers.values():
        rnd.shuffle(v)
    nodes = sorted(set(edges) | set(drivers))
    rnd.shuffle(nodes)
    marked: set[int] = set()
    active: set[int] = set()
    deepest = 0
    for root in nodes:
        if root in marked:
            continue
        work = [(root, iter(drivers.get(root, ())))]
        active.add(root)
        while work:
            deepest = max(deepest, len(work))
            v, it = work[-1]
            nxt = next((u for u in it if u not in marked and u not in active), None)
            if nxt is not None:
                active.add(nxt)
                work.append((nxt, iter(drivers.get(nxt, ()))))
                continue
            work.pop()
            active.discard(v)
            marked.add(v)
    return deepest


def analyse(path: Path) -> dict:
    flat = Flat(json.loads(path.read_text()))
    arcs = sum(len(d) for d in flat.edges.values())
    comp = components(flat.edges)
    sizes: dict[int, int] = defaultdict(int)
    for c in comp.values():
        sizes[c] += 1
    return {"netlist": str(path), "cells": flat.cells, "nets": flat.nets, "comb_arcs": arcs,
            "largest_scc_nets": max(sizes.values(), default=0),
            "nets_in_loops": sum(n for n in sizes.values() if n > 1),
            "depth_bound_nets": depth_bound(flat.edges, comp),
            "dfs_depth_nets": [dfs_depth(flat.edges, seed) for seed in (1, 2, 3)],
            "unmodelled_cells": dict(flat.unknown)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("netlists", nargs="+", type=Path)
    p.add_argument("--json", default=None, help="write the figures to this file")
    args = p.parse_args(argv)
    rows = []
    for path in args.netlists:
        r = analyse(path)
        rows.append(r)
        print(f"{path}: {r['cells']} cells, {r['nets']} nets, {r['comb_arcs']} combinational "
              f"arcs; {r['nets_in_loops']} nets in loops, the largest loop component "
              f"{r['largest_scc_nets']} nets; recursion depth at most {r['depth_bound_nets']} "
              f"nets, {r['dfs_depth_nets']} in random orders (cell ports: about twice)"
              + (f"; not modelled: {r['unmodelled_cells']}" if r["unmodelled_cells"] else ""),
              flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
