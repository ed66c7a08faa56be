"""The MEM tile's register file (docs/mem_rf.md): the register level of the memory hierarchy
(thesis §5.4) in a memory tile, for banks of at most the shift-register threshold (DNN weights).

``rf_words`` words of ``word_width`` bits, one write port per data input and one read port per
data output. The ports have no controllers here: the MEM core (:class:`~ubgen.mem.mem_tile.
MemCore`) drives ``we[p]``/``waddr[p]`` and ``re[q]``/``raddr[q]`` from the PUB's controllers
that :func:`~ubgen.mem.spec.rf_ports` names (idle in register-file mode); their fires already
count only unstalled cycles. Behaviour:

* ``we[p]`` at cycle c: ``data_in[p]`` of cycle c is stored in word ``waddr[p]``, visible from
  c+1;
* ``re[q]`` at cycle c: ``data_out[q]`` = word ``raddr[q]`` and ``valid_out[q]`` = 1 during c
  (``valid_out[q]`` = 0 otherwise). Write-through: a write to that word in c shows its
  ``data_in`` instead; if both write ports hit the word, port 1's value wins;
* two write ports on one word in one cycle also set the sticky ``error`` flag (status register
  ``rf_error``, cleared by writing 1 to it, not by ``run`` going low).

Storage: one :class:`amaranth.lib.memory.Memory` per write port (one write port and
``output_ports`` asynchronous read ports each, which Yosys maps to distributed RAM, e.g. ECP5
TRELLIS_DPR16X4) and a live-value table (one flip-flop field per word: the last port that wrote
it) that picks, per read, the memory holding the word's live value. The configuration bus
(``cfg_*``) decodes :func:`~ubgen.mem.spec.rf_regmap` at offsets from 0.
"""
from __future__ import annotations

from types import SimpleNamespace

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..arch import MemParams, PUBParams, _clog2
from ..interconnect.mux import mux_tree
from ..pub.control import BlockConfig, add_controllers, connect_config
from ..regmap import CONFIG_DATA_WIDTH
from .spec import RF_ENABLE, RF_STATUS, rf_context_layouts, rf_regmap

__all__ = ["MemRegisterFile"]


class MemRegisterFile(wiring.Component):
    """Ports: ``we[P]``/``waddr[P]``/``data_in[P]`` (write ports), ``re[Q]``/``raddr[Q]``,
    ``data_out[Q]``/``valid_out[Q]`` (read ports), ``enabled`` (``rf_en``), ``error`` and the
    config bus ``cfg_addr``/``cfg_wdata``/``cfg_we``/``cfg_rdata``."""

    def __init__(self, params: PUBParams = PUBParams(), mem: MemParams = MemParams()):
        self.params, self.mem = params, mem
        self.regmap = rf_regmap(params, mem)
        w, aw = params.word_width, mem.rf_addr_width
        P, Q = params.input_ports, params.output_ports
        members = {
            "we": In(1).array(P), "waddr": In(aw).array(P), "data_in": In(w).array(P),
            "re": In(1).array(Q), "raddr": In(aw).array(Q),
            "data_out": Out(w).array(Q), "valid_out": Out(1).array(Q),
            "enabled": Out(1), "error": Out(1),
            "cfg_addr": In(self.regmap.addr_width), "cfg_wdata": In(CONFIG_DATA_WIDTH),
            "cfg_we": In(1), "cfg_rdata": Out(CONFIG_DATA_WIDTH),
        }
        self.contexts = rf_context_layouts(params, mem)
        if self.contexts:       # the own controllers' timing and the second write inputs
            members.update({"tick": In(1), "restart": In(1),
                            "cycle": In(params.controller.cycle_width),
                            "data_in_c1": In(w).array(P)})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        prm, n = self.params, self.mem.rf_words
        P, Q = prm.input_ports, prm.output_ports
        m.submodules.config = cfg = BlockConfig(self.regmap, RF_STATUS)
        connect_config(m, self, cfg)
        m.d.comb += self.enabled.eq(cfg.fields[RF_ENABLE])
        we, waddr, wdata, re, raddr, conflict = self._ports(m, cfg)

        # one memory per write port, each read by every read port
        reads = [[] for _ in range(Q)]
        for p in range(P):
            bank = m.submodules[f"bank_{p}"] = Memory(shape=prm.word_width, depth=n, init=[])
            wp = bank.write_port()
            m.d.comb += [wp.en.eq(we[p]), wp.addr.eq(waddr[p]), wp.data.eq(wdata[p])]
            for q in range(Q):
                rp = bank.read_port(domain="comb")
                m.d.comb += rp.addr.eq(raddr[q])
                reads[q].append(rp.data)

        # live-value table: which bank holds each word (later statements win: the highest port)
        lvt = [Signal(max(1, _clog2(P)), name=f"lvt_{i}") for i in range(n)]
        for i, entry in enumerate(lvt):
            for p in range(P):
                with m.If(we[p] & (waddr[p] == i)):
                    m.d.sync += entry.eq(p)

        for q in range(Q):
            live = mux_tree(raddr[q], lvt) if P > 1 else Const(0)
            value = mux_tree(live, reads[q]) if P > 1 else reads[q][0]
            for p in range(P):                  # write-through, the highest port outermost
                value = Mux(we[p] & (waddr[p] == raddr[q]), wdata[p], value)
            m.d.comb += [self.data_out[q].eq(value), self.valid_out[q].eq(re[q])]

        for i in range(P):
            for j in range(i + 1, P):
                conflict = conflict | (we[i] & we[j] & (waddr[i] == waddr[j]))
        error = Signal()
        with m.If(cfg.clear_out("rf_error")):
            m.d.sync += error.eq(0)
        with m.Elif(conflict):
            m.d.sync += error.eq(1)
        m.d.comb += [self.error.eq(error), cfg.status_in("rf_error").eq(error)]
        return m

    def _ports(self, m: Module, cfg: BlockConfig):
        """Each port's enable, word address and (write) data of the cycle: the borrowed
        controller's (context 0) or, with ``rf_contexts`` = 2, the own controller's when that
        fires (its write data from ``data_in_c1``); both contexts of a port firing in one cycle
        is a conflict."""
        P, Q = self.params.input_ports, self.params.output_ports
        we, waddr, wdata = list(self.we), list(self.waddr), list(self.data_in)
        re, raddr = list(self.re), list(self.raddr)
        conflict = Const(0)
        if not self.contexts:
            return we, waddr, wdata, re, raddr, conflict
        timing = SimpleNamespace(restart=self.restart, tick=self.tick, count=self.cycle)
        ctl, fire = add_controllers(m, self.contexts, cfg.fields, timing, enable=self.enabled)
        for p in range(P):
            f1, a1 = fire[f"rf_write_{p}_c1"], ctl[f"rf_write_{p}_c1"].addr("addr")
            conflict = conflict | (we[p] & f1)
            we[p], waddr[p], wdata[p] = (we[p] | f1, Mux(f1, a1, waddr[p]),
                                         Mux(f1, self.data_in_c1[p], wdata[p]))
        for q in range(Q):
            f1, a1 = fire[f"rf_read_{q}_c1"], ctl[f"rf_read_{q}_c1"].addr("addr")
            conflict = conflict | (re[q] & f1)
            re[q], raddr[q] = re[q] | f1, Mux(f1, a1, raddr[q])
        return we, waddr, wdata, re, raddr, conflict
