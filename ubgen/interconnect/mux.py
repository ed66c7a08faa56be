"""The select multiplexer of the switch boxes and connection boxes.

:func:`mux_tree` builds ``inputs[sel]`` (``None`` = constant 0; a select value past the last
input gives 0) as 2:1 ``Mux`` trees on the low ``tree_bits`` select bits inside groups of
``2 ** tree_bits`` consecutive inputs, each group gated by the decode of the remaining high
select bits (``sel[tree_bits:] == group``, one comparison shared by every bit of the word) and
the groups OR-ed. ``tree_bits = len(sel)`` (the default) is one balanced tree. A select wider
than the inputs need (a bus address over a register file) builds the tree on the low bits that
index them and gates it with the high bits being 0.

Why not ``with m.Switch(sel)``: Yosys turns it into a ``$pmux`` (a one-hot OR of every case),
which ``synth_ecp5`` mapped to 52 LUT4 per bit for the connection box's 21 inputs, against 20
with ``tree_bits=1``. Which split maps smallest is decided by ABC's delay-driven LUT mapping
(which re-derives the structure from the function), not by the RTL, so each box picks its
``tree_bits`` by measurement (``bench/fpga_blocks.py``, docs/fpga.md "The interconnect muxes").
"""
from __future__ import annotations

import functools
import operator
from typing import Sequence

from amaranth.hdl import Const, Mux, Value


def _tree(sel: Value, slots: list) -> Value | None:
    """Balanced 2:1 tree over ``slots`` (``2 ** len(sel)`` entries) on the bits of ``sel``,
    least significant first; ``None`` for an all-``None`` (constant 0) subtree."""
    level = list(slots)
    for bit in range(len(sel)):
        pairs = zip(level[0::2], level[1::2])
        level = [None if lo is None and hi is None
                 else Mux(sel[bit], 0 if hi is None else hi, 0 if lo is None else lo)
                 for lo, hi in pairs]
    return level[0]


def mux_tree(sel: Value, inputs: Sequence[Value | None], *,
             tree_bits: int | None = None) -> Value:
    """``inputs[sel]``, 0 for a ``None`` input and for ``sel >= len(inputs)``.

    ``tree_bits`` (default: all of ``sel``): the low select bits that drive the 2:1 trees; the
    high ones are decoded (see the module docstring).
    """
    sel = Value.cast(sel)
    if not 0 < len(inputs) <= 1 << len(sel):
        raise ValueError(f"{len(inputs)} inputs for a {len(sel)}-bit select")
    span = max(1, (len(inputs) - 1).bit_length())
    if span < len(sel):
        return Mux(sel[span:] == 0, mux_tree(sel[:span], inputs, tree_bits=tree_bits), 0)
    width = max((len(Value.cast(v)) for v in inputs if v is not None), default=1)
    tree_bits = len(sel) if tree_bits is None else max(0, min(tree_bits, len(sel)))
    size = 1 << tree_bits
    slots = list(inputs) + [None] * ((1 << len(sel)) - len(inputs))
    terms = []
    for group in range(len(slots) // size):
        value = _tree(sel[:tree_bits], slots[group * size:(group + 1) * size])
        if value is None:
            continue
        if tree_bits < len(sel):
            value = Mux(sel[tree_bits:] == group, value, 0)
        terms.append(value)
    if not terms:
        return Const(0, width)
    return functools.reduce(operator.or_, terms)
