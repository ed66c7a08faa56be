"""The Physical Unified Buffer generator (thesis §6.1.3, Fig. 6.4; docs/design.md §5.1)."""
from .aggregator import Aggregator
from .transpose_buffer import TransposeBuffer
from .sram import WideSRAM
from .control import CycleCounter, BlockConfig
from .pub import PhysicalUnifiedBuffer, pub_layouts, pub_regmap

__all__ = ["Aggregator", "TransposeBuffer", "WideSRAM", "CycleCounter", "BlockConfig",
           "PhysicalUnifiedBuffer", "pub_layouts", "pub_regmap"]
