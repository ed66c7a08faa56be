"""The configuration register file of one block, built from its :class:`RegisterMap`."""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

from amaranth.hdl import Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .interconnect.mux import mux_tree
from .regmap import RegisterMap, CONFIG_DATA_WIDTH

__all__ = ["config_bus_signature", "ConfigRegisters", "FoldedValues", "folded_registers"]


class FoldedValues:
    """Register values folded into constants (:func:`folded_registers`): ``values`` by register
    name; ``used`` collects the names the registers built in the scope took, so the caller can
    check that every value reached a register (a name no register has is a mismatch between
    the values and the design)."""

    def __init__(self, values: dict[str, int]):
        self.values = dict(values)
        self.used: set[str] = set()

    def unused(self) -> list[str]:
        return sorted(set(self.values) - self.used)


_FOLD: ContextVar[FoldedValues | None] = ContextVar("ubgen_config_fold", default=None)


@contextmanager
def folded_registers(values: dict[str, int]):
    """Elaborate every :class:`ConfigRegisters` in this scope with its registers folded
    into constants: a register named in ``values`` is that value, every other one its reset
    value (the state a configured block holds after reset and its configuration writes);
    bus writes change nothing. Register names are unique within a tile (the tile's register
    map checks it), so one scope per tile module folds one tile's configuration
    (:mod:`ubgen.fpga.fold`). Yields the :class:`FoldedValues` (``unused()`` after the build).
    """
    fold = FoldedValues(values)
    token = _FOLD.set(fold)
    try:
        yield fold
    finally:
        _FOLD.reset(token)


def config_bus_signature(addr_width: int) -> wiring.Signature:
    """A simple synchronous config bus: write when ``we``; ``rdata`` is combinational."""
    return wiring.Signature({
        "addr": Out(addr_width), "wdata": Out(CONFIG_DATA_WIDTH), "we": Out(1),
        "rdata": In(CONFIG_DATA_WIDTH),
    })


class ConfigRegisters(wiring.Component):
    """Registers of a :class:`RegisterMap` on a config bus, with read-back.

    ``fields[name]`` is the register's value. A write (``we``) to a register's offset loads
    ``wdata`` (truncated to the register's width). ``rdata`` is the register at ``addr``
    (zero-extended), 0 for every other address: the whole address is decoded. The map's windows
    are not decoded here (their owner does, e.g. :class:`ubgen.pub.control.BlockConfig`).

    The read-back is a :func:`~ubgen.interconnect.mux.mux_tree` over the offsets (one balanced
    tree of 2:1 muxes on the address bits that span them, 0 when a higher bit is set); a
    ``Switch`` over the offsets (a Yosys ``$pmux``) mapped to 1.5x (PUB) to 2.2x (IO core) the
    ECP5 LUT4s (docs/fpga.md "The configuration registers").

    Elaborated inside :func:`folded_registers`, every register is a constant (``folded`` then
    holds the values): the value given there, else its reset value; writes change nothing, the read-back
    returns the constants.
    """

    def __init__(self, regmap: RegisterMap, addr_width: int | None = None):
        self.regmap = regmap
        self._addr_width = addr_width or regmap.addr_width
        super().__init__({"bus": In(config_bus_signature(self._addr_width))})
        self.fields = {r.name: Signal(r.width, name=r.name, init=r.reset)
                       for r in regmap.registers}
        self.folded: dict[str, int] | None = None

    def _fold(self) -> dict[str, int] | None:
        """The constants of the enclosing :func:`folded_registers` scope, if any."""
        fold = _FOLD.get()
        if fold is None:
            return None
        folded = {}
        for r in self.regmap.registers:
            value = fold.values.get(r.name, r.reset)
            if not 0 <= value < 1 << r.width:
                raise ValueError(f"{self.regmap.block}: folded value {value} does not fit "
                                 f"register {r.name} ({r.width} bits)")
            folded[r.name] = value
            fold.used.add(r.name)
        return folded

    def elaborate(self, platform):
        m = Module()
        self.folded = self._fold()
        addr = self.bus.addr
        # registers at offsets the address cannot express are never read nor written
        reachable = [r for r in self.regmap.registers if r.offset < 1 << len(addr)]
        if reachable:
            slots: list = [None] * (max(r.offset for r in reachable) + 1)
            for r in reachable:
                slots[r.offset] = self.fields[r.name]
            m.d.comb += self.bus.rdata.eq(mux_tree(addr, slots))
        if self.folded is not None:
            for name, value in self.folded.items():
                m.d.comb += self.fields[name].eq(Const(value, len(self.fields[name])))
            return m
        # One decode per register (not one process over a shared switch): keeps the generated
        # Verilog linear in the number of registers.
        for r in self.regmap.registers:
            with m.If(self.bus.we & (addr == r.offset)):
                m.d.sync += self.fields[r.name].eq(self.bus.wdata)
        return m
