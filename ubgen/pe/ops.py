"""The PE's operation set as data, and its plain-Python reference (docs/design.md §5.2, thesis §7.1).

:class:`PEOp` is the single source of truth for the op encoding: the value of each member is what
the PE's ``op`` configuration register holds, and the compiler's backend reads it from here.

:func:`pe_reference` is an independent model written from the op definitions below with Python
integers (16-bit wraparound); the tests check the RTL against it, it is not derived from the RTL.

Definitions (``a, b, c`` = data0, data1, data2 as 16-bit unsigned words; ``s(x)`` their two's
complement value; ``bits`` = (bit0, bit1, bit2)):

* 16-bit results (``res_p`` = 0 unless stated): PASS ``a`` (``res_p`` = bit0), ADD, SUB, MUL
  (low 16 bits), MAC ``a*b + c``, SHL/LSHR/ASHR by ``b & 15``, AND, OR, XOR, SMIN, SMAX, UMIN,
  UMAX, ABS ``|s(a)|``, ABSDIFF ``|s(a) - s(b)|``, UABSDIFF ``|a - b|`` (unsigned), SEL
  ``bit0 ? a : b``, UDIV ``floor(a / b)`` unsigned with ``a / 0 = 0`` (Halide's convention;
  docs/pe.md has its cost);
* comparisons (EQ, NE, SLT, SLE, SGT, SGE, ULT, ULE, UGT, UGE of ``a`` against ``b``): the result
  on ``res_p``, and ``res`` = ``res_p`` zero-extended;
* 1-bit logic: BAND ``bit0 & bit1``, BOR, BXOR, BNOT ``~bit0``, LUT3 ``lut[bit2:bit1:bit0]``
  (``lut`` an 8-bit configuration register); ``res`` = ``res_p`` zero-extended;
* COUNTER (a loop counter for controllers built on PEs): state ``count`` starts at 0 while the
  array is not running; ``res = count``; ``wrap = bit0 & (count == (a - 1) mod 2**16)``;
  ``res_p = wrap``; on every unstalled running cycle with ``bit0`` set the counter advances:
  ``count <- 0 if wrap else count + 1``. So with ``bit0`` = 1 it counts 0..a-1 (``a = 0`` means
  a full 16-bit period), and chaining one counter's ``res_p`` into the next one's ``bit0`` builds
  a loop nest.
* STEP (the affine step of thesis §6.1.2 / Fig. 6.2b in one PE, for controllers built on PEs,
  docs/pe.md): the state ``s`` *is* the output register (``out_reg`` = 1). While the array is
  not running ``s = c``; on every unstalled running cycle with ``bit0`` set
  ``s <- s + (sel ? b : a)`` with ``sel = (s == 0) if bit2 else bit1`` (mod 2**16), otherwise
  ``s`` holds. ``res = s`` and ``res_p = (s == 0)``, both functions of the state only. The ALU
  computes the next state (:func:`pe_reference` with ``acc = s``: ``(next, next == 0)``), which
  the output register loads. With ``bit2`` = 1 and ``a = -1`` it is a down-counter that reloads
  ``b`` at 0 (a loop level's "last iteration" flag on ``res_p``, or a schedule generator whose
  ``res_p`` is the fire); with ``bit1`` a routed level flag it is one address generator of the
  recurrence form (``a`` the innermost delta, ``b`` the delta of the outer levels).
"""
from __future__ import annotations

import enum

from ..arch import WORD_WIDTH

__all__ = ["PEOp", "WORD_BITS", "WORD_MASK", "pe_reference", "counter_next", "step_reset",
           "OP_WIDTH"]

WORD_BITS = WORD_WIDTH
WORD_MASK = (1 << WORD_BITS) - 1
_SHIFT_MASK = WORD_BITS - 1          # shift amounts are taken mod the word width


class PEOp(enum.IntEnum):
    """PE operations; the value is the ``op`` configuration register's encoding."""
    PASS = 0
    ADD = 1
    SUB = 2
    MUL = 3
    SHL = 4
    LSHR = 5
    ASHR = 6
    AND = 7
    OR = 8
    XOR = 9
    SMIN = 10
    SMAX = 11
    UMIN = 12
    UMAX = 13
    ABS = 14
    ABSDIFF = 15
    UABSDIFF = 16
    SEL = 17
    MAC = 18
    EQ = 19
    NE = 20
    SLT = 21
    SLE = 22
    SGT = 23
    SGE = 24
    ULT = 25
    ULE = 26
    UGT = 27
    UGE = 28
    COUNTER = 29
    BAND = 30
    BOR = 31
    BXOR = 32
    BNOT = 33
    LUT3 = 34
    UDIV = 35
    STEP = 36

    @property
    def stateful(self) -> bool:
        return self in (PEOp.COUNTER, PEOp.STEP)


OP_WIDTH = int(max(PEOp)).bit_length()


def _s(x: int) -> int:
    return x - (1 << WORD_BITS) if x & (1 << (WORD_BITS - 1)) else x


