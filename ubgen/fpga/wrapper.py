"""The wrapper that puts a design on an FPGA package's pins (docs/fpga.md): fast ports on pins
behind one register stage, everything else on a scan chain, so synthesis removes nothing."""
from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .common import FPGAError

__all__ = ["FPGAWrapper"]


def _leaf_name(path) -> str:
    head, *rest = path
    return str(head) + "".join(f"[{p}]" for p in rest)


def _leaves(design: wiring.Component):
    """``(name, is_input, value)`` for every port bit-vector of the design."""
    for path, member, value in design.signature.flatten(design):
        yield _leaf_name(path), member.flow == In, Value.cast(value)


class FPGAWrapper(wiring.Component):
    """Fit a design's ports onto an FPGA package while keeping all of its logic observable.

    Ports (the same for every design, so one pin file per package serves all):
      ``pin_in``/``pin_out``  the design ports named in ``pins``, one register stage each way;
      ``scan_in``, ``scan_out``  serial data of a shift register over all other design ports;
      ``scan_shift``  shift the chain by one (``scan_in`` enters at the top, bit 0 leaves);
      ``scan_update`` copy the chain into the registers that drive the design's scan inputs
                      (they hold until the next update, so a held ``cfg_we`` repeats the same
                      write, which is harmless for configuration registers);
      ``scan_capture`` load the design's scan outputs into the chain.
    """

    def __init__(self, design: wiring.Component, pins: tuple[str, ...] = ()):
        self.design = design
        ports = list(_leaves(design))
        names = {n.split("[")[0] for n, _, _ in ports}
        missing = [p for p in pins if p not in names]
        if missing:
            self._MustUse__silence = True     # never built: no "unused elaboratable" warning
            raise FPGAError(f"{type(design).__name__} has no port(s) {', '.join(missing)} "
                            f"(ports: {', '.join(sorted(names))})")

        def on_pin(name):
            return name.split("[")[0] in pins
        self.pin_inputs = [(n, v) for n, i, v in ports if i and on_pin(n)]
        self.pin_outputs = [(n, v) for n, i, v in ports if not i and on_pin(n)]
        self.scan_inputs = [(n, v) for n, i, v in ports if i and not on_pin(n)]
        self.scan_outputs = [(n, v) for n, i, v in ports if not i and not on_pin(n)]
        width = lambda lst: sum(len(v) for _, v in lst)
        self.n_pin_in, self.n_pin_out = width(self.pin_inputs), width(self.pin_outputs)
        self.n_scan_in, self.n_scan_out = width(self.scan_inputs), width(self.scan_outputs)
        self.chain_length = max(1, self.n_scan_in, self.n_scan_out)
        members = {"scan_in": In(1), "scan_shift": In(1), "scan_update": In(1),
                   "scan_capture": In(1), "scan_out": Out(1)}
        if self.n_pin_in:
            members["pin_in"] = In(self.n_pin_in)
        if self.n_pin_out:
            members["pin_out"] = Out(self.n_pin_out)
        super().__init__(members)

    @property
    def overhead_ffs(self) -> int:
        """Flip-flops the wrapper adds around the design."""
        return self.n_pin_in + self.n_pin_out + self.chain_length + self.n_scan_in

    def port_map(self) -> dict[str, str]:
        """Which wrapper bits carry which design port (for report.json)."""
        out = {}
        for bus, lst in (("pin_in", self.pin_inputs), ("pin_out", self.pin_outputs),
                         ("scan_hold", self.scan_inputs), ("scan_capture", self.scan_outputs)):
            lo = 0
            for name, v in lst:
                out[name] = f"{bus}[{lo + len(v) - 1}:{lo}]"
                lo += len(v)
        return out

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = self.design
        if self.n_pin_in:
            pin_in_q = Signal(self.n_pin_in)
            m.d.sync += pin_in_q.eq(self.pin_in)
            m.d.comb += Cat(v for _, v in self.pin_inputs).eq(pin_in_q)
        if self.n_pin_out:
            m.d.sync += self.pin_out.eq(Cat(v for _, v in self.pin_outputs))

        chain = Signal(self.chain_length)
        with m.If(self.scan_shift):
            m.d.sync += chain.eq(Cat(chain[1:], self.scan_in))
        with m.Elif(self.scan_capture):
            if self.n_scan_out:
                m.d.sync += chain[:self.n_scan_out].eq(Cat(v for _, v in self.scan_outputs))
        m.d.comb += self.scan_out.eq(chain[0])
        if self.n_scan_in:
            hold = Signal(self.n_scan_in)
            with m.If(self.scan_update):
                m.d.sync += hold.eq(chain[:self.n_scan_in])
            m.d.comb += Cat(v for _, v in self.scan_inputs).eq(hold)
        return m
