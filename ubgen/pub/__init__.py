"""The Physical Unified Buffer generator (thesis §6.1.3, Fig. 6.4; docs/design.md §5.1).

The register map and controller layouts (:mod:`.spec`) load eagerly and without Amaranth; the
Amaranth components load on first use."""
from .._lazy import lazy_exports
from .spec import PUB_STATUS, encode_pub, pub_layouts, pub_regmap

__getattr__ = lazy_exports(__name__, {
    "Aggregator": ".aggregator", "TransposeBuffer": ".transpose_buffer", "WideSRAM": ".sram",
    "CycleCounter": ".control", "BlockConfig": ".control",
    "PhysicalUnifiedBuffer": ".pub"})

__all__ = ["Aggregator", "TransposeBuffer", "WideSRAM", "CycleCounter", "BlockConfig",
           "PhysicalUnifiedBuffer", "encode_pub", "pub_layouts", "pub_regmap", "PUB_STATUS"]
