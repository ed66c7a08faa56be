"""An application's FPGA design, built from its plain-data description (docs/fpga.md
"Applications on the FPGA"; thesis Table 6.1 "BRAM + LUTs", §6.3).

:class:`AppDesign` takes the dictionary the compiler's FPGA backend writes (format
:data:`FORMAT`; the node kinds and their parameters are listed in the compiler's description
module, ``compiler/fpga/design.py``) and nothing else: this module imports nothing of the
compiler (docs/design.md §2). It builds

* one unstalled-cycle counter (:class:`ubgen.pub.control.CycleCounter`) and, per stream, one of
  ubgen's recurrence controllers (:class:`ubgen.controller_rtl.Controller`, thesis §6.1.2)
  sized exactly for its stream, its configuration registers folded into constants;
* per ``pe`` node its one operation (:func:`ubgen.pe.alu.op_result`, the PE's ALU semantics),
  constants folded, registered when the node is; per ``rom`` node a ROM;
* per ``ram`` node memories of one write and one read port each (block RAM when Yosys maps
  them so), a copy per read stream, one port shared by streams the description says never fire
  together; write streams that do fire together each write their own copies, tagged with the
  cycle (:meth:`AppDesign._ram`); per ``regfile`` node registers with write-through reads;
* per edge a chain of ``latency`` registers (one chain per source port, tapped at each sink's
  latency, as a shift register shares its stages);
* the host ports: per ``in`` node ``in<k>_data`` (the host's current word) and ``in<k>_take``
  (the design takes it this cycle); per ``out`` node ``out<k>_data`` / ``out<k>_valid`` (one
  cycle after the fire); ``run`` (high while running; low restarts every controller),
  ``cycle`` (the counter), ``last_write`` (the counter in the cycle of the last output fire),
  ``writes`` (output fires so far) and ``done`` (every output stream finished).
"""
from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..arch import WORD_WIDTH, ControllerParams
from ..controller import ControllerLayout
from ..controller_rtl import Controller
from ..pe.ops import PEOp
from ..pe.alu import op_result
from ..pub.control import CycleCounter

__all__ = ["AppDesign", "FORMAT", "AppDesignError", "app_pins", "check_description"]

FORMAT = "ubgen-fpga-app/1"
KINDS = ("pe", "rom", "ram", "regfile", "timer", "in", "out")
WRITES_WIDTH = 32


class AppDesignError(ValueError):
    """The description is not one this builder understands (one line)."""


def check_description(desc: dict) -> None:
    """Raise :class:`AppDesignError` unless ``desc`` is a description this module builds."""
    if not isinstance(desc, dict) or desc.get("format") != FORMAT:
        got = desc.get("format") if isinstance(desc, dict) else type(desc).__name__
        raise AppDesignError(f"not an application FPGA design (format {got!r}, expected "
                             f"{FORMAT!r})")
    for n in desc["nodes"]:
        if n["kind"] not in KINDS:
            raise AppDesignError(f"node {n['id']}: unknown kind {n['kind']!r}")
    outputs = {n["id"]: _outputs(n) for n in desc["nodes"]}
    for e in desc["edges"]:
        if e["src"] not in outputs or e["dst"] not in outputs:
            raise AppDesignError(f"edge {e['src']}.{e['src_port']} -> {e['dst']}.{e['dst_port']}"
                                 f" names an unknown node")
        if e["src_port"] not in outputs[e["src"]]:
            raise AppDesignError(f"{e['src']}.{e['src_port']} is read but its node has no "
                                 f"such output")
        if e["latency"] < 0 or e["width"] not in (1, WORD_WIDTH):
            raise AppDesignError(f"edge {e['src']}.{e['src_port']} -> {e['dst']}."
                                 f"{e['dst_port']}: latency {e['latency']}, width {e['width']}")


def _outputs(node: dict) -> set[str]:
    """The output ports of a node of the description."""
    kind, p = node["kind"], node["params"]
    if kind in ("ram", "regfile"):
        return {f"{w}{q}" for q in range(len(p["reads"])) for w in ("data_out", "valid_out")}
    return {"pe": {"res", "res_p"}, "rom": {"data_out0"}, "timer": {"valid"},
            "in": {"data"}, "out": set()}[kind]