_COMPARE_FNS = {
    PEOp.EQ: lambda a, b: a == b, PEOp.NE: lambda a, b: a != b,
    PEOp.SLT: lambda a, b: _s(a) < _s(b), PEOp.SLE: lambda a, b: _s(a) <= _s(b),
    PEOp.SGT: lambda a, b: _s(a) > _s(b), PEOp.SGE: lambda a, b: _s(a) >= _s(b),
    PEOp.ULT: lambda a, b: a < b, PEOp.ULE: lambda a, b: a <= b,
    PEOp.UGT: lambda a, b: a > b, PEOp.UGE: lambda a, b: a >= b,
}
_BIT_FNS = {
    PEOp.BAND: lambda b0, b1, b2, lut: b0 & b1, PEOp.BOR: lambda b0, b1, b2, lut: b0 | b1,
    PEOp.BXOR: lambda b0, b1, b2, lut: b0 ^ b1, PEOp.BNOT: lambda b0, b1, b2, lut: 1 - b0,
    PEOp.LUT3: lambda b0, b1, b2, lut: (lut >> (b0 | b1 << 1 | b2 << 2)) & 1,
}
_WORD_FNS = {
    PEOp.PASS: lambda a, b, c, b0: a, PEOp.ADD: lambda a, b, c, b0: a + b,
    PEOp.SUB: lambda a, b, c, b0: a - b, PEOp.MUL: lambda a, b, c, b0: a * b,
    PEOp.MAC: lambda a, b, c, b0: a * b + c,
    PEOp.SHL: lambda a, b, c, b0: a << (b & _SHIFT_MASK),
    PEOp.LSHR: lambda a, b, c, b0: a >> (b & _SHIFT_MASK),
    PEOp.ASHR: lambda a, b, c, b0: _s(a) >> (b & _SHIFT_MASK),
    PEOp.AND: lambda a, b, c, b0: a & b, PEOp.OR: lambda a, b, c, b0: a | b,
    PEOp.XOR: lambda a, b, c, b0: a ^ b,
    PEOp.SMIN: lambda a, b, c, b0: min(_s(a), _s(b)),
    PEOp.SMAX: lambda a, b, c, b0: max(_s(a), _s(b)),
    PEOp.UMIN: lambda a, b, c, b0: min(a, b), PEOp.UMAX: lambda a, b, c, b0: max(a, b),
    PEOp.ABS: lambda a, b, c, b0: abs(_s(a)),
    PEOp.ABSDIFF: lambda a, b, c, b0: abs(_s(a) - _s(b)),
    PEOp.UABSDIFF: lambda a, b, c, b0: abs(a - b), PEOp.SEL: lambda a, b, c, b0: a if b0 else b,
    PEOp.UDIV: lambda a, b, c, b0: a // b if b else 0,
}


def pe_reference(op: PEOp, a: int, b: int, c: int, bits: tuple[int, int, int] = (0, 0, 0), *,
                 lut: int = 0, count: int = 0, acc: int = 0) -> tuple[int, int]:
    """``(res, res_p)`` of ``op`` on words ``a, b, c`` and ``bits`` (see the module docstring).

    For COUNTER, ``count`` is the counter's current state; :func:`counter_next` gives the next.
    For STEP, ``acc`` is the state ``s`` (the output register) and the result is the next state
    ``(s', s' == 0)`` the output register loads (:func:`step_reset` while not running).
    """
    if op.__class__ is not PEOp:
        op = PEOp(op)
    a, b, c = a & WORD_MASK, b & WORD_MASK, c & WORD_MASK
    b0, b1, b2 = bits[0] & 1, bits[1] & 1, bits[2] & 1
    fn = _WORD_FNS.get(op)
    if fn is not None:
        return fn(a, b, c, b0) & WORD_MASK, b0 if op is PEOp.PASS else 0
    fn = _COMPARE_FNS.get(op)
    if fn is not None:
        p = int(fn(a, b))
        return p, p
    fn = _BIT_FNS.get(op)
    if fn is not None:
        p = fn(b0, b1, b2, lut)
        return p, p
    if op is PEOp.STEP:
        acc &= WORD_MASK
        sel = int(acc == 0) if b2 else b1
        nxt = (acc + (b if sel else a)) & WORD_MASK if b0 else acc
        return nxt, int(nxt == 0)
    # COUNTER
    wrap = int(bool(b0) and count == (a - 1) & WORD_MASK)
    return count & WORD_MASK, wrap


def step_reset(c: int) -> tuple[int, int]:
    """The STEP output register ``(res, res_p)`` while the array is not running."""
    c &= WORD_MASK
    return c, int(c == 0)


def counter_next(count: int, a: int, bits: tuple[int, int, int]) -> int:
    """The COUNTER state after one unstalled running cycle."""
    _, wrap = pe_reference(PEOp.COUNTER, a, 0, 0, bits, count=count)
    if not bits[0] & 1:
        return count
    return 0 if wrap else (count + 1) & WORD_MASK
