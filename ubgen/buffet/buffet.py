"""The buffet RTL (thesis §6.2, Fig. 6.5; behaviour and ports in :mod:`ubgen.buffet.spec`): a
buffet controller around the dual-port ``capacity`` x 16 SRAM of the DP-SRAM tiles, with
ready/valid fill, read-request, read-response and update ports.

* ``head`` and ``occupancy`` registers; a fill writes position ``head + occupancy`` through the
  SRAM's write port, an accepted read reads ``head + idx`` through its read port (one cycle)
  and then advances ``head`` and lowers ``occupancy`` by its ``shrink``; an update writes
  ``head + idx`` through the write port (it has priority over a fill in the same cycle);
* the dependency checks (``check`` = True): a read or update is accepted only when its word has
  been filled (``idx < occupancy``) and a read's shrink only when that many words are live; a
  fill only while the buffet is not full. ``check`` = False builds the buffet without the
  read-after-fill checks (a read goes whenever the response FIFO has room, its shrink
  saturating at the occupancy), for the negative control of the block-level tests;
* read responses go through a ``out_depth``-entry FIFO, so ``rd_data_ready`` back-pressure stops
  new reads instead of losing data: a read is accepted when the FIFO has room for it counting the
  one in flight and the one leaving in the same cycle. A read accepted in cycle c is on
  ``rd_data`` with ``rd_data_valid`` from cycle c+2;
* ``clear``: synchronous restart (empty, head 0).

Every address is modulo ``capacity`` (a power of two), so the window wraps around the SRAM.
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal, Mux
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .spec import BuffetParams, buffet_ports

__all__ = ["Buffet"]


class Buffet(wiring.Component):
    """A buffet (module docstring)."""

    def __init__(self, params: BuffetParams = BuffetParams(), *, check: bool = True):
        if params.capacity & (params.capacity - 1):
            raise ValueError(f"buffet capacity must be a power of two, got {params.capacity}")
        self.params, self.check = params, check
        super().__init__({name: (In if d == "in" else Out)(w)
                          for name, (d, w) in buffet_ports(params).items()})

    def elaborate(self, platform):
        m = Module()
        p = self.params
        iw = p.index_width
        head = Signal(iw)
        occ = Signal(p.count_width)

        # read-response FIFO
        depth = p.out_depth
        fifo = [Signal(p.word_width, name=f"out{k}") for k in range(depth)]
        count = Signal(range(depth + 1))
        inflight = Signal()
        pop = self.rd_data_valid & self.rd_data_ready
        room = (count + inflight - pop) < depth

        m.submodules.mem = mem = Memory(shape=p.word_width, depth=p.capacity, init=[])
        wr = mem.write_port()
        rd = mem.read_port(domain="sync")

        rd_ok = ((self.rd_idx < occ) & (self.rd_shrink <= occ) & room) if self.check else room
        upd_ok = self.upd_idx < occ
        rd_fire = self.rd_valid & rd_ok
        upd_fire = self.upd_valid & upd_ok
        fill_ok = (occ < p.capacity) & ~upd_fire
        fill_fire = self.fill_valid & fill_ok
        shrink = Mux(rd_fire, Mux(self.rd_shrink <= occ, self.rd_shrink, occ), 0)
        m.d.comb += [
            self.fill_ready.eq(fill_ok), self.rd_ready.eq(rd_ok), self.upd_ready.eq(upd_ok),
            self.occupancy.eq(occ),
            wr.en.eq(fill_fire | upd_fire),
            wr.addr.eq(Mux(upd_fire, head + self.upd_idx, head + occ)[:iw]),
            wr.data.eq(Mux(upd_fire, self.upd_data, self.fill_data)),
            rd.en.eq(rd_fire), rd.addr.eq((head + self.rd_idx)[:iw]),
            self.rd_data.eq(fifo[0]), self.rd_data_valid.eq(count > 0),
        ]

        # FIFO: pop the head, then push the word read in the previous cycle
        after_pop = [Mux(pop, fifo[k + 1] if k + 1 < depth else 0, fifo[k])
                     for k in range(depth)]
        left = count - pop
        with m.If(self.clear):
            m.d.sync += [head.eq(0), occ.eq(0), count.eq(0), inflight.eq(0)]
        with m.Else():
            m.d.sync += [head.eq((head + shrink)[:iw]), occ.eq(occ + fill_fire - shrink),
                         inflight.eq(rd_fire), count.eq(left + inflight)]
            for k in range(depth):
                m.d.sync += fifo[k].eq(Mux(inflight & (left == k), rd.data, after_pop[k]))
        return m
