"""Island-style interconnect (docs/design.md §5.3, paper Fig. 11): switch boxes and connection boxes.

Each block is described by a plain-Python *spec* object; the same spec builds the Amaranth
muxes, the block's configuration registers and the routing-graph edges (one source of truth).
"""
from .mux import mux_tree
from .switch_box import SIDES, SwitchBoxSpec, SwitchBox, track_map
from .connection_box import ConnectionBoxSpec, ConnectionBox

__all__ = ["SIDES", "SwitchBoxSpec", "SwitchBox", "track_map", "ConnectionBoxSpec",
           "ConnectionBox", "mux_tree"]
