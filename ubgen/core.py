"""The tile-core contract shared by the PE, IO and MEM cores (docs/array.md, docs/top.md).

A core is a ``wiring.Component`` with a config port ``cfg`` (``config_bus_signature``, flipped:
the local register offset, ``wdata``, ``we`` and a combinational ``rdata``), ``run`` and
``stall`` inputs, and one ``in_<name>``/``out_<name>`` member per entry of its ``PORTS``.
"""
from __future__ import annotations

from amaranth.lib.wiring import In, Out

from .array.tilespec import TILE_ADDR_WIDTH
from .config import config_bus_signature

__all__ = ["core_members"]


def core_members(ports: dict[str, tuple[str, int]], cfg_addr_width: int = TILE_ADDR_WIDTH,
                 **extra) -> dict:
    """Signature members of a core with routed ``ports`` (name -> (direction, width))."""
    members = {"cfg": In(config_bus_signature(cfg_addr_width)), "run": In(1), "stall": In(1)}
    for name, (direction, width) in ports.items():
        members[f"{direction}_{name}"] = (In if direction == "in" else Out)(width)
    members.update(extra)
    return members
