"""The bitstream: a placed and routed netlist as the ordered list of configuration register
writes ``(byte address, value)`` (docs/pnr.md "Bitstream"; docs/top.md: a tile register is at
``0x8000_0000 | tile_id << 18 | reg_offset << 2``; docs/array.md "Registers").

One assembler for every user: the core registers of each placed node (its ``config`` by
register name, its ``window`` words at the window's offsets), the switch-box selects and
pipeline enables and the connection-box selects of every routed net (the ``reg``/``sel`` of
the routing graph's edges, ``ubgen.array.graph``). Register names become offsets through the
array's full register map (``ubgen.array.graph.full_regmap``). The writes are sorted by
address, so the same design always gives the same bytes.

Files: JSON (``[[address, value], ...]``) and binary (little-endian ``uint32`` pairs).
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ubgen.arch import WORD_MASK
from ubgen.array.graph import edge_values
from ubgen.top.spec import tile_address

from .netlist import Netlist
from .place import Placement


class BitstreamError(ValueError):
    """Two different values for one register, or a register the tile does not have."""


@dataclass
class Bitstream:
    """``writes``: ``[(byte address, value)]`` in address order, each address once."""
    arch: str
    writes: list[tuple[int, int]]

    def to_list(self) -> list[list[int]]:
        return [[a, v] for a, v in self.writes]

    def to_json(self) -> str:
        return json.dumps({"arch": self.arch, "writes": self.to_list()})

    def to_bytes(self) -> bytes:
        return b"".join(struct.pack("<II", a, v) for a, v in self.writes)

    def sha256(self) -> str:
        return hashlib.sha256(self.to_bytes()).hexdigest()

    def __len__(self) -> int:
        return len(self.writes)

    def save(self, directory: str | Path, stem: str) -> list[Path]:
        """Write ``<stem>.bitstream.json`` and ``<stem>.bitstream.bin`` into ``directory``
        (each through a temporary file, so nothing partial is left)."""
        out = Path(directory)
        files = {f"{stem}.bitstream.json": self.to_json().encode(),
                 f"{stem}.bitstream.bin": self.to_bytes()}
        pending = []
        try:
            for name, data in files.items():
                fd, tmp = tempfile.mkstemp(dir=out, prefix=".bitstream-")
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                pending.append((tmp, out / name))
        except BaseException:
            for tmp, _dst in pending:
                Path(tmp).unlink(missing_ok=True)
            raise
        written = []
        for tmp, dst in pending:
            os.replace(tmp, dst)
            written.append(dst)
        return written

    @staticmethod
    def from_list(arch: str, items) -> "Bitstream":
        return Bitstream(arch, [(int(a), int(v)) for a, v in items])


class RegisterIndex:
    """``(tile_id, register name) -> (offset, width)`` and windows of the full register map,
    and the reverse: byte address -> ``(tile_id, name, index)``."""

    def __init__(self, regmap: list[dict]):
        self.regs: dict[tuple[int, str], tuple[int, int]] = {}
        self.windows: dict[tuple[int, str], tuple[int, int, int]] = {}
        self.reset: dict[tuple[int, str], int] = {}
        self.kind: dict[int, str] = {}
        self.by_offset: dict[tuple[int, int], str] = {}
        for r in regmap:
            key = (r["tile_id"], r["name"])
            self.kind[r["tile_id"]] = r["tile_kind"]
            if "window_size" in r:
                self.windows[key] = (r["offset"], r["window_size"], r["width"])
            else:
                self.regs[key] = (r["offset"], r["width"])
                self.reset[key] = r["reset"]
                self.by_offset[(r["tile_id"], r["offset"])] = r["name"]
        self._win_list: dict[int, list[tuple[int, int, str]]] = {}
        for (tid, name), (off, size, _w) in self.windows.items():
            self._win_list.setdefault(tid, []).append((off, size, name))

    def address(self, tile_id: int, name: str, index: int | None = None) -> int:
        if index is None:
            if (tile_id, name) not in self.regs:
                raise BitstreamError(f"tile {tile_id} has no register {name}")
            return tile_address(tile_id, self.regs[(tile_id, name)][0])
        off, size, _w = self.windows[(tile_id, name)]
        if not 0 <= index < size:
            raise BitstreamError(f"tile {tile_id} window {name}: index {index} outside "
                                 f"0..{size - 1}")
        return tile_address(tile_id, off + index)

    def decode(self, address: int) -> tuple[int, str, int | None] | None:
        """``(tile_id, register or window name, window index or None)`` of a byte address."""
        from ubgen.top.spec import TILE_BASE, TILE_ID_SHIFT
        if address < TILE_BASE or address % 4:
            return None
        rel = address - TILE_BASE
        tid, off = rel >> TILE_ID_SHIFT, (rel & ((1 << TILE_ID_SHIFT) - 1)) >> 2
        name = self.by_offset.get((tid, off))
        if name is not None:
            return tid, name, None
        for woff, size, wname in self._win_list.get(tid, []):
            if woff <= off < woff + size:
                return tid, wname, off - woff
        return None


def edge_writes(graph, edges, index: RegisterIndex) -> list[tuple[int, int]]:
    """The ``(byte address, value)`` writes that make the routing-graph edges ``edges`` (the
    ``reg``/``sel`` of each configurable edge, ``ubgen.array.graph``): switch-box selects,
    pipeline enables (``mux -> reg``: 1, the bypass ``mux -> out``: 0), connection-box
    selects. Raises :class:`BitstreamError` when two edges need different values of one
    register."""
    try:
        values = edge_values(graph, edges)
    except ValueError as e:
        raise BitstreamError(str(e)) from None
    return sorted((index.address(tid, name), v) for (tid, name), v in values.items())


def path_writes(graph, path: list[str], index: RegisterIndex) -> list[tuple[int, int]]:
    """The writes of one hand route: a path of the routing graph with a ``reg`` node wherever
    it registers (``ubgen.array.routes.add_pipeline_registers``)."""
    return edge_writes(graph, list(zip(path, path[1:])), index)


def assemble(net: Netlist, placement: Placement, routing, graph, index: RegisterIndex,
             arch_name: str) -> Bitstream:
    """The bitstream of ``net`` placed as ``placement`` and routed as ``routing``
    (:class:`~.route.Routing` on the routing graph ``graph``)."""
    values: dict[int, int] = {}
    origin: dict[int, str] = {}

    def put(addr: int, value: int, what: str) -> None:
        if values.get(addr, value) != value:
            raise BitstreamError(f"{what} and {origin[addr]} write different values to "
                                 f"address {addr:#x}")
        values[addr] = value
        origin[addr] = what

    for node in sorted(net.graph.nodes):
        d = net.graph.nodes[node]
        tid = placement.tile_id(node)
        if index.kind.get(tid) != d["kind"]:
            raise BitstreamError(f"{node} ({d['kind']}) placed on a {index.kind.get(tid)} tile")
        for name, value in sorted(d["config"].items()):
            _off, width = index.regs.get((tid, name), (None, 0))
            if _off is None:
                raise BitstreamError(f"{node}: tile {tid} has no register {name}")
            put(index.address(tid, name), int(value) & ((1 << width) - 1), node)
        if d["window"]:
            (wname,) = [n for (t, n) in index.windows if t == tid] or [None]
            if wname is None:
                raise BitstreamError(f"{node}: tile {tid} has no storage window")
            for off, word in sorted(d["window"].items()):
                put(index.address(tid, wname, off), int(word) & WORD_MASK, node)
    for key in sorted(routing.nets):
        nr = routing.nets[key]
        what = f"net {key[0]}.{key[1]}"
        edges = []
        for v in sorted(nr.parent):
            u = nr.parent[v]
            if u is None:
                continue
            if u in nr.registers:       # mux -> reg -> out instead of the bypass mux -> out
                reg = u.replace(".mux.", ".reg.")
                if not graph.has_node(reg):
                    raise BitstreamError(f"{what}: {u} has no pipeline register")
                edges += [(u, reg), (reg, v)]
            else:
                edges.append((u, v))
        for addr, value in edge_writes(graph, edges, index):
            put(addr, value, what)
    return Bitstream(arch_name, sorted(values.items()))
