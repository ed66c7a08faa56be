"""DP-SRAM + AG: the baseline push memory (thesis §6.1.1, Fig. 6.1; paper Fig. 3).

A dual-port ``sram_depth`` x ``word_width`` SRAM with one write controller ``wr`` and one read
controller ``rd`` (each ID + AG + SG, AG ``addr``), the same unstalled-cycle counter, run/stall,
chaining and configuration bus as the PUB (:mod:`ubgen.pub`). Timing, in unstalled cycles:

* ``wr`` firing at cycle c writes ``data_in`` (sampled during c) to ``addr`` at the end of c;
* ``rd`` firing at cycle c reads ``addr``; ``data_out`` shows the word with ``valid_out`` = 1
  in cycle c+1 (read latency 1). A write at cycle c is visible to a read fired at c+1 or later
  (a read and a write of one address in the same cycle return the old word).

The register map and controllers are data (:mod:`ubgen.mem.dp_spec`, re-exported here).

Chaining (paper Fig. 10): the AGs carry ``chain_bits`` high bits; with ``chain_en`` a write or a
read happens only when they equal ``tile_id``; a read that another tile owns passes
``chain_in_data``/``chain_in_valid`` through to the output in cycle c+1.
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .arch import DPBufParams
from .regmap import CONFIG_DATA_WIDTH
from .mem.dp_spec import DPBUF_STATUS, dpbuf_layouts, dpbuf_regmap, encode_dpbuf
from .pub.control import (BlockConfig, CycleCounter, add_controllers, chain_output,
                          connect_config, controllers_scheduled, tile_match)

__all__ = ["DPBuffer", "dpbuf_layouts", "dpbuf_regmap", "encode_dpbuf", "DPBUF_STATUS"]


class DPBuffer(wiring.Component):
    """Dual-port SRAM with a write and a read controller (thesis Fig. 6.1)."""

    def __init__(self, params: DPBufParams = DPBufParams()):
        self.params = params
        self.layouts = dpbuf_layouts(params)
        self.regmap = dpbuf_regmap(params)
        w = params.word_width
        super().__init__({
            "run": In(1), "stall": In(1),
            "data_in": In(w), "data_out": Out(w), "valid_out": Out(1),
            "chain_in_data": In(w), "chain_in_valid": In(1),
            "cycle_count": Out(params.controller.cycle_width),
            "cfg_addr": In(self.regmap.addr_width), "cfg_wdata": In(CONFIG_DATA_WIDTH),
            "cfg_we": In(1), "cfg_rdata": Out(CONFIG_DATA_WIDTH),
        })

    def elaborate(self, platform):
        m = Module()
        prm = self.params
        saw = prm.sram_addr_width

        m.submodules.config = cfg = BlockConfig(self.regmap, DPBUF_STATUS)
        f = cfg.fields
        connect_config(m, self, cfg)
        m.submodules.counter = counter = CycleCounter(prm.controller.cycle_width)
        m.d.comb += [counter.run.eq(self.run), counter.stall.eq(self.stall),
                     self.cycle_count.eq(counter.count),
                     cfg.status_in("cycle_count").eq(counter.count)]
        ctl, fire = add_controllers(m, self.layouts, f, counter)
        # neither controller configured: nothing can happen here, so the buffer does not see
        # ``run`` (its count holds 0; docs/energy.md "An unused tile"), as the PUB
        m.d.comb += counter.enable.eq(controllers_scheduled(ctl))

        def match(addr):
            return tile_match(addr, saw, f["chain_en"], f["tile_id"])

        m.submodules.mem = mem = Memory(shape=prm.word_width, depth=prm.sram_depth, init=[])
        wr = mem.write_port()
        rd = mem.read_port(domain="sync")
        wa, ra = ctl["wr"].addr("addr"), ctl["rd"].addr("addr")
        m.d.comb += [wr.addr.eq(wa[:saw]), wr.data.eq(self.data_in),
                     wr.en.eq(fire["wr"] & match(wa)),
                     rd.addr.eq(ra[:saw]), rd.en.eq(fire["rd"])]

        # The read data belongs to unstalled cycle c+1: track the fire across stalls.
        pend, pend_owned = Signal(), Signal()
        with m.If(counter.restart):
            m.d.sync += pend.eq(0)
        with m.Elif(counter.tick):
            m.d.sync += [pend.eq(fire["rd"]), pend_owned.eq(match(ra))]
        chain_output(m, chain_en=f["chain_en"], fire=counter.tick & pend, owned=pend_owned,
                     data=rd.data, chain_in_data=self.chain_in_data,
                     chain_in_valid=self.chain_in_valid,
                     data_out=self.data_out, valid_out=self.valid_out)
        return m
