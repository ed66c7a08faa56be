"""Physical Unified Buffer (PUB): wide-fetch single-port SRAM + aggregators + transpose buffers.

Thesis §6.1.3 (Fig. 6.4), paper §IV-B; sizes come from :class:`~ubgen.arch.PUBParams`.
Every stream is driven by one controller (docs/design.md §4) named after the stream:

``in2agg_{p}``   no AG: the aggregator fills in order (:mod:`.spec`): ``data_in[p]`` of the fire
                 cycle c is written to lane ``x mod FW`` of the current wide slot (x: the
                 fire's index in its level-0 loop); a new slot starts after lane FW-1 and after
                 the last word of a level-0 loop; visible from cycle c+1.
``agg2sram_{p}`` no SG: fires ``1 + slack`` cycles after in2agg fills a wide word (``1 +
                 row_slack`` after a row's partial last word); AG ``sram``: the oldest full AGG
                 slot is written to SRAM[``sram``] at the end of that cycle; a read issued at
                 c+1 or later sees it.
``sram2tb_{q}``  AG ``sram``: SRAM is read at c, the wide word arrives at c+1 and is written into
                 TB slot ``sram mod tb_depth`` (the address's low bits, :mod:`.spec`) at the
                 end of c+1; visible from c+2.
``tb2out_{q}``   AG ``tb`` (TB word): ``data_out[q]`` = TB word ``tb`` and ``valid_out[q]`` = 1
                 during cycle c.

All cycles are *unstalled* cycles (the ``cycle_count``): nothing in the datapath moves in a
stalled cycle, so a stalled run produces the same values at the same unstalled cycles.

The SRAM is single-ported and shared by schedule: if two of the ``agg2sram_*`` / ``sram2tb_*``
streams access it in the same cycle the sticky ``error`` flag is set (status register, cleared by
writing 1 to it; ``run`` going low does not clear it, so the host can read it after a run).
A fire whose SRAM address belongs to another chained tile is not an access of this SRAM.

Chaining (paper Fig. 10, §V-C): the SRAM AGs carry ``chain_bits`` extra high bits; with
``chain_en`` an access happens only when they equal ``tile_id``. Each TB slot keeps an *owned*
bit (did this tile's SRAM supply it); on ``tb2out`` a tile drives its own word when it owns it and
otherwise passes ``chain_in_*`` through. With ``chain_en`` = 0 the high bits are ignored.

ROM mode (``mode`` = 1; a lookup table, docs/design.md §5.1): while ``run`` = 0, configuration writes to
the ``sram`` window store one word each (word address = window offset). With ``run`` = 1 every
unstalled cycle c reads word address ``data_in[0]``; ``data_out[0]`` shows it with
``valid_out[0]`` in unstalled cycle c+1. The controllers' streams are ignored in ROM mode.
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..arch import PUBParams
from ..regmap import CONFIG_DATA_WIDTH
from .aggregator import Aggregator
from .control import (BlockConfig, CycleCounter, add_controllers, chain_output,
                      connect_config, controllers_scheduled, tile_match)
from .spec import PUB_STATUS, pub_layouts, pub_regmap
from .sram import SRAMPort, WideSRAM
from .transpose_buffer import TransposeBuffer

__all__ = ["PhysicalUnifiedBuffer", "pub_layouts", "pub_regmap", "PUB_STATUS"]


class PhysicalUnifiedBuffer(wiring.Component):
    """One PUB tile (thesis Fig. 6.4a): ports ``data_in[P]``, ``data_out[Q]``/``valid_out[Q]``,
    ``chain_in_data[Q]``/``chain_in_valid[Q]``, ``run``, ``stall``, ``cycle_count``, ``error``
    and the config bus ``cfg_addr``/``cfg_wdata``/``cfg_we``/``cfg_rdata``."""

    def __init__(self, params: PUBParams = PUBParams(), lend: tuple[str, ...] = ()):
        self.params = params
        self.layouts = pub_layouts(params)
        self.regmap = pub_regmap(params)
        self.lend = tuple(lend)
        super().__init__(self.signature_for(params, self.lend))

    @staticmethod
    def signature_for(params: PUBParams, lend: tuple[str, ...] = ()) -> wiring.Signature:
        """The PUB's ports for ``params`` (also used to instantiate generated PUB Verilog).

        ``lend`` names controllers another block may borrow while the PUB is idle (the MEM
        tile's register file, docs/mem_rf.md): an input ``lend_en`` that, while high, keeps
        every controller's fire from the datapath (no stream moves) and fires ``agg2sram_<p>``
        with ``in2agg_<p>`` (same cycle) instead of after the aggregator fills, and per lent
        controller ``<name>_fire`` (its fire while ``lend_en``) and ``<name>_<ag>`` (each
        registered address generator). Without ``lend`` the ports are the PUB's alone."""
        w, P, Q = params.word_width, params.input_ports, params.output_ports
        layouts = pub_layouts(params)
        lent = {}
        if lend:
            lent["lend_en"] = In(1)
            for name in lend:
                lent[f"{name}_fire"] = Out(1)
                lent.update({f"{name}_{ag}": Out(aw)
                             for ag, aw in layouts[name].registered.items()})
        return wiring.Signature({**lent,
            "run": In(1), "stall": In(1),
            "data_in": In(w).array(P),
            "data_out": Out(w).array(Q), "valid_out": Out(1).array(Q),
            "chain_in_data": In(w).array(Q), "chain_in_valid": In(1).array(Q),
            "cycle_count": Out(params.controller.cycle_width), "error": Out(1),
            "cfg_addr": In(pub_regmap(params).addr_width), "cfg_wdata": In(CONFIG_DATA_WIDTH),
            "cfg_we": In(1), "cfg_rdata": Out(CONFIG_DATA_WIDTH),
        })

    def elaborate(self, platform):
        m = Module()
        prm = self.params
        m.submodules.config = cfg = BlockConfig(self.regmap, PUB_STATUS)
        connect_config(m, self, cfg)
        m.submodules.counter = counter = CycleCounter(prm.controller.cycle_width)
        m.d.comb += [counter.run.eq(self.run), counter.stall.eq(self.stall),
                     self.cycle_count.eq(counter.count),
                     cfg.status_in("cycle_count").eq(counter.count)]
        ub_mode = cfg.fields["mode"] == 0
        active = ub_mode & ~self.lend_en if self.lend else ub_mode
        ctl, fire = add_controllers(m, self.layouts, cfg.fields, counter, enable=active)
        # with no controller configured (every dim 0: done from the start) in UB mode and not
        # lent, nothing can happen in the PUB: it does not see ``run`` (its count holds 0, its
        # controllers stay at their restart), so ``run`` rising switches nothing in it
        # (docs/energy.md "An unused tile")
        scheduled = controllers_scheduled(ctl) | ~ub_mode
        m.d.comb += counter.enable.eq(scheduled | self.lend_en if self.lend else scheduled)
        for name in self.lend:
            m.d.comb += getattr(self, f"{name}_fire").eq(ctl[name].fire & self.lend_en)
            m.d.comb += [getattr(self, f"{name}_{ag}").eq(ctl[name].addr(ag))
                         for ag in self.layouts[name].registered]
        m.submodules.sram = sram = WideSRAM(prm.word_width, prm.fetch_width, prm.sram_depth)

        def match(addr):
            return tile_match(addr, prm.sram_addr_width, cfg.fields["chain_en"],
                              cfg.fields["tile_id"])

        writes = [self._input_side(m, p, ctl, fire, match, counter, cfg.fields)
                  for p in range(prm.input_ports)]
        outputs = [self._output_side(m, q, ctl, fire, match, counter, sram)
                   for q in range(prm.output_ports)]
        reads = [(req, addr) for _, req, addr in outputs]
        rom = self._rom(m, counter, ub_mode, sram)
        self._sram_port(m, sram, cfg, rom, writes, reads)

        # tb2out (or the ROM on port 0) through the chaining output mux.
        for q, (tb, _, _) in enumerate(outputs):
            data, valid, owned = tb.rdata, fire[f"tb2out_{q}"], tb.rowned
            if q == 0:
                _, _, rom_valid, rom_data = rom
                data = Mux(ub_mode, data, rom_data)
                valid = Mux(ub_mode, valid, rom_valid)
                owned = Mux(ub_mode, owned, 1)
            chain_output(m, chain_en=cfg.fields["chain_en"], fire=valid, owned=owned,
                         data=data, chain_in_data=self.chain_in_data[q],
                         chain_in_valid=self.chain_in_valid[q],
                         data_out=self.data_out[q], valid_out=self.valid_out[q])
        return m

    def _input_side(self, m, p, ctl, fire, match, counter, f):
        """in2agg fills AGG p in order; agg2sram empties it when the aggregator says a write is
        due (module docstring). Returns its SRAM write request, address and data."""
        prm = self.params
        m.submodules[f"agg_{p}"] = agg = Aggregator(prm.word_width, prm.fetch_width,
                                                     prm.agg_depth, prm.agg_slack_width)
        a, s = ctl[f"in2agg_{p}"], ctl[f"agg2sram_{p}"]
        m.d.comb += [agg.restart.eq(counter.restart), agg.tick.eq(counter.tick),
                     agg.we.eq(fire[f"in2agg_{p}"]), agg.last.eq(a.last0),
                     agg.wdata.eq(self.data_in[p]), agg.re.eq(fire[f"agg2sram_{p}"]),
                     agg.slack.eq(f[f"agg2sram_{p}_slack"]),
                     agg.row_slack.eq(f[f"agg2sram_{p}_row_slack"])]
        # lent to the register file: agg2sram steps with in2agg (docs/mem_rf.md)
        m.d.comb += s.trigger.eq(Mux(self.lend_en, a.fire, agg.due) if self.lend else agg.due)
        req = Signal(name=f"sram_write_{p}")
        m.d.comb += req.eq(fire[f"agg2sram_{p}"] & match(s.addr("sram")))
        return req, s.addr("sram"), agg.rdata

    def _output_side(self, m, q, ctl, fire, match, counter, sram):
        """sram2tb reads the SRAM; the word lands in TB q at the end of the next unstalled
        cycle (held across stalls by the SRAM's read enable). tb2out reads the TB."""
        prm = self.params
        m.submodules[f"tb_{q}"] = tb = TransposeBuffer(prm.word_width, prm.fetch_width,
                                                        prm.tb_depth)
        r = ctl[f"sram2tb_{q}"]
        owned = Signal(name=f"sram_read_{q}_owned")
        req = Signal(name=f"sram_read_{q}")
        m.d.comb += [owned.eq(match(r.addr("sram"))), req.eq(fire[f"sram2tb_{q}"] & owned)]
        pend = Signal(name=f"tb_{q}_pending")
        pend_slot = Signal.like(tb.waddr, name=f"tb_{q}_pending_slot")
        pend_owned = Signal(name=f"tb_{q}_pending_owned")
        with m.If(counter.restart):
            m.d.sync += pend.eq(0)
        with m.Elif(counter.tick):
            m.d.sync += [pend.eq(fire[f"sram2tb_{q}"]),
                         pend_slot.eq(r.addr("sram")[:len(pend_slot)]),
                         pend_owned.eq(owned)]
        m.d.comb += [tb.we.eq(counter.tick & pend), tb.waddr.eq(pend_slot),
                     tb.wdata.eq(sram.rdata), tb.wowned.eq(pend_owned),
                     tb.raddr.eq(ctl[f"tb2out_{q}"].addr("tb"))]
        return tb, req, r.addr("sram")

    def _rom(self, m, counter, ub_mode, sram):
        """ROM mode: read word ``data_in[0]`` every unstalled cycle; the word is valid in the
        next one. Returns ``(read, word address, valid, data)``."""
        prm = self.params
        lane_bits = (prm.fetch_width - 1).bit_length()
        read, valid, lane = Signal(), Signal(), Signal(max(1, lane_bits))
        addr = self.data_in[0]
        m.d.comb += read.eq(counter.tick & ~ub_mode)
        with m.If(counter.restart):
            m.d.sync += valid.eq(0)
        with m.Elif(counter.tick):
            m.d.sync += [valid.eq(~ub_mode), lane.eq(addr[:lane_bits])]
        return read, addr, counter.tick & valid, sram.rdata.word_select(lane, prm.word_width)

    def _sram_port(self, m, sram, cfg, rom, writes, reads):
        """The single SRAM port (:class:`~.sram.SRAMPort`): configuration window (run = 0), ROM
        read, then the streams; two streams in one cycle set the sticky ``error`` flag (a
        schedule bug; the first one wins)."""
        prm = self.params
        saw = prm.sram_addr_width
        m.submodules.sram_port = port = SRAMPort(prm.word_width, prm.fetch_width,
                                                 prm.sram_depth, len(writes), len(reads))
        rom_read, rom_addr, _, _ = rom
        m.d.comb += [port.win_we.eq(cfg.win_we & ~self.run), port.win_addr.eq(cfg.win_addr),
                     port.win_data.eq(cfg.cfg_wdata[:prm.word_width]),
                     port.rom_re.eq(rom_read), port.rom_addr.eq(rom_addr),
                     sram.addr.eq(port.addr), sram.we.eq(port.we), sram.wdata.eq(port.wdata),
                     sram.re.eq(port.re), port.clear.eq(cfg.clear_out("error")),
                     self.error.eq(port.error), cfg.status_in("error").eq(port.error)]
        for k, (req, addr, data) in enumerate(writes):
            m.d.comb += [port.wr_req[k].eq(req), port.wr_addr[k].eq(addr[:saw]),
                         port.wr_data[k].eq(data)]
        for k, (req, addr) in enumerate(reads):
            m.d.comb += [port.rd_req[k].eq(req), port.rd_addr[k].eq(addr[:saw])]
