"""Where the tiles of the array are and what they are (docs/design.md §5.3, paper Fig. 11).

Row 0 is the IO row on the north edge; rows ``1 .. rows`` hold PE and MEM tiles, column ``c``
being a MEM column when ``c % mem_period == mem_period - 1``. ``tile_id = row * columns + col``.
Shared by the RTL (:mod:`ubgen.array.cgra`), the register map and the routing graph
(:mod:`ubgen.array.graph`), so they agree on every position.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

from ..arch import Arch
from ..regmap import RegisterMap
from .tilespec import TileSpec

KINDS = ("io", "pe", "mem")
STEP = {"N": (-1, 0), "S": (1, 0), "E": (0, 1), "W": (0, -1)}


def default_cores() -> dict[str, Callable[[Arch], object]]:
    """The real tile cores: IO and PE (``ubgen.io``, ``ubgen.pe``) and MEM (``ubgen.mem``: the
    core ``[mem] kind`` selects, :func:`ubgen.mem.dp_tile.mem_core`)."""
    from ..io.io_tile import IOCore
    from ..pe.pe import PE
    from ..mem.dp_tile import mem_core
    return {"io": IOCore, "pe": PE, "mem": mem_core}


@dataclass(frozen=True)
class CoreSpec:
    """A tile core as data: its routed ``PORTS`` and its ``regmap`` (what :class:`TileSpec`
    reads of a core), without building the Amaranth component."""
    PORTS: dict
    regmap: RegisterMap


def core_specs(arch: Arch) -> dict[str, CoreSpec]:
    """The real cores' ports and register maps from ubgen's Amaranth-free exports; the same
    objects the cores of :func:`default_cores` are built with."""
    from ..io.spec import IO_PORTS, io_regmap
    from ..mem.dp_spec import mem_core_spec
    from ..pe.spec import PE_PORTS, pe_regmap
    return {"io": CoreSpec(IO_PORTS, io_regmap(arch)),
            "pe": CoreSpec(PE_PORTS, pe_regmap(arch.array.pe_output_register)),
            "mem": CoreSpec(*mem_core_spec(arch))}


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
        self._cores = dict(cores) if cores is not None else None
        if self._cores is not None:
            missing = [k for k in KINDS if k not in self._cores]
            if missing:
                raise ValueError(f"no core given for tile kind(s) {', '.join(missing)}")
            described = self.prototypes
        else:
            described = core_specs(arch)          # no Amaranth needed for the real cores
        self.specs = {k: TileSpec.for_core(k, described[k], arch) for k in KINDS}

    @property
    def cores(self) -> dict[str, Callable[[Arch], object]]:
        """The core factories per kind (the given ones, else :func:`default_cores`)."""
        return self._cores if self._cores is not None else default_cores()

    @cached_property
    def prototypes(self) -> dict[str, object]:
        """One Amaranth core per kind (descriptions only, never elaborated)."""
        protos = {k: self.cores[k](self.arch) for k in KINDS}
        for core in protos.values():
            core._MustUse__silence = True
        return protos

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
