"""The MEM tile's register file (docs/mem_rf.md): the register level of the memory hierarchy
(thesis §5.4) in a memory tile, for banks of at most the shift-register threshold (DNN weights).

``rf_words`` words of ``word_width`` flip-flops; one write controller ``rf_write_<p>`` per data
input and one read controller ``rf_read_<q>`` per data output (layouts and registers:
:mod:`ubgen.mem.spec`), timed like the PUB's controllers by the tile's unstalled-cycle count.
With ``rf_en`` = 1:

* ``rf_write_p`` fires at cycle c: ``data_in[p]`` of cycle c is stored in word ``addr``, visible
  from c+1;
* ``rf_read_q`` fires at cycle c: ``data_out[q]`` = word ``addr`` and ``valid_out[q]`` = 1 during
  c (``valid_out[q]`` = 0 when it does not fire). Write-through: a write to that word firing in
  c shows its ``data_in`` instead; if both write ports hit the word, port 1's value wins;
* two write ports firing on one word in one cycle also set the sticky ``error`` flag (status
  register ``rf_error``, cleared by writing 1 to it, not by ``run`` going low).

``stall`` freezes everything (no fire in a stalled cycle); ``run`` low restarts the
controllers. With ``rf_en`` = 0 no controller fires. The configuration bus (``cfg_*``) decodes
:func:`~ubgen.mem.spec.rf_regmap` at offsets from 0.
"""
from __future__ import annotations

from types import SimpleNamespace

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..arch import MemParams, PUBParams
from ..interconnect.mux import mux_tree
from ..pub.control import BlockConfig, add_controllers, connect_config
from ..regmap import CONFIG_DATA_WIDTH
from .spec import RF_ENABLE, RF_STATUS, rf_layouts, rf_regmap

__all__ = ["MemRegisterFile"]


class MemRegisterFile(wiring.Component):
    """Ports: ``run``, ``stall``, ``cycle`` (the unstalled-cycle count of a
    :class:`~ubgen.pub.control.CycleCounter` on the same ``run``/``stall``: the tile's, shared
    with the PUB), ``data_in[P]``, ``data_out[Q]``/``valid_out[Q]``, ``enabled`` (``rf_en``),
    ``error`` and the config bus ``cfg_addr``/``cfg_wdata``/``cfg_we``/``cfg_rdata``."""

    def __init__(self, params: PUBParams = PUBParams(), mem: MemParams = MemParams()):
        self.params, self.mem = params, mem
        self.layouts = rf_layouts(params, mem)
        self.regmap = rf_regmap(params, mem)
        w = params.word_width
        super().__init__({
            "run": In(1), "stall": In(1), "cycle": In(params.controller.cycle_width),
            "data_in": In(w).array(params.input_ports),
            "data_out": Out(w).array(params.output_ports),
            "valid_out": Out(1).array(params.output_ports),
            "enabled": Out(1), "error": Out(1),
            "cfg_addr": In(self.regmap.addr_width), "cfg_wdata": In(CONFIG_DATA_WIDTH),
            "cfg_we": In(1), "cfg_rdata": Out(CONFIG_DATA_WIDTH),
        })

    def elaborate(self, platform):
        m = Module()
        prm = self.params
        m.submodules.config = cfg = BlockConfig(self.regmap, RF_STATUS)
        connect_config(m, self, cfg)
        enabled = cfg.fields[RF_ENABLE]
        timing = SimpleNamespace(restart=~self.run, tick=self.run & ~self.stall,
                                 count=self.cycle)
        ctl, fire = add_controllers(m, self.layouts, cfg.fields, timing, enable=enabled)
        m.d.comb += self.enabled.eq(enabled)

        words = [Signal(prm.word_width, name=f"word_{i}") for i in range(self.mem.rf_words)]
        writes = [(fire[f"rf_write_{p}"], ctl[f"rf_write_{p}"].addr("addr"), self.data_in[p])
                  for p in range(prm.input_ports)]
        # later statements win: the highest write port's value is stored
        for i, word in enumerate(words):
            for we, addr, data in writes:
                with m.If(we & (addr == i)):
                    m.d.sync += word.eq(data)

        for q in range(prm.output_ports):
            addr = ctl[f"rf_read_{q}"].addr("addr")
            value = mux_tree(addr, words)
            for we, waddr, data in writes:          # write-through, the highest port outermost
                value = Mux(we & (waddr == addr), data, value)
            m.d.comb += [self.data_out[q].eq(value), self.valid_out[q].eq(fire[f"rf_read_{q}"])]

        conflict = Const(0)
        for i in range(len(writes)):
            for j in range(i + 1, len(writes)):
                conflict = conflict | (writes[i][0] & writes[j][0] & (writes[i][1] == writes[j][1]))
        error = Signal()
        with m.If(cfg.clear_out("rf_error")):
            m.d.sync += error.eq(0)
        with m.Elif(conflict):
            m.d.sync += error.eq(1)
        m.d.comb += [self.error.eq(error), cfg.status_in("rf_error").eq(error)]
        return m
