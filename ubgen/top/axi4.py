"""An AXI4 burst slave (AMBA AXI and ACE Protocol Specification, AXI4: channels AW, W, B, AR, R;
bursts FIXED, INCR and WRAP of 1 to 256 beats, narrow and unaligned transfers) onto the top's
host bus (:mod:`.hostbus`): the data path a host (or its DMA engine) uses to move the inputs,
the outputs and the configuration in bursts (docs/top.md "The burst port").

AXI side: members named ``<prefix>_awid`` ... ``<prefix>_rready`` (flat, so that the generated
Verilog ports match cocotbext-axi's ``AxiBus.from_prefix(dut, prefix)``); 64-bit data
(:data:`DATA_WIDTH`), 32-bit byte addresses, ``id_width``-bit IDs echoed on B and R.
``*lock``, ``*cache`` and ``*prot`` are accepted and ignored.

* One burst at a time: AW or AR is accepted only while no burst is in progress (when both are
  waiting, they take turns). The slave waits for AW before it takes W (the protocol allows it).
* Beat addresses follow the protocol: INCR steps from the start address aligned to the beat
  size (the first beat may be unaligned), FIXED repeats it, WRAP wraps at the burst's
  ``len * size`` boundary. A burst the protocol does not allow (``size`` wider than the bus,
  the reserved burst type, WRAP with a length other than 2, 4, 8 or 16 beats or an unaligned
  WRAP start) is answered SLVERR on every beat and touches nothing (its W data is consumed).
* Each beat is one or two host-bus accesses. In the ``wide`` region (``addr[wide_shift:] ==
  wide_value``: the global buffer's row window) a beat is one 64-bit row under the beat's byte
  strobes. Elsewhere the registers are 32 bits: a write beat writes each half whose strobes are
  not all zero (a half must have all four strobes set, else that access is rejected); a read
  beat reads both halves when the beat is 64 bits wide, else the half holding its address.
  A beat with no strobes at all writes nothing.
* Responses: BRESP is SLVERR when any access of the burst was rejected (the accepted ones took
  effect, the rejected ones changed nothing); RRESP is per beat.
* Throughput: one beat per cycle in the wide region, reads included (up to
  :data:`READ_DEPTH` beats are buffered for R back-pressure); two cycles per beat that
  writes or reads both halves of 32-bit registers.
"""
from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from .hostbus import HOST_ADDR_WIDTH, HOST_DATA_WIDTH, host_bus_signature

__all__ = ["AXI4Slave", "axi4_members", "DATA_WIDTH", "READ_DEPTH", "FIXED", "INCR", "WRAP",
           "OKAY", "SLVERR"]

DATA_WIDTH = HOST_DATA_WIDTH
STRB_WIDTH = DATA_WIDTH // 8
MAX_SIZE = (STRB_WIDTH - 1).bit_length()          # log2 of the bus width in bytes: 3
READ_DEPTH = 4
FIXED, INCR, WRAP = 0, 1, 2
OKAY, SLVERR = 0b00, 0b10


