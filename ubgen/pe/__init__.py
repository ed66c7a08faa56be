"""The processing element (docs/design.md §5.2): op set and reference semantics (:mod:`.ops`),
register map (:mod:`.spec`), ALU and PE core (Amaranth, loaded on first use)."""
from .._lazy import lazy_exports
from .ops import PEOp, OP_WIDTH, pe_reference, counter_next
from .spec import pe_regmap

__getattr__ = lazy_exports(__name__, {"PE": ".pe", "ALU": ".alu"})

__all__ = ["PEOp", "OP_WIDTH", "pe_reference", "counter_next", "PE", "pe_regmap"]
