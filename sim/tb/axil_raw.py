"""A bit-level AXI4-Lite master for ``cgra_top``'s ``s_axil_*`` port (AMBA AXI4-Lite), for the
reliability test (docs/simulation.md "Reliability"): unlike cocotbext-axi's master it presents
AW before W, W before AW or both together with random gaps, any write strobe, and random B/R
back-pressure; every handshake has a cycle limit, so a hung bus is reported, never waited on.

:class:`RawHost` has the :class:`sim.tb.host.Host` interface (``write``, ``read``, ``ctrl``,
``glb``) so the end-to-end steps run on it unchanged.
"""
from __future__ import annotations

import random

from cocotb.triggers import Lock, ReadOnly, RisingEdge

OKAY, SLVERR = 0, 2
LIMIT = 200                   # clock cycles any one handshake may take before it is a hang


class BusHang(AssertionError):
    """A handshake did not complete within :data:`LIMIT` cycles."""


class RawHost:
    def __init__(self, dut, plan: dict, rng: random.Random, gaps: bool = True):
        self.dut, self.plan, self.rng, self.gaps = dut, plan, rng, gaps
        self.transactions = 0
        self.lock = Lock()
        for name in ("awvalid", "wvalid", "bready", "arvalid", "rready", "awprot", "arprot"):
            self._set(name, 0)

    def _set(self, name, value):
        getattr(self.dut, f"s_axil_{name}").value = value

    def _get(self, name) -> int:
        return int(getattr(self.dut, f"s_axil_{name}").value)

    def ctrl(self, name):
        return self.plan["control"][name]

    def glb(self, word):
        return self.plan["glb_base"] + 4 * word

    async def _gap(self):
        if self.gaps and self.rng.random() < 0.3:
            for _ in range(self.rng.randrange(1, 4)):
                await RisingEdge(self.dut.clk)

    async def raw_write(self, addr: int, value: int, strb: int = 0xF,
                        order: str | None = None) -> int:
        """One write (one at a time: coroutines sharing the host take turns)."""
        async with self.lock:
            return await self._raw_write(addr, value, strb, order)

    async def raw_read(self, addr: int) -> tuple[int, int]:
        """One read; returns (RRESP, RDATA) (one at a time, as :meth:`raw_write`)."""
        async with self.lock:
            return await self._raw_read(addr)

    async def _raw_write(self, addr: int, value: int, strb: int = 0xF,
                         order: str | None = None) -> int:
        """One write; ``order``: ``aw_first``, ``w_first`` or ``together`` (random if None).
        Returns BRESP."""
        order = order or self.rng.choice(["aw_first", "w_first", "together"])
        self._set("awaddr", addr)
        self._set("wdata", value & 0xFFFFFFFF)
        self._set("wstrb", strb)
        pending = {"aw": True, "w": True}
        first = {"aw_first": "aw", "w_first": "w"}.get(order)
        if first:
            self._set(first + "valid", 1)
        else:
            self._set("awvalid", 1)
            self._set("wvalid", 1)
        for _ in range(LIMIT):
            await ReadOnly()
            aw_hs = self._get("awvalid") and self._get("awready")
            w_hs = self._get("wvalid") and self._get("wready")
            await RisingEdge(self.dut.clk)
            if aw_hs:
                pending["aw"] = False
                self._set("awvalid", 0)
            if w_hs:
                pending["w"] = False
                self._set("wvalid", 0)
            if not any(pending.values()):
                break
            if first and not pending[first]:
                other = "w" if first == "aw" else "aw"
                if self.rng.random() < 0.5:
                    self._set(other + "valid", 1)
        else:
            raise BusHang(f"write {addr:#010x} ({order}): AW/W not accepted in {LIMIT} cycles")
        resp, _ = await self._response("b")
        self.transactions += 1
        return resp

    async def _raw_read(self, addr: int) -> tuple[int, int]:
        self._set("araddr", addr)
        self._set("arvalid", 1)
        for _ in range(LIMIT):
            await ReadOnly()
            hs = self._get("arready")
            await RisingEdge(self.dut.clk)
            if hs:
                break
        else:
            raise BusHang(f"read {addr:#010x}: AR not accepted in {LIMIT} cycles")
        self._set("arvalid", 0)
        out = await self._response("r")
        self.transactions += 1
        return out

    async def _response(self, ch: str) -> tuple[int, int | None]:
        for _ in range(LIMIT):
            ready = self.rng.random() < 0.6 if self.gaps else True
            self._set(ch + "ready", int(ready))
            await ReadOnly()
            if self._get(ch + "valid") and ready:
                resp = self._get(ch + "resp")
                data = self._get("rdata") if ch == "r" else None
                await RisingEdge(self.dut.clk)
                self._set(ch + "ready", 0)
                await self._gap()
                return resp, data
            await RisingEdge(self.dut.clk)
        raise BusHang(f"no {ch.upper()} response in {LIMIT} cycles")

    async def write(self, addr: int, value: int, ok=True):
        resp = await self.raw_write(addr, value)
        assert (resp == OKAY) == ok, f"write {addr:#010x}: response {resp}"

    async def read(self, addr: int, ok=True) -> int:
        resp, data = await self.raw_read(addr)
        assert (resp == OKAY) == ok, f"read {addr:#010x}: response {resp}"
        return data
