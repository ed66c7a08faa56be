"""The PE's combinational ALU (docs/design.md §5.2): one :class:`~ubgen.pe.ops.Op` per application.

The op semantics are defined in :mod:`ubgen.pe.ops`; the COUNTER state lives in the PE
(:class:`ubgen.pe.pe.PE`) and comes in on ``count``.
"""

from amaranth.hdl import Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .ops import Op, OP_WIDTH, WORD_BITS

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

    def elaborate(self, platform):
        m = Module()
        a, b, c = self.a, self.b, self.c
        sa, sb = a.as_signed(), b.as_signed()
        sh = b[:4]
        b0, b1 = self.bits[0], self.bits[1]
        res, p = self.res, self.res_p

        words = {
            Op.ADD: a + b, Op.SUB: a - b, Op.MUL: a * b, Op.MAC: a * b + c,
            Op.SHL: a << sh, Op.LSHR: a >> sh, Op.ASHR: sa >> sh,
            Op.AND: a & b, Op.OR: a | b, Op.XOR: a ^ b,
            Op.SMIN: Mux(sa < sb, a, b), Op.SMAX: Mux(sa > sb, a, b),
            Op.UMIN: Mux(a < b, a, b), Op.UMAX: Mux(a > b, a, b),
            Op.ABS: Mux(sa < 0, -sa, sa), Op.ABSDIFF: Mux(sa < sb, sb - sa, sa - sb),
            Op.UABSDIFF: Mux(a < b, b - a, a - b), Op.SEL: Mux(b0, a, b),
        }
        flags = {
            Op.EQ: a == b, Op.NE: a != b, Op.SLT: sa < sb, Op.SLE: sa <= sb, Op.SGT: sa > sb,
            Op.SGE: sa >= sb, Op.ULT: a < b, Op.ULE: a <= b, Op.UGT: a > b, Op.UGE: a >= b,
            Op.BAND: b0 & b1, Op.BOR: b0 | b1, Op.BXOR: b0 ^ b1, Op.BNOT: ~b0,
            Op.LUT3: self.lut.bit_select(self.bits, 1),
        }
        with m.Switch(self.op):
            with m.Case(Op.PASS):
                m.d.comb += [res.eq(a), p.eq(b0)]
            for op, value in words.items():
                with m.Case(op):
                    m.d.comb += res.eq(value[:WORD_BITS])
            for op, value in flags.items():
                with m.Case(op):
                    m.d.comb += [p.eq(value), res.eq(value)]
            with m.Case(Op.COUNTER):
                m.d.comb += [res.eq(self.count),
                             p.eq(b0 & (self.count == (a - 1)[:WORD_BITS]))]
        return m
