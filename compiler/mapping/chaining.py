"""Memory chaining by capacity (thesis §5.3, eq. 5.22; paper §V-C eqs. 5–6, Fig. 10).

A buffer whose linear address range exceeds the capacity ``C`` of one physical memory is split
over ``ceil(range / C)`` chained tiles: ``TileID(a) = floor(a / C)``, ``PhysicalAddress(a) =
a mod C``. In the PUB (docs/design.md §5.1) the SRAM address generators carry ``chain_bits`` extra high
bits: every tile of a chain runs the *same* controllers, accesses its SRAM only when the high
bits equal its ``tile_id``, and the output mux passes the previous tile's data through when the
word is not its own. So a chain is one set of controller configs plus a tile count.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from .common import MappingError


@dataclass(frozen=True)
class Chain:
    capacity: int        # words per tile (C)
    tiles: int

    def tile_id(self, addr: int) -> int:
        return addr // self.capacity

    def physical(self, addr: int) -> int:
        return addr % self.capacity


def chain_tiles(max_addr: int, capacity: int, chain_bits: int, buffer: str) -> Chain:
    """The chain that holds linear addresses ``0..max_addr``; error if it needs more tiles than
    ``chain_bits`` can number."""
    tiles = max_addr // capacity + 1
    if tiles > 1 << chain_bits:
        raise MappingError(f"buffer {buffer}: needs {tiles} chained memories of {capacity} "
                           f"words, more than the {1 << chain_bits} that {chain_bits} chain bits "
                           f"can address: make the buffer smaller (a smaller size or tile)")
    return Chain(capacity, tiles)


def tile_maps(access: isl.Map, capacity: int) -> tuple[isl.Map, isl.Map]:
    """Eqs. 5–6 on a linearized access map ``{ i -> MEM[a] }``:
    ``{ i -> TileID[floor(a / C)] }`` and ``{ i -> PhysicalAddress[a mod C] }``."""
    ctx = access.get_ctx()
    name = access.get_tuple_name(isl.dim_type.out)
    tid = isl.Map.read_from_str(ctx, f"{{ {name}[a] -> TileID[floor(a / {capacity})] }}")
    phys = isl.Map.read_from_str(ctx, f"{{ {name}[a] -> PhysicalAddress[a mod {capacity}] }}")
    return access.apply_range(tid), access.apply_range(phys)
