"""Island-style interconnect (docs/design.md §5.3, paper Fig. 11): switch boxes and connection
boxes.

Each block is described by a plain-Python *spec* object (:mod:`.spec`, no Amaranth); the same
spec builds the Amaranth muxes (loaded on first use), the block's configuration registers and the
routing-graph edges (one source of truth).
"""
from .._lazy import lazy_exports
from .spec import SIDES, ConnectionBoxSpec, SwitchBoxSpec, track_map

__getattr__ = lazy_exports(__name__, {"SwitchBox": ".switch_box",
                                      "ConnectionBox": ".connection_box", "mux_tree": ".mux"})

__all__ = ["SIDES", "SwitchBoxSpec", "SwitchBox", "track_map", "ConnectionBoxSpec",
           "ConnectionBox", "mux_tree"]
