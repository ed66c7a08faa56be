"""The PE's combinational ALU (docs/design.md §5.2): one :class:`~ubgen.pe.ops.PEOp` per application.

The op semantics are defined in :mod:`ubgen.pe.ops`; the COUNTER state lives in the PE
(:class:`ubgen.pe.pe.PE`) and comes in on ``count``. ``ALU(without={...})`` leaves ops out (the
op's code then gives ``res = res_p = 0``); the PE builds every op, the option exists to measure
what one op costs (``bench/pe_area.py``, docs/pe.md).
"""

from amaranth.hdl import Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .ops import PEOp, OP_WIDTH, WORD_BITS

__all__ = ["ALU"]


class ALU(wiring.Component):
    op: In(OP_WIDTH)
    a: In(WORD_BITS)
    b: In(WORD_BITS)
    c: In(WORD_BITS)
    bits: In(3)
    lut: In(8)
    count: In(WORD_BITS)
    res: Out(WORD_BITS)
    res_p: Out(1)

    def __init__(self, without: frozenset[PEOp] | set[PEOp] = frozenset()):
        self.without = frozenset(PEOp(op) for op in without)
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        a, b, c = self.a, self.b, self.c
        sa, sb = a.as_signed(), b.as_signed()
        sh = b[:(WORD_BITS - 1).bit_length()]     # shift amounts mod the word width
        b0, b1 = self.bits[0], self.bits[1]
        res, p = self.res, self.res_p

        words = {
            PEOp.ADD: a + b, PEOp.SUB: a - b, PEOp.MUL: a * b, PEOp.MAC: a * b + c,
            PEOp.SHL: a << sh, PEOp.LSHR: a >> sh, PEOp.ASHR: sa >> sh,
            PEOp.AND: a & b, PEOp.OR: a | b, PEOp.XOR: a ^ b,
            PEOp.SMIN: Mux(sa < sb, a, b), PEOp.SMAX: Mux(sa > sb, a, b),
            PEOp.UMIN: Mux(a < b, a, b), PEOp.UMAX: Mux(a > b, a, b),
            PEOp.ABS: Mux(sa < 0, -sa, sa), PEOp.ABSDIFF: Mux(sa < sb, sb - sa, sa - sb),
            PEOp.UABSDIFF: Mux(a < b, b - a, a - b), PEOp.SEL: Mux(b0, a, b),
            PEOp.UDIV: Mux(b == 0, 0, a // b),
        }
        flags = {
            PEOp.EQ: a == b, PEOp.NE: a != b, PEOp.SLT: sa < sb, PEOp.SLE: sa <= sb,
            PEOp.SGT: sa > sb, PEOp.SGE: sa >= sb, PEOp.ULT: a < b, PEOp.ULE: a <= b,
            PEOp.UGT: a > b, PEOp.UGE: a >= b,
            PEOp.BAND: b0 & b1, PEOp.BOR: b0 | b1, PEOp.BXOR: b0 ^ b1, PEOp.BNOT: ~b0,
            PEOp.LUT3: self.lut.bit_select(self.bits, 1),
        }
        words = {op: v for op, v in words.items() if op not in self.without}
        flags = {op: v for op, v in flags.items() if op not in self.without}
        with m.Switch(self.op):
            with m.Case(PEOp.PASS):
                m.d.comb += [res.eq(a), p.eq(b0)]
            for op, value in words.items():
                with m.Case(op):
                    m.d.comb += res.eq(value[:WORD_BITS])
            for op, value in flags.items():
                with m.Case(op):
                    m.d.comb += [p.eq(value), res.eq(value)]
            with m.Case(PEOp.COUNTER):
                m.d.comb += [res.eq(self.count),
                             p.eq(b0 & (self.count == (a - 1)[:WORD_BITS]))]
        return m
