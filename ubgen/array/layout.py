"""Where the tiles of the array are and what they are (docs/design.md §5.3, paper Fig. 11).

Row 0 is the IO row on the north edge; rows ``1 .. rows`` hold PE and MEM tiles, column ``c``
being a MEM column when ``c % mem_period == mem_period - 1``. ``tile_id = row * columns + col``.
Shared by the RTL (:mod:`ubgen.array.cgra`), the register map and the routing graph
(:mod:`ubgen.array.graph`), so they agree on every position.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..arch import Arch
from .tile import TileSpec

KINDS = ("io", "pe", "mem")
STEP = {"N": (-1, 0), "S": (1, 0), "E": (0, 1), "W": (0, -1)}


def default_cores() -> dict[str, Callable[[Arch], object]]:
    """The real tile cores: IO and PE (``ubgen.io``, ``ubgen.pe``) and MEM (``ubgen.mem``)."""
    from ..io.io_tile import IOCore
    from ..pe.pe import PE
    from ..mem.mem_tile import MemCore
    return {"io": IOCore, "pe": PE, "mem": MemCore}


@dataclass(frozen=True)
class Position:
    tile_id: int
    row: int
    col: int
    kind: str


class ArrayLayout:
    """Tile positions, kinds and per-kind :class:`TileSpec` of an architecture."""

    def __init__(self, arch: Arch, cores: dict[str, Callable[[Arch], object]] | None = None):
        self.arch = arch
        a = arch.array
        self.rows, self.columns = a.rows + 1, a.columns      # + the IO row
        if self.rows * self.columns > 1 << 16:
            raise ValueError(f"{arch.name}: {self.rows * self.columns} tiles exceed the 16-bit "
                             f"tile id of the config address")
        self.cores = dict(cores or default_cores())
        missing = [k for k in KINDS if k not in self.cores]
        if missing:
            raise ValueError(f"no core given for tile kind(s) {', '.join(missing)}")
        # one prototype core per kind describes the kind's ports and registers
        self.prototypes = {k: self.cores[k](arch) for k in KINDS}
        for core in self.prototypes.values():
            core._MustUse__silence = True          # descriptions only, never elaborated
        self.specs = {k: TileSpec.for_core(k, self.prototypes[k], arch) for k in KINDS}

    def kind(self, row: int, col: int) -> str:
        if row == 0:
            return "io"
        return "mem" if self.arch.array.is_mem_column(col) else "pe"

    def tile_id(self, row: int, col: int) -> int:
        return row * self.columns + col

    def positions(self) -> list[Position]:
        return [Position(self.tile_id(r, c), r, c, self.kind(r, c))
                for r in range(self.rows) for c in range(self.columns)]

    def edges(self, row: int, col: int) -> frozenset[str]:
        """The sides of tile ``(row, col)`` without a neighbour (on the array edge)."""
        return frozenset(s for s in STEP if self.neighbour(row, col, s) is None)

    def neighbour(self, row: int, col: int, side: str) -> tuple[int, int] | None:
        dr, dc = STEP[side]
        r, c = row + dr, col + dc
        if 0 <= r < self.rows and 0 <= c < self.columns:
            return r, c
        return None
