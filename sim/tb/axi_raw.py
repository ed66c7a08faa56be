"""A bit-level AXI4 master for ``cgra_top``'s burst port ``s_axi_*`` (AMBA AXI4), for the
reliability run (docs/simulation.md "Reliability"): any burst (FIXED, INCR, WRAP, refused
ones; any length, size, alignment and strobes), W presented before, with or after AW, random W
valid gaps and random B/R back-pressure; every handshake has a cycle limit
(:data:`sim.tb.axil_raw.LIMIT` per beat), so a hung bus is reported, never waited on.

:func:`split` cuts a byte range into bursts the way a DMA engine would (random lengths, the
size given), so the end-to-end steps move their data over this master too.
"""
from __future__ import annotations

import random

from cocotb.triggers import ReadOnly, RisingEdge

from .axi4_model import BUS_BYTES, INCR, Burst, beat_lanes, burst_beats
from .axil_raw import LIMIT, BusHang

__all__ = ["RawAxi", "split", "gather"]


def split(addr: int, data: bytes | int, rng: random.Random, size: int = 3,
          max_beats: int = 256) -> list[Burst]:
    """INCR bursts of ``2**size``-byte beats covering ``[addr, addr + n)`` (``data``: the bytes
    to write, or ``n`` for a read), each of a random length up to ``max_beats`` and none
    crossing a 4 KB boundary (the protocol's rule for masters); write beats strobe exactly the
    bytes of the range."""
    write = not isinstance(data, int)
    end = addr + (len(data) if write else data)
    nbytes, out, a = 1 << size, [], addr
    while a < end:
        want = rng.randrange(1, max_beats + 1)
        b = Burst(write, a, 0, size, INCR, id=rng.randrange(16))
        count = 0
        while a < end and count < want and (count == 0 or a % 4096):
            base = a - a % BUS_BYTES
            lanes = [x for x in beat_lanes(a, size) if base + x < end]
            if write:
                b.data.append(sum(data[base + x - addr] << 8 * x for x in lanes))
                b.strobes.append(sum(1 << x for x in lanes))
            count += 1
            a = a - a % nbytes + nbytes
        b.length = count - 1
        out.append(b)
    return out


def gather(bursts: list[Burst], beats: list[list[tuple[int, int]]], addr: int, n: int) -> bytes:
    """The bytes ``[addr, addr + n)`` from read bursts made by :func:`split` and their
    ``(rresp, rdata)`` beats."""
    out = bytearray(n)
    for b, got in zip(bursts, beats):
        for a, (_resp, data) in zip(burst_beats(b.addr, b.length, b.size, b.kind), got):
            base = a - a % BUS_BYTES
            for x in beat_lanes(a, b.size):
                if addr <= base + x < addr + n:
                    out[base + x - addr] = data >> 8 * x & 0xFF
    return bytes(out)


class RawAxi:
    """One burst at a time on ``<prefix>_*``, with random timing (``gaps``)."""

    def __init__(self, dut, rng: random.Random, prefix: str = "s_axi", gaps: bool = True):
        self.dut, self.rng, self.prefix, self.gaps = dut, rng, prefix, gaps
        self.bursts = 0
        for name in ("awvalid", "wvalid", "bready", "arvalid", "rready", "awlock", "arlock",
                     "awcache", "arcache", "awprot", "arprot"):
            self._set(name, 0)

    def _set(self, name, value):
        getattr(self.dut, f"{self.prefix}_{name}").value = value

    def _get(self, name) -> int:
        return int(getattr(self.dut, f"{self.prefix}_{name}").value)

    def _maybe(self, p: float) -> bool:
        return not self.gaps or self.rng.random() < p

    async def write(self, b: Burst) -> int:
        """Send write burst ``b``; returns BRESP (BID must be ``b.id``)."""
        aw_done, beat, limit = False, 0, LIMIT * (b.length + 2)
        w_early = self.rng.random() < 0.3                 # W valid before AW is offered
        for _ in range(limit):
            offer_aw = not aw_done and (w_early and beat == 0 and self._maybe(0.3)
                                        or not w_early and self._maybe(0.7) or not self.gaps)
            if offer_aw:
                for k, v in (("awid", b.id), ("awaddr", b.addr), ("awlen", b.length),
                             ("awsize", b.size), ("awburst", b.kind)):
                    self._set(k, v)
            self._set("awvalid", int(offer_aw))
            offer_w = beat <= b.length and self._maybe(0.8)
            if offer_w:
                self._set("wdata", b.data[beat])
                self._set("wstrb", b.strobes[beat])
                self._set("wlast", int(beat == b.length))
            self._set("wvalid", int(offer_w))
            await ReadOnly()
            aw_hs = offer_aw and self._get("awready")
            w_hs = offer_w and self._get("wready")
            await RisingEdge(self.dut.clk)
            aw_done |= bool(aw_hs)
            beat += bool(w_hs)
            if aw_done and beat > b.length:
                break
        else:
            raise BusHang(f"write burst at {b.addr:#010x}: AW/W not taken in {limit} cycles")
        self._set("awvalid", 0)
        self._set("wvalid", 0)
        for _ in range(LIMIT):
            ready = self._maybe(0.6)
            self._set("bready", int(ready))
            await ReadOnly()
            if ready and self._get("bvalid"):
                resp, bid = self._get("bresp"), self._get("bid")
                await RisingEdge(self.dut.clk)
                self._set("bready", 0)
                if bid != b.id:
                    raise AssertionError(f"write burst at {b.addr:#010x}: BID {bid} != {b.id}")
                self.bursts += 1
                return resp
            await RisingEdge(self.dut.clk)
        raise BusHang(f"write burst at {b.addr:#010x}: no B response in {LIMIT} cycles")

    async def read(self, b: Burst) -> list[tuple[int, int]]:
        """Send read burst ``b``; returns its ``(rresp, rdata)`` beats (RID, RLAST checked)."""
        for _ in range(LIMIT):
            offer = self._maybe(0.7)
            if offer:
                for k, v in (("arid", b.id), ("araddr", b.addr), ("arlen", b.length),
                             ("arsize", b.size), ("arburst", b.kind)):
                    self._set(k, v)
            self._set("arvalid", int(offer))
            await ReadOnly()
            hs = offer and self._get("arready")
            await RisingEdge(self.dut.clk)
            if hs:
                break
        else:
            raise BusHang(f"read burst at {b.addr:#010x}: AR not taken in {LIMIT} cycles")
        self._set("arvalid", 0)
        beats: list[tuple[int, int]] = []
        for _ in range(LIMIT * (b.length + 2)):
            ready = self._maybe(0.6)
            self._set("rready", int(ready))
            await ReadOnly()
            if ready and self._get("rvalid"):
                beats.append((self._get("rresp"), self._get("rdata")))
                last, rid = self._get("rlast"), self._get("rid")
                await RisingEdge(self.dut.clk)
                if rid != b.id or last != (len(beats) == b.length + 1):
                    raise AssertionError(f"read burst at {b.addr:#010x}: beat {len(beats)}: "
                                         f"RID {rid} (expected {b.id}), RLAST {last}")
                if last:
                    self._set("rready", 0)
                    self.bursts += 1
                    return beats
            else:
                await RisingEdge(self.dut.clk)
        raise BusHang(f"read burst at {b.addr:#010x}: R beats missing after "
                      f"{LIMIT * (b.length + 2)} cycles")
