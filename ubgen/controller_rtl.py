"""The controller's hardware: one IterationDomain + ScheduleGenerator + AddressGenerators in
recurrence form (thesis §6.1.2, Fig. 6.2b; docs/design.md §4), configured by the registers that
:func:`ubgen.controller.encode_controller` computes."""
from __future__ import annotations

from amaranth.hdl import Module, Signal, Array
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .controller import ControllerLayout

__all__ = ["Controller"]


class Controller(wiring.Component):
    """One ID + SG + AGs in recurrence form (thesis Fig. 6.2b), driven by configuration signals.

    Ports:
      ``restart``  while high, the state returns to the first fire (used while not running);
      ``tick``     the unstalled-cycle counter advances this cycle (run and not stall);
      ``trigger``  untimed layouts only (``layout.timed`` False, no schedule generator): the
                   block's request to fire this cycle;
      ``fire``     the stream fires this cycle: ``tick``, not done, and the scheduled time
                   reached (timed) or ``trigger`` (untimed);
      ``done``     the iteration domain is exhausted;
      ``last0``    level 0 is at its last iteration (the current fire ends a level-0 loop);
      ``addr``     one output per registered address generator (``layout.registered``): the
                   address of the current (or next) fire.
    Configuration inputs use the register names of :meth:`ControllerLayout.add_registers`
    without the controller prefix: ``dim``, ``extent_m1`` (array), ``cycle_start``,
    ``cycle_delta`` (array), ``<ag>_start``, ``<ag>_delta`` (array).

    The schedule generator counts down instead of comparing with the block's cycle counter: a
    register holds the unstalled cycles left until the next fire (``cycle_start`` on restart,
    ``cycle_delta[L] - 1`` after a fire, minus one on every other unstalled cycle before done)
    and the
    controller fires when it is 0 (docs/controllers.md "Hardware behaviour"): one decrementer
    and a zero test instead of an adder and a comparator. The fires are those of the affine
    schedule, so no register means anything else.
    """

    def __init__(self, layout: ControllerLayout):
        self.layout = layout
        p = layout.params
        members = {
            "restart": In(1), "tick": In(1),
            "fire": Out(1), "done": Out(1), "last0": Out(1),
            "dim": In(range(p.max_dims + 1)),
            "extent_m1": In(p.extent_width).array(p.max_dims),
        }
        if layout.timed:
            members.update({"cycle_start": In(p.cycle_width),
                            "cycle_delta": In(p.cycle_width).array(p.max_dims)})
        else:
            members["trigger"] = In(1)
        for ag, w in layout.registered.items():
            members[f"{ag}_start"] = In(w)
            members[f"{ag}_delta"] = In(w).array(p.max_dims)
            members[f"{ag}_addr"] = Out(w)
        super().__init__(members)

    def addr(self, ag: str) -> Signal:
        return getattr(self, f"{ag}_addr")

    def connect_registers(self, m: Module, fields: dict[str, Signal]) -> None:
        """Drive this controller's configuration inputs from a register file's fields."""
        p, n = self.layout.params, self.layout.name
        m.d.comb += self.dim.eq(fields[f"{n}_dim"])
        for d in range(p.max_dims):
            m.d.comb += self.extent_m1[d].eq(fields[f"{n}_extent_m1_{d}"])
        if self.layout.timed:
            m.d.comb += self.cycle_start.eq(fields[f"{n}_cycle_start"])
            for d in range(p.max_dims):
                m.d.comb += self.cycle_delta[d].eq(fields[f"{n}_cycle_delta_{d}"])
        for ag in self.layout.registered:
            m.d.comb += getattr(self, f"{ag}_start").eq(fields[f"{n}_{ag}_start"])
            for d in range(p.max_dims):
                m.d.comb += getattr(self, f"{ag}_delta")[d].eq(fields[f"{n}_{ag}_delta_{d}"])

    def elaborate(self, platform):
        m = Module()
        p = self.layout.params
        D = p.max_dims

        count = Array(Signal(p.extent_width, name=f"count_{d}") for d in range(D))
        done = Signal(init=1)
        addrs = {ag: getattr(self, f"{ag}_addr") for ag in self.layout.registered}

        # at_last[d]: level d is at its last value (or inactive, d >= dim).
        at_last = Signal(D)
        for d in range(D):
            m.d.comb += at_last[d].eq((count[d] == 0) | (d >= self.dim))
        # One-hot of the stepping level L: the innermost level not at its last value.
        step = Signal(D)
        m.d.comb += step.eq(~at_last & (at_last + 1))
        exhausted = at_last.all()

        if self.layout.timed:
            # cycles until the next fire, counted down on every unstalled cycle
            wait = Signal(p.cycle_width)
            due = wait == 0
        else:
            due = self.trigger
        m.d.comb += [
            self.fire.eq(self.tick & ~done & due),
            self.done.eq(done),
            self.last0.eq(at_last[0]),
        ]

        def select(deltas, width):
            sel = Signal(width)
            for d in range(D):
                with m.If(step[d]):
                    m.d.comb += sel.eq(deltas[d])
            return sel

        with m.If(self.restart):
            m.d.sync += done.eq(self.dim == 0)
            if self.layout.timed:
                m.d.sync += wait.eq(self.cycle_start)
            for d in range(D):
                m.d.sync += count[d].eq(self.extent_m1[d])
            for ag, a in addrs.items():
                m.d.sync += a.eq(getattr(self, f"{ag}_start"))
        if self.layout.timed:
            # not once done: the count matters only for a fire, which done rules out until the
            # next restart, and an idle controller (done, or never configured: dim 0) then
            # switches nothing (docs/energy.md "An unused tile")
            with m.Elif(self.tick & ~self.fire & ~done):
                m.d.sync += wait.eq(wait - 1)
        with m.Elif(self.fire):
            with m.If(exhausted):
                m.d.sync += done.eq(1)
            with m.Else():
                for d in range(D):
                    with m.If(step[d]):
                        m.d.sync += count[d].eq(count[d] - 1)
                    with m.Elif(step[d + 1:].any() if d + 1 < D else 0):
                        m.d.sync += count[d].eq(self.extent_m1[d])
                if self.layout.timed:
                    m.d.sync += wait.eq(select(self.cycle_delta, p.cycle_width) - 1)
                for ag, a in addrs.items():
                    m.d.sync += a.eq(a + select(getattr(self, f"{ag}_delta"), len(a)))
        return m