def app_pins(desc: dict, pin_bits: int = 40) -> tuple[str, ...]:
    """The ports that go on package pins for the FPGA flow (``run`` and the streams, in order,
    while ``pin_bits`` input and output bits last); the rest ride the wrapper's scan chain."""
    pins, bits_in, bits_out = ["run"], 1, 0
    ins = sum(n["kind"] == "in" for n in desc["nodes"])
    outs = sum(n["kind"] == "out" for n in desc["nodes"])
    for k in range(max(ins, outs)):
        if k < ins and bits_in + WORD_WIDTH <= pin_bits and bits_out + 1 <= pin_bits:
            pins += [f"in{k}_data", f"in{k}_take"]
            bits_in += WORD_WIDTH
            bits_out += 1
        if k < outs and bits_out + WORD_WIDTH + 1 <= pin_bits:
            pins += [f"out{k}_data", f"out{k}_valid"]
            bits_out += WORD_WIDTH + 1
    return tuple(pins)


class AppDesign(wiring.Component):
    """The hardware of one application's FPGA design description (module docstring)."""

    def __init__(self, desc: dict):
        try:
            check_description(desc)
        except AppDesignError:
            self._MustUse__silence = True     # never built: no "unused elaboratable" warning
            raise
        self.desc = desc
        self.cycle_width = int(desc["cycle_width"])
        self.ins = [n for n in desc["nodes"] if n["kind"] == "in"]
        self.outs = [n for n in desc["nodes"] if n["kind"] == "out"]
        members = {"run": In(1), "cycle": Out(self.cycle_width),
                   "last_write": Out(self.cycle_width), "writes": Out(WRITES_WIDTH),
                   "done": Out(1)}
        for k in range(len(self.ins)):
            members[f"in{k}_data"] = In(WORD_WIDTH)
            members[f"in{k}_take"] = Out(1)
        for k in range(len(self.outs)):
            members[f"out{k}_data"] = Out(WORD_WIDTH)
            members[f"out{k}_valid"] = Out(1)
        super().__init__(members)

    # --- helpers ----------------------------------------------------------------------------
    def _controller(self, m: Module, spec: dict, name: str) -> Controller:
        layout = ControllerLayout(spec["name"], dict(spec["addr_widths"]),
                                  ControllerParams(int(spec["max_dims"]),
                                                   int(spec["extent_width"]),
                                                   int(spec["cycle_width"])))
        ctl = Controller(layout)
        m.submodules[name] = ctl
        regs = spec["registers"]
        fields = {}
        for reg, value in regs.items():
            fields[reg] = Const(int(value), max(1, int(value).bit_length()))
        ctl.connect_registers(m, fields)
        m.d.comb += [ctl.restart.eq(self._counter.restart), ctl.tick.eq(self._counter.tick)]
        return ctl

    def _port(self, node: str, port: str, width: int, drive: bool = True) -> Signal:
        """The signal of output ``port`` of ``node`` (``drive``: the caller drives it)."""
        key = (node, port)
        if drive:
            self._made.add(key)
        if key not in self._outs:
            self._outs[key] = Signal(width, name=_ident(f"{node}_{port}"))
        return self._outs[key]

    def _inp(self, node: str, port: str, width: int):
        """The value at input ``port`` of ``node`` (its edge, delayed), or 0."""
        v = self._ins.get((node, port))
        return v if v is not None else Const(0, width)

    # --- nodes ------------------------------------------------------------------------------
    def _pe(self, m: Module, n: dict) -> None:
        p, name = n["params"], n["id"]
        op = PEOp[p["op"]]
        consts = p.get("consts", {})

        def operand(port, width):
            if port in consts:
                return Const(int(consts[port]), width)
            return self._inp(name, port, width)
        a, b, c = (operand(f"data{i}", WORD_WIDTH) for i in range(3))
        bits = Cat(*(operand(f"bit{i}", 1) for i in range(3)))
        res, res_p = op_result(op, a, b, c, bits)
        out, out_p = self._port(name, "res", WORD_WIDTH), self._port(name, "res_p", 1)
        dom = m.d.sync if p.get("out_reg") else m.d.comb
        dom += [out.eq(res), out_p.eq(res_p)]

    def _rom(self, m: Module, n: dict) -> None:
        table = [int(w) for w in n["params"]["table"]]
        name = _ident(n["id"])
        mem = Memory(shape=WORD_WIDTH, depth=len(table), init=table)
        m.submodules[f"{name}_rom"] = mem
        rd = mem.read_port(domain="sync")
        idx = self._inp(n["id"], "data_in0", WORD_WIDTH)
        inside = Signal()
        m.d.comb += rd.addr.eq(idx)
        m.d.sync += inside.eq(idx < len(table))
        m.d.comb += self._port(n["id"], "data_out0", WORD_WIDTH).eq(Mux(inside, rd.data, 0))

    def _ram(self, m: Module, n: dict) -> None:
        """One memory per write port and read port (one write and one read port each, what a
        block RAM has). With one write port, the read ports' copies hold the same words. With
        several (write streams that fire in the same cycle: an accumulator's initialisation
        and update), each write port has its own copies and every word carries the cycle of its
        write plus one (0: never written); a read takes the word with the latest tag, the last
        write of the address (a live-value table kept in the memories themselves)."""
        p, node = n["params"], n["id"]
        name = _ident(node)
        depth = int(p["words"])
        wr = [self._controller(m, c, f"{name}_wr{i}") for i, c in enumerate(p["writes"])]
        rd = [self._controller(m, c, f"{name}_rd{i}") for i, c in enumerate(p["reads"])]
        data = [self._inp(node, f"data_in{i}", WORD_WIDTH) for i in range(len(wr))]
        wgroups = [list(range(len(wr)))] if p.get("share_write") else [[i] for i in range(len(wr))]
        rgroups = [list(range(len(rd)))] if p.get("share_read") else [[i] for i in range(len(rd))]
        tagged = len(wgroups) > 1
        tag = self._counter.count + 1
        width = WORD_WIDTH + (len(tag) if tagged else 0)
        writes = []
        for g in wgroups:
            word = _pick([(wr[i].fire, data[i]) for i in g])
            writes.append((Cat(*(wr[i].fire for i in g)).any(),
                           _pick([(wr[i].fire, wr[i].addr("addr")) for i in g]),
                           Cat(word, tag) if tagged else word))
        for r, g in enumerate(rgroups):
            en = Cat(*(rd[i].fire for i in g)).any()
            addr = _pick([(rd[i].fire, rd[i].addr("addr")) for i in g])
            words = []
            for w, (wen, waddr, wdata) in enumerate(writes):
                mem = Memory(shape=width, depth=depth, init=[])
                m.submodules[f"{name}_mem_w{w}_r{r}"] = mem
                port = mem.write_port()
                m.d.comb += [port.en.eq(wen), port.addr.eq(waddr), port.data.eq(wdata)]
                port = mem.read_port(domain="sync")
                m.d.comb += [port.en.eq(en), port.addr.eq(addr)]
                words.append(port.data)
            best = words[0]
            for other in words[1:]:
                best = Mux(other[WORD_WIDTH:] > best[WORD_WIDTH:], other, best)
            for i in g:
                m.d.comb += self._port(node, f"data_out{i}", WORD_WIDTH).eq(best[:WORD_WIDTH])
                m.d.sync += self._port(node, f"valid_out{i}", 1).eq(rd[i].fire)

    def _regfile(self, m: Module, n: dict) -> None:
        p, node = n["params"], n["id"]
        name = _ident(node)
        regs = Array(Signal(WORD_WIDTH, name=f"{name}_r{i}") for i in range(int(p["words"])))
        wr = [self._controller(m, c, f"{name}_wr{i}") for i, c in enumerate(p["writes"])]
        rd = [self._controller(m, c, f"{name}_rd{i}") for i, c in enumerate(p["reads"])]
        data = [self._inp(node, f"data_in{i}", WORD_WIDTH) for i in range(len(wr))]
        for c, d in zip(wr, data):
            with m.If(c.fire):
                m.d.sync += regs[c.addr("addr")].eq(d)
        for q, c in enumerate(rd):
            a = c.addr("addr")
            value = regs[a]
            for w, d in zip(wr, data):          # write-through: a read sees its cycle's write
                value = Mux(w.fire & (w.addr("addr") == a), d, value)
            m.d.comb += [self._port(node, f"data_out{q}", WORD_WIDTH).eq(value),
                         self._port(node, f"valid_out{q}", 1).eq(c.fire)]

    def _timer(self, m: Module, n: dict) -> None:
        ctl = self._controller(m, n["params"]["controller"], _ident(n["id"]))
        m.d.comb += self._port(n["id"], "valid", 1).eq(ctl.fire)

    def _in(self, m: Module, n: dict, k: int) -> None:
        ctl = self._controller(m, n["params"]["controller"], f"in{k}_ctl")
        word = self._port(n["id"], "data", WORD_WIDTH)
        m.d.comb += getattr(self, f"in{k}_take").eq(ctl.fire)
        with m.If(ctl.fire):
            m.d.sync += word.eq(getattr(self, f"in{k}_data"))

    def _out(self, m: Module, n: dict, k: int):
        ctl = self._controller(m, n["params"]["controller"], f"out{k}_ctl")
        m.d.sync += [getattr(self, f"out{k}_valid").eq(ctl.fire),
                     getattr(self, f"out{k}_data").eq(self._inp(n["id"], "data", WORD_WIDTH))]
        return ctl

    # --- the design -------------------------------------------------------------------------
    def elaborate(self, platform):
        m = Module()
        m.submodules.counter = cnt = CycleCounter(self.cycle_width)
        self._counter = cnt
        m.d.comb += [cnt.run.eq(self.run), cnt.stall.eq(0), self.cycle.eq(cnt.count)]
        self._outs: dict[tuple[str, str], Signal] = {}
        self._made: set[tuple[str, str]] = set()
        self._ins: dict[tuple[str, str], object] = {}
        self._delays(m)
        builders = {"pe": self._pe, "rom": self._rom, "ram": self._ram,
                    "regfile": self._regfile, "timer": self._timer}
        outs = []
        for n in self.desc["nodes"]:
            if n["kind"] in builders:
                builders[n["kind"]](m, n)
        for k, n in enumerate(self.ins):
            self._in(m, n, k)
        for k, n in enumerate(self.outs):
            outs.append(self._out(m, n, k))
        fired = Cat(*(c.fire for c in outs)).any()
        with m.If(cnt.restart):
            m.d.sync += [self.last_write.eq(0), self.writes.eq(0)]
        with m.Elif(fired):
            m.d.sync += [self.last_write.eq(cnt.count),
                         self.writes.eq(self.writes + sum(c.fire for c in outs))]
        m.d.comb += self.done.eq(Cat(*(c.done for c in outs)).all())
        for node, port in self._outs:
            if (node, port) not in self._made:
                raise AppDesignError(f"{node}.{port} is read but its node has no such output")
        return m

    def _delays(self, m: Module) -> None:
        """A chain of registers per source port, tapped at each sink's latency."""
        nets: dict[tuple[str, str], list[dict]] = {}
        for e in self.desc["edges"]:
            nets.setdefault((e["src"], e["src_port"]), []).append(e)
        for (src, port), sinks in nets.items():
            width = sinks[0]["width"]
            source = self._port(src, port, width, drive=False)
            taps = [source]
            for i in range(max(e["latency"] for e in sinks)):
                reg = Signal(width, name=_ident(f"{src}_{port}_d{i + 1}"))
                m.d.sync += reg.eq(taps[-1])
                taps.append(reg)
            for e in sinks:
                key = (e["dst"], e["dst_port"])
                if key in self._ins:
                    raise AppDesignError(f"input {e['dst']}.{e['dst_port']} is driven twice")
                self._ins[key] = taps[e["latency"]]


def _pick(choices: list[tuple]) -> object:
    """The value whose condition holds (the last one when none does)."""
    value = choices[-1][1]
    for cond, v in reversed(choices[:-1]):
        value = Mux(cond, v, value)
    return value


def _ident(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
