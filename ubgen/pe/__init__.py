"""The processing element (docs/design.md §5.2): op set (:mod:`.ops`), ALU, PE core."""
from .ops import Op, OP_WIDTH, pe_reference, counter_next
from .pe import PE, pe_regmap

__all__ = ["Op", "OP_WIDTH", "pe_reference", "counter_next", "PE", "pe_regmap"]
