"""The IO core (docs/design.md §5.3, thesis §7.1 Fig. 7.1): streams between the global buffer and the
array, on the north edge, driven by its own controllers (docs/design.md §4).

Two streams, each one :class:`~ubgen.controller_rtl.Controller` with one address generator
``addr`` (a word offset in the IO tile's GLB bank, ``log2(bank_words)`` bits):

* ``glb2f`` (GLB to fabric): a fire at unstalled cycle *t* reads the GLB at its address; the word
  is on ``out_io2f_16`` during unstalled cycle *t + 1* (:data:`GLB2F_LATENCY` = 1: the GLB's
  read latency) with ``out_io2f_1`` = 1, and the word stays on ``out_io2f_16`` until the next
  fire's word replaces it (``out_io2f_1`` is 1 only in the cycle after a fire). Stalls between
  the fire and its cycle keep the word held.
* ``f2glb`` (fabric to GLB): a fire at unstalled cycle *t* writes the value on ``in_f2io_16``
  during cycle *t* (or ``in_f2io_1`` zero-extended when ``f2glb_bit`` = 1) to the GLB at its
  address (:data:`F2GLB_LATENCY` = 0).

The core's controllers restart while ``run`` is 0 and tick on every cycle with ``run`` and not
``stall`` (the :class:`~ubgen.pub.control.CycleCounter`'s timing, without a count: nothing reads
an IO core's cycle count), in lockstep with every MEM tile; a core with neither stream
configured (both ``dim`` 0) does not see ``run``: it stays restarted. Both streams share the tile's
single GLB port: firing both in one cycle is a schedule error; the write wins and the sticky ``error`` output
rises (cleared while ``run`` is 0).
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from ..arch import WORD_WIDTH, Arch
from ..config import ConfigRegisters
from ..array.tilespec import TILE_ADDR_WIDTH
from ..core import core_members
from ..glb.global_buffer import bank_addr_width, glb_port_signature
from ..pub.control import CycleCounter, add_controllers, controllers_scheduled
from ..regmap import RegisterMap
from .spec import F2GLB_LATENCY, GLB2F_LATENCY, IO_PORTS, io_layouts, io_regmap

__all__ = ["IOCore", "io_layouts", "GLB2F_LATENCY", "F2GLB_LATENCY"]

class IOCore(wiring.Component):
    """One IO core: ``glb2f`` and ``f2glb`` controllers, their run/stall timing and a GLB port."""

    PORTS = IO_PORTS

    def __init__(self, arch: Arch, cfg_addr_width: int = TILE_ADDR_WIDTH):
        self.arch = arch
        self.layouts = io_layouts(arch)
        self._regmap = io_regmap(arch)
        super().__init__(core_members(
            self.PORTS, cfg_addr_width, error=Out(1),
            glb=Out(glb_port_signature(bank_addr_width(arch.glb)))))

    @property
    def regmap(self) -> RegisterMap:
        return self._regmap

    def elaborate(self, platform):
        m = Module()
        m.submodules.regs = regs = ConfigRegisters(self.regmap, len(self.cfg.addr))
        wiring.connect(m, wiring.flipped(self.cfg), regs.bus)
        f = regs.fields

        # run/stall timing only: nothing reads an IO core's cycle count (the array's own
        # counter is the host's CYCLE), so it has none to switch; a core with neither stream
        # configured does not see ``run`` at all (docs/energy.md "An unused tile")
        counter = m.submodules.counter = CycleCounter(0)
        m.d.comb += [counter.run.eq(self.run), counter.stall.eq(self.stall)]
        tick, restart = counter.tick, counter.restart

        ctl, _ = add_controllers(m, self.layouts, f, counter)
        rd, wr = ctl["glb2f"], ctl["f2glb"]
        m.d.comb += counter.enable.eq(controllers_scheduled(ctl))

        # one GLB port: the write stream wins a (mis-scheduled) collision
        m.d.comb += [
            self.glb.we.eq(wr.fire),
            self.glb.re.eq(rd.fire & ~wr.fire),
            self.glb.addr.eq(Mux(wr.fire, wr.addr("addr"), rd.addr("addr"))),
            self.glb.wdata.eq(Mux(f["f2glb_bit"], self.in_f2io_1, self.in_f2io_16)),
        ]
        with m.If(restart):
            m.d.sync += self.error.eq(0)
        with m.Elif(rd.fire & wr.fire):
            m.d.sync += self.error.eq(1)

        # glb2f: the read issued at a fire returns one cycle later; hold it until the next one
        fresh = Signal()            # a read was issued in the previous (wall) cycle
        valid = Signal()            # a fire happened in the previous unstalled cycle
        held = Signal(WORD_WIDTH)
        m.d.sync += fresh.eq(self.glb.re)
        with m.If(restart):
            m.d.sync += valid.eq(0)
        with m.Elif(tick):
            m.d.sync += valid.eq(rd.fire)
        m.d.comb += [self.out_io2f_16.eq(Mux(fresh, self.glb.rdata, held)),
                     self.out_io2f_1.eq(valid)]
        m.d.sync += held.eq(self.out_io2f_16)
        return m
