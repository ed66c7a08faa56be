"""Pieces shared by the push-memory blocks (PUB and DP-SRAM + AG).

* :class:`CycleCounter`: the unstalled-cycle counter (docs/design.md §4, thesis §6.3 "static
  timing": a global clock that counts unstalled cycles after start): its ``tick`` and
  ``restart`` drive every controller (whose schedule generators count the same unstalled cycles
  down) and its count is the block's ``cycle_count``; its ``enable`` keeps ``run`` from a block
  that has nothing scheduled (:func:`controllers_scheduled`);
* :class:`BlockConfig`: the configuration bus of one block: the read/write registers of its
  :class:`~ubgen.regmap.RegisterMap` (through :class:`~ubgen.config.ConfigRegisters`), read-only
  status registers, write-1-to-clear strobes and the decode of one storage window;
* :func:`tile_match` and :func:`chain_output`: the chaining logic of paper Fig. 10;
* :func:`add_controllers` and :func:`connect_config`: the wiring every block repeats.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..config import ConfigRegisters
from ..controller_rtl import Controller
from ..regmap import RegisterMap, CONFIG_DATA_WIDTH
from ..arch import _clog2


class CycleCounter(wiring.Component):
    """Counts unstalled cycles while ``run`` is high.

    While ``run`` is low the count is 0 and ``restart`` is high (controllers return to their first
    fire); while ``run`` is high the count increments at the end of every cycle with ``stall`` low,
    and ``tick`` (= ``run & ~stall``) tells the controllers and datapath that the cycle counts.

    ``enable`` (default 1) gates ``run``: a block whose configuration schedules nothing in it
    (no configured controller, no state to keep) sees ``run`` low throughout, so its count
    holds 0, ``restart`` stays high and ``tick`` low, and the array's ``run`` rising at
    ``START`` switches nothing behind this counter (docs/energy.md "An unused tile"). A block
    with something scheduled sees ``run`` itself. ``width`` 0: no count at all, only ``tick``
    and ``restart`` (a block whose count nothing reads).
    """

    def __init__(self, width: int):
        super().__init__({"run": In(1), "stall": In(1), "enable": In(1, init=1),
                          "tick": Out(1), "restart": Out(1), "count": Out(width)})

    def elaborate(self, platform):
        m = Module()
        live = Signal()
        m.d.comb += [live.eq(self.run & self.enable),
                     self.tick.eq(live & ~self.stall), self.restart.eq(~live)]
        if len(self.count):     # written over restart/tick: ABC maps it to 93 gates (not 114)
            with m.If(self.restart):
                m.d.sync += self.count.eq(0)
            with m.Elif(self.tick):
                m.d.sync += self.count.eq(self.count + 1)
        return m


def controllers_scheduled(ctl: dict):
    """High when any of the controllers ``ctl`` (name -> :class:`~ubgen.controller_rtl.
    Controller`) is configured: a ``dim`` of 0 is done from its restart on and never fires."""
    return Cat(c.dim != 0 for c in ctl.values()).any()


class BlockConfig(wiring.Component):
    """The ``cfg_*`` bus of a block built from its register map.

    ``status`` names read-only registers of ``regmap`` (they must be its last registers); their
    values come in on ``status_<name>``; a bus write of a value with bit 0 set to a status register
    pulses ``clear_<name>`` (write-1-to-clear). The first window of the map, if any, is decoded:
    ``win_we`` pulses on a write inside it with ``win_addr`` the offset into the window.
    ``fields[name]`` holds each read/write register's value.
    """

    def __init__(self, regmap: RegisterMap, status: tuple[str, ...] = ()):
        self.regmap, self.status = regmap, tuple(status)
        tail = [r.name for r in regmap.registers[len(regmap.registers) - len(status):]]
        if sorted(tail) != sorted(status):
            raise ValueError(f"{regmap.block}: status registers {status} must come last")
        rw = RegisterMap(regmap.block, [r for r in regmap.registers if r.name not in status])
        self._rw = ConfigRegisters(rw, addr_width=regmap.addr_width)
        self.fields = self._rw.fields
        self.window = regmap.windows[0] if regmap.windows else None
        members = {"cfg_addr": In(regmap.addr_width), "cfg_wdata": In(CONFIG_DATA_WIDTH),
                   "cfg_we": In(1), "cfg_rdata": Out(CONFIG_DATA_WIDTH)}
        for name in status:
            members[f"status_{name}"] = In(regmap[name].width)
            members[f"clear_{name}"] = Out(1)
        if self.window:
            members["win_we"] = Out(1)
            members["win_addr"] = Out(_clog2(self.window.size))
        super().__init__(members)

    def status_in(self, name: str) -> Signal:
        return getattr(self, f"status_{name}")

    def clear_out(self, name: str) -> Signal:
        return getattr(self, f"clear_{name}")

    def elaborate(self, platform):
        m = Module()
        m.submodules.registers = rw = self._rw
        m.d.comb += [rw.bus.addr.eq(self.cfg_addr), rw.bus.wdata.eq(self.cfg_wdata),
                     rw.bus.we.eq(self.cfg_we)]
        with m.Switch(self.cfg_addr):
            for name in self.status:
                with m.Case(self.regmap[name].offset):
                    m.d.comb += [self.cfg_rdata.eq(self.status_in(name)),
                                 self.clear_out(name).eq(self.cfg_we & self.cfg_wdata[0])]
            with m.Default():
                m.d.comb += self.cfg_rdata.eq(rw.bus.rdata)
        if self.window:
            w = self.window
            inside = (self.cfg_addr >= w.offset) & (self.cfg_addr < w.offset + w.size)
            m.d.comb += [self.win_we.eq(self.cfg_we & inside),
                         self.win_addr.eq(self.cfg_addr - w.offset)]
        return m


def tile_match(addr, local_width: int, chain_en, tile_id):
    """Paper Fig. 10: an access belongs to this tile when chaining is off or the address bits
    above the local SRAM address equal the tile ID."""
    return ~chain_en | (addr[local_width:] == tile_id)


def chain_output(m: Module, *, chain_en, fire, owned, data, chain_in_data, chain_in_valid,
                 data_out, valid_out) -> None:
    """The chaining output mux (paper Fig. 10, thesis Fig. 6.1): a chained tile drives its own
    word when it fires and owns the data, otherwise it passes the chain input through."""
    own = fire & owned
    pass_through = chain_en & ~own
    m.d.comb += [
        data_out.eq(Mux(pass_through, chain_in_data, data)),
        valid_out.eq(Mux(pass_through, chain_in_valid, fire)),
    ]


def connect_config(m: Module, block, cfg: BlockConfig) -> None:
    """Wire a block's top-level ``cfg_*`` ports to its :class:`BlockConfig`."""
    m.d.comb += [cfg.cfg_addr.eq(block.cfg_addr), cfg.cfg_wdata.eq(block.cfg_wdata),
                 cfg.cfg_we.eq(block.cfg_we), block.cfg_rdata.eq(cfg.cfg_rdata)]


def add_controllers(m: Module, layouts: dict, fields: dict, counter: CycleCounter,
                    enable=1) -> tuple[dict, dict]:
    """Instantiate one :class:`~ubgen.controller_rtl.Controller` per layout, configured from
    ``fields`` and restarted and ticked by ``counter`` (an untimed layout's ``trigger`` is the
    caller's to drive). Returns ``(controllers, fires)``; a fire counts only while ``enable`` is high."""
    ctl, fire = {}, {}
    for name, layout in layouts.items():
        c = ctl[name] = Controller(layout)
        m.submodules[name] = c
        c.connect_registers(m, fields)
        m.d.comb += [c.restart.eq(counter.restart), c.tick.eq(counter.tick)]
        fire[name] = Signal(name=f"{name}_fire_en")
        m.d.comb += fire[name].eq(c.fire & enable)
    return ctl, fire
