"""The processing element core (docs/design.md §5.2, thesis §7.1 / Fig. 7.2, paper Fig. 11).

A 16-bit ALU (:class:`~ubgen.pe.alu.ALU`) configured with one :class:`~ubgen.pe.ops.PEOp` per
application. Every data input (``data0..2``) and bit input (``bit0..2``) is either routed (from
its connection box) or a constant held in a configuration register. An optional output register
(``out_reg`` = 1) gives the PE latency 1 instead of 0; the scheduler reads that latency from
:meth:`PE.latency`. The output register and the COUNTER state freeze while ``stall`` is high;
the COUNTER state is 0 while ``run`` is low. With the STEP op the output register is the op's
state: it loads ``data2`` (``res_p`` = ``data2 == 0``) while ``run`` is low and the ALU's next
state otherwise (docs/pe.md). Configuration registers never stall.

Config port ``cfg``: the local register offset (``cfg_addr_width`` bits, default 16, decoded in
full so no offset outside :attr:`PE.regmap` aliases a register), ``wdata``, ``we`` and a
combinational ``rdata`` (0 for offsets that are not registers).
"""
from __future__ import annotations

from amaranth.hdl import Module, Signal, Mux
from amaranth.lib import wiring

from ..arch import Arch
from ..config import ConfigRegisters
from ..array.tilespec import TILE_ADDR_WIDTH
from ..core import core_members
from ..pub.control import CycleCounter
from ..regmap import RegisterMap
from .alu import ALU
from .spec import BIT_INPUTS, PE_PORTS, pe_regmap
from .ops import PEOp, WORD_BITS

__all__ = ["PE", "pe_regmap"]

class PE(wiring.Component):
    """One PE core: ALU + input constants + optional output register + COUNTER state.

    ``arch.array.pe_output_register`` (default True, or the ``output_register`` argument)
    includes the configurable output register in the hardware; without it the PE is always
    combinational (latency 0).
    """

    PORTS = PE_PORTS

    def __init__(self, arch: Arch | None = None, *, output_register: bool | None = None,
                 cfg_addr_width: int = TILE_ADDR_WIDTH,
                 without: frozenset[PEOp] | set[PEOp] = frozenset()):
        if output_register is None:
            output_register = arch.array.pe_output_register if arch is not None else True
        self.output_register = output_register
        self.without = frozenset(PEOp(op) for op in without)   # ops left out (ubgen.pe.alu)
        self._regmap = pe_regmap(output_register)
        super().__init__(core_members(self.PORTS, cfg_addr_width))

    @property
    def regmap(self) -> RegisterMap:
        return self._regmap

    @staticmethod
    def latency(config: dict[str, int]) -> int:
        """Cycles from inputs to ``res``/``res_p`` for a register configuration."""
        return int(config.get("out_reg", 0))

    def elaborate(self, platform):
        m = Module()
        m.submodules.regs = regs = ConfigRegisters(self.regmap, len(self.cfg.addr))
        wiring.connect(m, wiring.flipped(self.cfg), regs.bus)
        f = regs.fields
        m.submodules.alu = alu = ALU(without=self.without)

        def operand(name):
            return Mux(f[f"{name}_const_en"], f[f"{name}_const"], getattr(self, f"in_{name}"))

        m.d.comb += [
            alu.op.eq(f["op"]), alu.lut.eq(f["lut"]),
            alu.a.eq(operand("data0")), alu.b.eq(operand("data1")), alu.c.eq(operand("data2")),
        ]
        for i, name in enumerate(BIT_INPUTS):
            m.d.comb += alu.bits[i].eq(operand(name))

        # ``run`` matters only to the ops with state (COUNTER, STEP): any other PE, used or
        # not, does not see it, so ``run`` rising switches nothing in it (docs/energy.md "An
        # unused tile")
        m.submodules.timing = timing = CycleCounter(0)
        m.d.comb += [timing.run.eq(self.run), timing.stall.eq(self.stall),
                     timing.enable.eq((f["op"] == PEOp.COUNTER) | (f["op"] == PEOp.STEP))]

        # COUNTER state (ubgen.pe.ops): advances on unstalled running cycles with bit0 set.
        count = Signal(WORD_BITS)
        m.d.comb += alu.count.eq(count)
        with m.If(timing.restart):
            m.d.sync += count.eq(0)
        with m.Elif(timing.tick & (f["op"] == PEOp.COUNTER) & alu.bits[0]):
            m.d.sync += count.eq(Mux(alu.res_p, 0, count + 1))

        if self.output_register:
            res_q = Signal(WORD_BITS)
            res_p_q = Signal()
            m.d.comb += alu.acc.eq(res_q)
            with m.If(~self.stall):
                m.d.sync += [res_q.eq(alu.res), res_p_q.eq(alu.res_p)]
            if PEOp.STEP not in self.without:
                with m.If(timing.restart & (f["op"] == PEOp.STEP)):   # STEP: the state's reset
                    m.d.sync += [res_q.eq(alu.c), res_p_q.eq(alu.c == 0)]
            with m.If(f["out_reg"]):
                m.d.comb += [self.out_res.eq(res_q), self.out_res_p.eq(res_p_q)]
            with m.Else():
                m.d.comb += [self.out_res.eq(alu.res), self.out_res_p.eq(alu.res_p)]
        else:
            m.d.comb += [self.out_res.eq(alu.res), self.out_res_p.eq(alu.res_p)]
        return m
