"""Where a stream's values are in hardware (the timing of ``compiler.backend.build``, thesis
§6.3): a stream is on a node's output port with a cycle offset (:class:`Source`), or is another
stream's with the offset moved (:class:`Alias`, a shift register). Shared by the netlist builder
and the builders of its memory blocks (:mod:`.dp_build`) and of other hardware
(``compiler.fpga.build``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ubgen.arch import WORD_WIDTH

__all__ = ["Alias", "Source"]


@dataclass(frozen=True)
class Source:
    """The value of stream cycle ``t`` is on ``node.port`` at cycle ``t + offset``
    (``offset`` None: a constant, the same at every cycle)."""
    node: str
    port: str
    offset: int | None
    width: int = WORD_WIDTH


@dataclass(frozen=True)
class Alias:
    """A stream whose source is ``stream``'s with the offset moved by ``shift``."""
    stream: tuple[str, str]
    shift: int
