"""Test-only wrapper: ``n`` PUBs chained into one logical buffer (paper Fig. 10, §V-C).

The tiles are instances of the generated ``pub`` Verilog module (``ubgen verilog`` output for
the same parameters), so the simulator compiles the PUB once however many tiles there are.
Every tile sees the same ``run``/``stall``/``data_in``; tile i's ``chain_in`` is tile i-1's
output (tile 0's is idle) and the last tile's output is the wrapper's. ``cfg_tile`` selects
which tile the configuration bus reaches; ``error`` is the OR of the tiles' flags.
"""
from __future__ import annotations

import itertools

from amaranth.hdl import ClockSignal, Instance, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ubgen.arch import PUBParams, _clog2
from ubgen.pub import PhysicalUnifiedBuffer
from ubgen.regmap import CONFIG_DATA_WIDTH


class ChainedPUBs(wiring.Component):
    def __init__(self, params: PUBParams, n: int = 2, module: str = "pub"):
        self.params, self.n, self.module = params, n, module
        self.tile_sig = PhysicalUnifiedBuffer.signature_for(params)
        w, P, Q = params.word_width, params.input_ports, params.output_ports
        super().__init__({
            "run": In(1), "stall": In(1), "data_in": In(w).array(P),
            "data_out": Out(w).array(Q), "valid_out": Out(1).array(Q),
            "cycle_count": Out(params.controller.cycle_width), "error": Out(1),
            "cfg_tile": In(_clog2(n)), "cfg_addr": In(self.tile_sig.members["cfg_addr"].shape),
            "cfg_wdata": In(CONFIG_DATA_WIDTH), "cfg_we": In(1),
            "cfg_rdata": Out(CONFIG_DATA_WIDTH),
        })

    def _tile(self, m: Module, i: int):
        """Instantiate tile ``i``; returns its ports as ``{verilog port name: Signal}``."""
        ports, args = {}, {"i_clk": ClockSignal(), "i_rst": ResetSignal()}
        for path, member in self.tile_sig.members.flatten():
            for index in itertools.product(*(range(d) for d in member.dimensions)):
                name = "__".join(str(part) for part in path + index)   # Amaranth's port names
                ports[name] = sig = Signal(member.shape, name=f"tile_{i}_{name}")
                args[("i_" if member.flow == In else "o_") + name] = sig
        m.submodules[f"tile_{i}"] = Instance(self.module, **args)
        return ports

    def elaborate(self, platform):
        m = Module()
        prm = self.params
        tiles = [self._tile(m, i) for i in range(self.n)]
        errors = Signal(self.n)
        for i, t in enumerate(tiles):
            m.d.comb += [t["run"].eq(self.run), t["stall"].eq(self.stall),
                         t["cfg_addr"].eq(self.cfg_addr), t["cfg_wdata"].eq(self.cfg_wdata),
                         t["cfg_we"].eq(self.cfg_we & (self.cfg_tile == i)),
                         errors[i].eq(t["error"])]
            for p in range(prm.input_ports):
                m.d.comb += t[f"data_in__{p}"].eq(self.data_in[p])
            for q in range(prm.output_ports):
                if i:
                    m.d.comb += [t[f"chain_in_data__{q}"].eq(tiles[i - 1][f"data_out__{q}"]),
                                 t[f"chain_in_valid__{q}"].eq(tiles[i - 1][f"valid_out__{q}"])]
            with m.If(self.cfg_tile == i):
                m.d.comb += self.cfg_rdata.eq(t["cfg_rdata"])
        for q in range(prm.output_ports):
            m.d.comb += [self.data_out[q].eq(tiles[-1][f"data_out__{q}"]),
                         self.valid_out[q].eq(tiles[-1][f"valid_out__{q}"])]
        m.d.comb += [self.cycle_count.eq(tiles[0]["cycle_count"]), self.error.eq(errors.any())]
        return m
