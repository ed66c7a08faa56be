"""The register level of the memory hierarchy (thesis §5.4, §6.2; §5.1.2 threshold).

After banking and bank merging, a bank whose data fits in a handful of words does not need a
memory tile: a weight read at every pixel (mobilenet's ``w_dw_mem`` after full partitioning) is
one word, and the thesis replaces buffers "having fewer than 20 words" by registers (§7.3,
Fig. 7.5; the shift-register threshold of §5.1.2, default 20). Such a bank becomes a
:class:`~compiler.ir.ubimpl.RegisterFile`: the bank's addresses are linearized densely (row-major
over the address box of its ports, §5.6 without fetch-width padding), and every port keeps its
own affine controller (DESIGN §4) whose single address generator ``addr`` picks the register.

:func:`register_file` returns ``None`` for a bank above the limit (it stays a memory tile) and
raises :class:`MappingError` only for a port no controller can drive.
"""
from __future__ import annotations

from ubgen.controller import AffineMap, ControllerConfig

from ..ir.ubimpl import RegisterFile
from ..ir.ubuf import UnifiedBuffer
from .common import Affine, Stream, port_stream
from .linearize import box_layout, linear
from .shift_register import DEFAULT_THRESHOLD

def _config(s: Stream, addr: Affine) -> ControllerConfig:
    keep = [d for d, e in enumerate(s.extents) if e > 1] or [0]
    pick = lambda a: AffineMap(a.start, tuple(a.strides[d] for d in keep))   # noqa: E731
    return ControllerConfig(tuple(s.extents[d] for d in keep), pick(s.time),
                            {"addr": pick(addr)})


def register_file(bank: UnifiedBuffer, buffer: str,
                  max_words: int = DEFAULT_THRESHOLD) -> RegisterFile | None:
    """The bank as a register file when it needs at most ``max_words`` registers, else None."""
    if max_words < 1 or not bank.inputs or not bank.outputs:
        return None
    ins = [port_stream(p) for p in bank.inputs]
    outs = [port_stream(p) for p in bank.outputs]
    lows, offsets, words = box_layout(ins + outs)
    if words > max_words:
        return None
    return RegisterFile(bank.name, buffer, words, [p.name for p in bank.inputs],
                        [p.name for p in bank.outputs],
                        [_config(s, linear(s.addr, offsets, lows)) for s in ins],
                        [_config(s, linear(s.addr, offsets, lows)) for s in outs])
