"""The PE's combinational ALU (docs/design.md §5.2): one :class:`~ubgen.pe.ops.PEOp` per application.

The op semantics are defined in :mod:`ubgen.pe.ops`; :func:`op_result` builds the hardware of one
op (the ALU selects among all of them with its ``op`` register; an application-specific datapath,
:mod:`ubgen.fpga.app`, builds only the ops it uses). The COUNTER state lives in the PE
(:class:`ubgen.pe.pe.PE`) and comes in on ``count``; the STEP state is the PE's output register
and comes in on ``acc`` (the ALU computes the next state). ``ALU(without={...})`` leaves ops out
(the op's code then gives ``res = res_p = 0``); the PE builds every op, the option exists to
measure what one op costs (``bench/pe_area.py``; ``bench/area.py``'s PE without STEP;
docs/pe.md).
"""

from amaranth.hdl import Module, Mux, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .ops import PEOp, OP_WIDTH, WORD_BITS

__all__ = ["ALU", "op_result", "FLAG_OPS"]

_SHIFT_BITS = (WORD_BITS - 1).bit_length()     # shift amounts mod the word width

_WORDS = {
    PEOp.ADD: lambda a, b, c, sa, sb, sh, b0: a + b,
    PEOp.SUB: lambda a, b, c, sa, sb, sh, b0: a - b,
    PEOp.MUL: lambda a, b, c, sa, sb, sh, b0: a * b,
    PEOp.MAC: lambda a, b, c, sa, sb, sh, b0: a * b + c,
    PEOp.SHL: lambda a, b, c, sa, sb, sh, b0: a << sh,
    PEOp.LSHR: lambda a, b, c, sa, sb, sh, b0: a >> sh,
    PEOp.ASHR: lambda a, b, c, sa, sb, sh, b0: sa >> sh,
    PEOp.AND: lambda a, b, c, sa, sb, sh, b0: a & b,
    PEOp.OR: lambda a, b, c, sa, sb, sh, b0: a | b,
    PEOp.XOR: lambda a, b, c, sa, sb, sh, b0: a ^ b,
    PEOp.SMIN: lambda a, b, c, sa, sb, sh, b0: Mux(sa < sb, a, b),
    PEOp.SMAX: lambda a, b, c, sa, sb, sh, b0: Mux(sa > sb, a, b),
    PEOp.UMIN: lambda a, b, c, sa, sb, sh, b0: Mux(a < b, a, b),
    PEOp.UMAX: lambda a, b, c, sa, sb, sh, b0: Mux(a > b, a, b),
    PEOp.ABS: lambda a, b, c, sa, sb, sh, b0: Mux(sa < 0, -sa, sa),
    PEOp.ABSDIFF: lambda a, b, c, sa, sb, sh, b0: Mux(sa < sb, sb - sa, sa - sb),
    PEOp.UABSDIFF: lambda a, b, c, sa, sb, sh, b0: Mux(a < b, b - a, a - b),
    PEOp.SEL: lambda a, b, c, sa, sb, sh, b0: Mux(b0, a, b),
    PEOp.UDIV: lambda a, b, c, sa, sb, sh, b0: Mux(b == 0, 0, a // b),
}
_FLAGS = {
    PEOp.EQ: lambda a, b, sa, sb, bits, lut: a == b,
    PEOp.NE: lambda a, b, sa, sb, bits, lut: a != b,
    PEOp.SLT: lambda a, b, sa, sb, bits, lut: sa < sb,
    PEOp.SLE: lambda a, b, sa, sb, bits, lut: sa <= sb,
    PEOp.SGT: lambda a, b, sa, sb, bits, lut: sa > sb,
    PEOp.SGE: lambda a, b, sa, sb, bits, lut: sa >= sb,
    PEOp.ULT: lambda a, b, sa, sb, bits, lut: a < b,
    PEOp.ULE: lambda a, b, sa, sb, bits, lut: a <= b,
    PEOp.UGT: lambda a, b, sa, sb, bits, lut: a > b,
    PEOp.UGE: lambda a, b, sa, sb, bits, lut: a >= b,
    PEOp.BAND: lambda a, b, sa, sb, bits, lut: bits[0] & bits[1],
    PEOp.BOR: lambda a, b, sa, sb, bits, lut: bits[0] | bits[1],
    PEOp.BXOR: lambda a, b, sa, sb, bits, lut: bits[0] ^ bits[1],
    PEOp.BNOT: lambda a, b, sa, sb, bits, lut: ~bits[0],
    PEOp.LUT3: lambda a, b, sa, sb, bits, lut: lut.bit_select(bits, 1),
}
FLAG_OPS = frozenset(_FLAGS)
"""The ops whose result is the 1-bit ``res_p`` (``res`` is it zero-extended)."""


def op_result(op: PEOp, a, b, c, bits, lut=0, count=None, acc=None) -> tuple[Value, Value]:
    """``(res, res_p)`` of ``op`` on the 16-bit words ``a, b, c`` and the 3-bit ``bits``, as
    Amaranth values (``res`` truncated to the word; the semantics of :mod:`ubgen.pe.ops`).
    COUNTER needs its state ``count``; STEP its state ``acc`` (the result is the next state)."""
    a, b, c, bits = Value.cast(a), Value.cast(b), Value.cast(c), Value.cast(bits)
    sa, sb = a.as_signed(), b.as_signed()
    b0 = bits[0]
    if op is PEOp.PASS:
        return a, b0
    if op in _WORDS:
        return _WORDS[op](a, b, c, sa, sb, b[:_SHIFT_BITS], b0)[:WORD_BITS], Value.cast(0)
    if op in _FLAGS:
        p = Value.cast(_FLAGS[op](a, b, sa, sb, bits, Value.cast(lut)))
        return p, p
    if op is PEOp.COUNTER:
        if count is None:
            raise ValueError("COUNTER needs its state (count)")
        return count, b0 & (count == (a - 1)[:WORD_BITS])
    if op is PEOp.STEP:
        if acc is None:
            raise ValueError("STEP needs its state (acc)")
        acc = Value.cast(acc)
        sel = Mux(bits[2], acc == 0, bits[1])
        nxt = Mux(b0, acc + Mux(sel, b, a), acc)[:WORD_BITS]
        return nxt, nxt == 0
    raise ValueError(f"unknown op {op!r}")


class ALU(wiring.Component):
    op: In(OP_WIDTH)
    a: In(WORD_BITS)
    b: In(WORD_BITS)
    c: In(WORD_BITS)
    bits: In(3)
    lut: In(8)
    count: In(WORD_BITS)
    acc: In(WORD_BITS)
    res: Out(WORD_BITS)
    res_p: Out(1)

    def __init__(self, without: frozenset[PEOp] | set[PEOp] = frozenset()):
        self.without = frozenset(PEOp(op) for op in without)
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        with m.Switch(self.op):
            for op in PEOp:
                if op in self.without:
                    continue
                res, p = op_result(op, self.a, self.b, self.c, self.bits, self.lut, self.count,
                                   self.acc)
                with m.Case(op):
                    m.d.comb += [self.res.eq(res), self.res_p.eq(p)]
        return m