def axi4_members(prefix: str, id_width: int = 4, addr_width: int = HOST_ADDR_WIDTH,
                 data_width: int = DATA_WIDTH) -> dict:
    """Flat AXI4 slave members ``<prefix>_<signal>`` (directions as seen by the slave)."""
    def addr_channel(c: str) -> dict:
        return {f"{c}id": In(id_width), f"{c}addr": In(addr_width), f"{c}len": In(8),
                f"{c}size": In(3), f"{c}burst": In(2), f"{c}lock": In(1), f"{c}cache": In(4),
                f"{c}prot": In(3), f"{c}valid": In(1), f"{c}ready": Out(1)}
    sigs = {**addr_channel("aw"),
            "wdata": In(data_width), "wstrb": In(data_width // 8), "wlast": In(1),
            "wvalid": In(1), "wready": Out(1),
            "bid": Out(id_width), "bresp": Out(2), "bvalid": Out(1), "bready": In(1),
            **addr_channel("ar"),
            "rid": Out(id_width), "rdata": Out(data_width), "rresp": Out(2), "rlast": Out(1),
            "rvalid": Out(1), "rready": In(1)}
    return {f"{prefix}_{k}": v for k, v in sigs.items()}


class AXI4Slave(wiring.Component):
    """The AXI4 slave (module docstring); ``bus`` is its host-bus initiator port."""

    def __init__(self, prefix: str = "s_axi", id_width: int = 4, *, wide_shift: int,
                 wide_value: int):
        self.prefix, self.id_width = prefix, id_width
        self.wide_shift, self.wide_value = wide_shift, wide_value
        super().__init__({**axi4_members(prefix, id_width), "bus": Out(host_bus_signature())})

    def _s(self, name):
        return getattr(self, f"{self.prefix}_{name}")

    def elaborate(self, platform):
        m = Module()
        s, bus = self._s, self.bus
        burst = _Burst(self.id_width)
        fifo = m.submodules.rfifo = SyncFIFO(width=DATA_WIDTH + 3 + self.id_width,
                                             depth=READ_DEPTH)
        m.d.comb += [Cat(s("rdata"), s("rresp"), s("rlast"), s("rid")).eq(fifo.r_data),
                     s("rvalid").eq(fifo.r_rdy), fifo.r_en.eq(s("rready"))]
        wide = burst.addr[self.wide_shift:] == self.wide_value
        prefer_read = Signal()
        with m.FSM():
            with m.State("IDLE"):
                take_aw = s("awvalid") & ~(s("arvalid") & prefer_read)
                take_ar = s("arvalid") & ~take_aw
                m.d.comb += [s("awready").eq(take_aw), s("arready").eq(take_ar)]
                with m.If(take_aw):
                    burst.start(m, s, "aw")
                    m.d.sync += prefer_read.eq(1)
                    m.next = "WRITE"
                with m.Elif(take_ar):
                    burst.start(m, s, "ar")
                    m.d.sync += prefer_read.eq(0)
                    m.next = "READ"
            with m.State("WRITE"):
                with m.If(self._write_beat(m, s, bus, burst, wide)):
                    m.next = "B"
            with m.State("B"):
                m.d.comb += [s("bvalid").eq(1), s("bid").eq(burst.id),
                             s("bresp").eq(Mux(burst.err, SLVERR, OKAY))]
                with m.If(s("bready")):
                    m.next = "IDLE"
            with m.State("READ"):
                with m.If(self._read_beats(m, bus, burst, wide, fifo)):
                    m.next = "IDLE"
        return m

    def _write_beat(self, m: Module, s, bus, burst: "_Burst", wide) -> Signal:
        """One W beat per step (two host-bus writes for both halves of 32-bit registers);
        returns the signal that is high when the burst's last beat is consumed."""
        strb = s("wstrb")
        need = [strb[:4].any(), strb[4:].any()]
        half = Mux(burst.half | ~need[0], 1, 0)       # the half written in this cycle
        done, last = Signal(), Signal()
        with m.If(s("wvalid")):
            with m.If(burst.bad):
                m.d.comb += done.eq(1)
            with m.Elif(wide):
                with m.If(strb.any()):
                    m.d.comb += [bus.we.eq(1), bus.addr.eq(burst.row_addr), bus.wdata.eq(s("wdata")),
                                 bus.wstrb.eq(strb), done.eq(bus.gnt)]
                    with m.If(bus.gnt & bus.werr):
                        m.d.sync += burst.err.eq(1)
                with m.Else():
                    m.d.comb += done.eq(1)
            with m.Elif(need[0] | need[1]):
                m.d.comb += [bus.we.eq(1), bus.addr.eq(burst.half_addr(half)),
                             bus.wdata.eq(s("wdata")),
                             bus.wstrb.eq(strb & Mux(half, 0xF0, 0x0F))]
                with m.If(bus.gnt):
                    with m.If(bus.werr):
                        m.d.sync += burst.err.eq(1)
                    with m.If(~half & need[1]):
                        m.d.sync += burst.half.eq(1)
                    with m.Else():
                        m.d.comb += done.eq(1)
                        m.d.sync += burst.half.eq(0)
            with m.Else():
                m.d.comb += done.eq(1)
        m.d.comb += s("wready").eq(done)
        with m.If(done):
            burst.advance(m)
            with m.If(burst.bad):
                m.d.sync += burst.err.eq(1)
            m.d.comb += last.eq(burst.count == burst.len)
        return last

    def _read_beats(self, m: Module, bus, burst: "_Burst", wide, fifo) -> Signal:
        """Issue the burst's reads (one host-bus read per cycle while the R buffer has room) and
        assemble the answers, one cycle later, into R beats; returns the signal that is high
        when the burst's last beat enters the R buffer."""
        pending = Signal(range(READ_DEPTH + 1))          # beats issued, not yet buffered
        room = fifo.level + pending < READ_DEPTH
        both = burst.size == MAX_SIZE
        half = Mux(burst.half, 1, Mux(both, 0, burst.addr[2]))
        issued_all = Signal()                             # every beat of the burst issued
        # what the access of the previous cycle was: valid, its half, last of its beat, wide,
        # last beat of the burst
        r_valid, r_half, r_beat_end, r_wide, r_last = (Signal(name=n) for n in (
            "r_valid", "r_half", "r_beat_end", "r_wide", "r_last"))
        data, err = Signal(DATA_WIDTH), Signal()
        started, ended = Signal(), Signal()
        m.d.sync += r_valid.eq(0)
        with m.If(~issued_all & ~burst.bad):
            first = ~burst.half
            with m.If(first & room | ~first):
                m.d.comb += [bus.re.eq(1),
                             bus.addr.eq(Mux(wide, burst.row_addr, burst.half_addr(half)))]
                with m.If(bus.gnt):
                    beat_end = wide | ~both | burst.half
                    m.d.sync += [r_valid.eq(1), r_half.eq(half), r_beat_end.eq(beat_end),
                                 r_wide.eq(wide), r_last.eq(burst.count == burst.len)]
                    m.d.comb += started.eq(first)
                    with m.If(beat_end):
                        m.d.sync += burst.half.eq(0)
                        burst.advance(m)
                        with m.If(burst.count == burst.len):
                            m.d.sync += issued_all.eq(1)
                    with m.Else():
                        m.d.sync += burst.half.eq(1)
        # the answers
        word = Signal(DATA_WIDTH)
        halves = [Mux(r_half == h, bus.rdata.word_select(h, 32), data.word_select(h, 32))
                  for h in range(2)]
        m.d.comb += word.eq(Mux(r_wide, bus.rdata, Cat(*halves)))
        with m.If(burst.bad & ~issued_all & room):        # a refused burst: SLVERR beats, no access
            m.d.comb += [fifo.w_en.eq(1),
                         fifo.w_data.eq(Cat(Const(0, DATA_WIDTH), Const(SLVERR, 2),
                                            burst.count == burst.len, burst.id))]
            burst.advance(m)
            with m.If(burst.count == burst.len):
                m.d.comb += ended.eq(1)
        with m.If(r_valid & bus.rvalid):
            with m.If(r_beat_end):
                m.d.comb += [fifo.w_en.eq(1),
                             fifo.w_data.eq(Cat(word, Mux(err | bus.rerr, SLVERR, OKAY), r_last,
                                                burst.id)),
                             ended.eq(r_last)]
                m.d.sync += [data.eq(0), err.eq(0)]
            with m.Else():
                m.d.sync += [data.eq(word), err.eq(err | bus.rerr)]
        m.d.sync += pending.eq(pending + started - (r_valid & bus.rvalid & r_beat_end))
        with m.If(ended):
            m.d.sync += [issued_all.eq(0), pending.eq(0)]
        return ended


class _Burst:
    """The burst in progress: its ID, beat address, length, size, type, beats done, the half of
    a 32-bit pair in progress, whether the protocol refuses it (``bad``) and whether an access
    was rejected (``err``)."""

    def __init__(self, id_width: int):
        self.id = Signal(id_width, name="burst_id")
        self.addr = Signal(HOST_ADDR_WIDTH, name="burst_addr")
        self.len = Signal(8, name="burst_len")
        self.size = Signal(3, name="burst_size")
        self.type = Signal(2, name="burst_type")
        self.count = Signal(8, name="burst_count")
        self.half = Signal(name="burst_half")
        self.bad = Signal(name="burst_bad")
        self.err = Signal(name="burst_err")

    @property
    def row_addr(self):
        """The beat's 64-bit row (the address with its low three bits cleared)."""
        return Cat(Const(0, MAX_SIZE), self.addr[MAX_SIZE:])

    def half_addr(self, half):
        """The 32-bit register in ``half`` of the beat's row."""
        return Cat(Const(0, 2), half, self.addr[MAX_SIZE:])

    def start(self, m: Module, s, ch: str) -> None:
        """Take the burst from the AW or AR channel (``ch``)."""
        addr, length, size, kind = s(f"{ch}addr"), s(f"{ch}len"), s(f"{ch}size"), s(f"{ch}burst")
        aligned = (addr[:8] & ((Const(1, 8) << size) - 1)[:8]) == 0
        wrap_ok = ((length == 1) | (length == 3) | (length == 7) | (length == 15)) & aligned
        bad = (size > MAX_SIZE) | (kind == 3) | ((kind == WRAP) & ~wrap_ok)
        m.d.sync += [self.id.eq(s(f"{ch}id")), self.addr.eq(addr), self.len.eq(length),
                     self.size.eq(size), self.type.eq(kind), self.count.eq(0), self.half.eq(0),
                     self.bad.eq(bad), self.err.eq(0)]

    def advance(self, m: Module) -> None:
        """To the next beat (protocol address rules, module docstring)."""
        step = (Const(1, 9) << self.size)[:9]                  # bytes per beat
        span = ((self.len + 1) << self.size)[:12]             # WRAP: len + 1 beats of 2**size
        step_mask = Cat((step - 1)[:9], Const(0, HOST_ADDR_WIDTH - 9))
        span_mask = Cat((span - 1)[:12], Const(0, HOST_ADDR_WIDTH - 12))
        incr = ((self.addr & ~step_mask) + step)[:HOST_ADDR_WIDTH]
        wrap = (self.addr & ~span_mask) | (incr & span_mask)
        nxt = Mux(self.type == FIXED, self.addr, Mux(self.type == WRAP, wrap, incr))
        m.d.sync += [self.addr.eq(nxt), self.count.eq(self.count + 1)]
