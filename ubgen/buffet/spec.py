"""The buffet as data (thesis §6.2, Fig. 6.5; Pellauer et al., "Buffets", ASPLOS 2019): its
ports, its configuration (the *local* schedule the compiler derives from a unified buffer's
global one, thesis §6.3) and a plain-Python reference of its behaviour. No Amaranth here: the
compiler builds and checks configurations from these objects, and the RTL
(:class:`ubgen.buffet.buffet.Buffet`) and its testbenches use the same.

A buffet holds a window of a stream in a circular SRAM of ``capacity`` words: ``head`` is the
position of the oldest live word and ``occupancy`` the number of live words.

* **fill** (producer): appends a word at position ``head + occupancy``; waits while the buffet
  is full (``occupancy == capacity``);
* **read** ``(idx, shrink)`` (consumer): reads the word ``idx`` positions after the head; waits
  until that word has been filled (``idx < occupancy``: the read-after-fill dependency check).
  After the read, ``shrink`` words are released from the head (the **shrink** of Fig. 6.5, at
  the loop level the compiler chose); it waits while ``shrink > occupancy``;
* **update** ``(idx, data)``: writes the live word ``idx`` after the head (read-modify-write
  buffers); waits until it has been filled. As in thesis §6.3's footnote, a read after an
  update is not checked by the buffet: the consumer orders them.

Every operation is a ready/valid handshake; nothing carries a cycle. The buffet has no address
generator: the indices come from outside (thesis §6.2, "buffet rely on an external hardware to
generate address"), here the affine generators of :class:`BuffetConfig` (:func:`requests`).
"""
from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass, field

from ..arch import DPBufParams, _clog2
from ..controller import AffineMap

__all__ = ["BuffetParams", "BuffetConfig", "requests", "BuffetModel", "buffet_ports"]


@dataclass(frozen=True)
class BuffetParams:
    """A buffet around the dual-port SRAM of the DP-SRAM tiles (``[dpbuf] sram_depth`` words)."""
    word_width: int = 16
    capacity: int = 2048
    out_depth: int = 2               # read responses buffered against back-pressure

    @staticmethod
    def from_dpbuf(dp: DPBufParams) -> "BuffetParams":
        return BuffetParams(dp.word_width, dp.sram_depth)

    @property
    def index_width(self) -> int:
        return _clog2(self.capacity)

    @property
    def count_width(self) -> int:
        return _clog2(self.capacity + 1)


def buffet_ports(p: BuffetParams) -> dict[str, tuple[str, int]]:
    """The buffet's ports: name -> (direction, width) (``clear`` restarts it)."""
    w, iw, cw = p.word_width, p.index_width, p.count_width
    return {"fill_data": ("in", w), "fill_valid": ("in", 1), "fill_ready": ("out", 1),
            "rd_idx": ("in", iw), "rd_shrink": ("in", cw), "rd_valid": ("in", 1),
            "rd_ready": ("out", 1),
            "rd_data": ("out", w), "rd_data_valid": ("out", 1), "rd_data_ready": ("in", 1),
            "upd_idx": ("in", iw), "upd_data": ("in", w), "upd_valid": ("in", 1),
            "upd_ready": ("out", 1), "occupancy": ("out", cw), "clear": ("in", 1)}


@dataclass(frozen=True)
class BuffetConfig:
    """The local schedule of one buffet (thesis §6.3): the order of its operations without
    cycles. ``fills`` words are filled in order. The reads iterate ``read_extents``
    (innermost first) and read index ``read_idx`` (affine, relative to the head); after each
    read at which loop levels ``0 .. shrink_level - 1`` are all at their last iteration
    (``shrink_level`` 0: after every read) ``shrink`` words are released. ``name`` and
    ``buffer`` say which memory it is."""
    name: str
    buffer: str
    fills: int
    read_extents: tuple[int, ...]
    read_idx: AffineMap
    shrink_level: int
    shrink: int
    capacity_needed: int = 0         # most live words any read needs (<= capacity)

    @property
    def reads(self) -> int:
        n = 1
        for e in self.read_extents:
            n *= e
        return n

    def to_dict(self) -> dict:
        return {"name": self.name, "buffer": self.buffer, "fills": self.fills,
                "read_extents": list(self.read_extents),
                "read_idx": {"start": self.read_idx.start,
                             "strides": list(self.read_idx.strides)},
                "shrink_level": self.shrink_level, "shrink": self.shrink,
                "capacity_needed": self.capacity_needed}


def requests(cfg: BuffetConfig) -> list[tuple[int, int]]:
    """``(idx, shrink)`` of every read of ``cfg``, in order: the external address generator's
    output (an affine map over the read loops, innermost first, as
    :func:`ubgen.controller.iterate` enumerates it)."""
    ext = cfg.read_extents
    out = []
    for outer_first in itertools.product(*[range(e) for e in reversed(ext)]):
        i = outer_first[::-1]
        idx = cfg.read_idx.start + sum(s * x for s, x in zip(cfg.read_idx.strides, i))
        last = all(i[d] == ext[d] - 1 for d in range(min(cfg.shrink_level, len(ext))))
        out.append((idx, cfg.shrink if last else 0))
    return out


@dataclass
class BuffetModel:
    """The buffet's rules (module docstring) on Python values; ``fill``/``read``/``update``
    return False when the operation has to wait. :meth:`run` drains whole streams."""
    capacity: int
    head: int = 0
    occupancy: int = 0
    words: dict[int, int] = field(default_factory=dict)

    def fill(self, value: int) -> bool:
        if self.occupancy >= self.capacity:
            return False
        self.words[(self.head + self.occupancy) % self.capacity] = value
        self.occupancy += 1
        return True

    def read(self, idx: int, shrink: int) -> int | None | bool:
        if idx >= self.occupancy or shrink > self.occupancy:
            return False
        value = self.words.get((self.head + idx) % self.capacity)
        self.head = (self.head + shrink) % self.capacity
        self.occupancy -= shrink
        return value

    def update(self, idx: int, value: int) -> bool:
        if idx >= self.occupancy:
            return False
        self.words[(self.head + idx) % self.capacity] = value
        return True

    def run(self, fills: list[int], reads: list[tuple[int, int]]) -> list[int | None]:
        """Every fill and read, reads first whenever both can go (the consumer never waits for
        a fill it does not need). Raises ``RuntimeError`` on a deadlock: neither the next read
        nor the next fill can go."""
        fq, rq, out = deque(fills), deque(reads), []
        while rq:
            got = self.read(*rq[0])
            if got is not False:
                out.append(got)
                rq.popleft()
            elif fq and self.fill(fq[0]):
                fq.popleft()
            else:
                raise RuntimeError(f"deadlock before read {len(out)} (idx {rq[0][0]}, shrink "
                                   f"{rq[0][1]}): occupancy {self.occupancy} of {self.capacity},"
                                   f" {len(fq)} fills left")
        return out
