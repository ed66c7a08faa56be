"""The PE core's configuration space as data: its register map and input names (docs/top.md;
the hardware is :class:`ubgen.pe.pe.PE`). Amaranth-free, like the op encoding
(:mod:`ubgen.pe.ops`), so the compiler configures PEs from the objects the generator builds from
(docs/design.md §2)."""
from __future__ import annotations

from ..regmap import RegisterMap
from .ops import OP_WIDTH, WORD_BITS

__all__ = ["DATA_INPUTS", "BIT_INPUTS", "PE_PORTS", "pe_regmap"]

DATA_INPUTS = ("data0", "data1", "data2")
BIT_INPUTS = ("bit0", "bit1", "bit2")
# the PE core's routed ports: name -> (direction, width)
PE_PORTS = {**{n: ("in", WORD_BITS) for n in DATA_INPUTS}, **{n: ("in", 1) for n in BIT_INPUTS},
            "res": ("out", WORD_BITS), "res_p": ("out", 1)}


def pe_regmap(output_register: bool = True) -> RegisterMap:
    """The PE core's configuration registers."""
    rm = RegisterMap("pe")
    rm.add("op", OP_WIDTH, doc="ALU operation (ubgen.pe.ops.PEOp value)")
    if output_register:
        rm.add("out_reg", 1, doc="1: register res/res_p (latency 1); 0: combinational")
    for name in DATA_INPUTS:
        rm.add(f"{name}_const_en", 1, doc=f"1: {name} is {name}_const; 0: routed in_{name}")
        rm.add(f"{name}_const", WORD_BITS, doc=f"constant value of {name}")
    for name in BIT_INPUTS:
        rm.add(f"{name}_const_en", 1, doc=f"1: {name} is {name}_const; 0: routed in_{name}")
        rm.add(f"{name}_const", 1, doc=f"constant value of {name}")
    rm.add("lut", 8, doc="LUT3 truth table indexed by {bit2, bit1, bit0}")
    return rm
