"""The configuration register file of one block, built from its :class:`RegisterMap`."""
from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .regmap import RegisterMap, CONFIG_DATA_WIDTH


def config_bus_signature(addr_width: int) -> wiring.Signature:
    """A simple synchronous config bus: write when ``we``; ``rdata`` is combinational."""
    return wiring.Signature({
        "addr": Out(addr_width), "wdata": Out(CONFIG_DATA_WIDTH), "we": Out(1),
        "rdata": In(CONFIG_DATA_WIDTH),
    })


class ConfigRegisters(wiring.Component):
    """Registers of a :class:`RegisterMap` on a config bus, with read-back.

    ``fields[name]`` is the register's value. Addresses inside a window are not decoded here:
    ``in_window`` tells the owner which window (if any) the bus addresses.
    """

    def __init__(self, regmap: RegisterMap, addr_width: int | None = None):
        self.regmap = regmap
        self._addr_width = addr_width or regmap.addr_width
        super().__init__({"bus": In(config_bus_signature(self._addr_width))})
        self.fields = {r.name: Signal(r.width, name=r.name, init=r.reset)
                       for r in regmap.registers}

    def elaborate(self, platform):
        m = Module()
        with m.Switch(self.bus.addr):
            for r in self.regmap.registers:
                with m.Case(r.offset):
                    m.d.comb += self.bus.rdata.eq(self.fields[r.name])
        # One decode per register (not one process over a shared switch): keeps the generated
        # Verilog linear in the number of registers.
        for r in self.regmap.registers:
            with m.If(self.bus.we & (self.bus.addr == r.offset)):
                m.d.sync += self.fields[r.name].eq(self.bus.wdata)
        return m
