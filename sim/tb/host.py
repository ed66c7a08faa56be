"""The host processor's side of ``cgra_top``: 32-bit AXI4-Lite reads and writes with their
responses (cocotbext-axi ``AxiLiteMaster`` on the ``s_axil_*`` ports), bursts on the AXI4
port (cocotbext-axi ``AxiMaster`` on ``s_axi_*``: the configuration, the inputs and the
outputs, docs/top.md "The burst port") and the run protocol of docs/top.md. ``plan`` supplies
the addresses (``control``, ``glb_base``, ``glb_rows_base``)."""
from __future__ import annotations

import bisect
import logging
import os
from typing import Protocol

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import AxiBus, AxiLiteBus, AxiLiteMaster, AxiMaster, AxiResp

WORD_BYTES = 4            # a 32-bit register
GLB_WORD_BYTES = 2        # a 16-bit GLB word in the row window


def runs(addresses: list[int], step: int, gap: int = 1) -> list[tuple[int, int]]:
    """``(first index, count)`` of the stretches of ``addresses`` (in the given order) where
    each address is at most ``gap`` steps of ``step`` after the previous one."""
    out = []
    for i, a in enumerate(addresses):
        if out and 0 < a - addresses[i - 1] <= gap * step:
            out[-1] = (out[-1][0], i - out[-1][0] + 1)
        else:
            out.append((i, 1))
    return out


class Host:
    """The host processor's view: 32-bit reads and writes with their responses, and bursts."""

    def __init__(self, dut, plan, axil: bool = True):
        self.dut, self.plan = dut, plan
        if not axil:              # the caller drives the AXI ports itself
            return
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        for ch in (self.axil.write_if, self.axil.read_if):
            ch.log.setLevel(logging.WARNING)
        if hasattr(dut, "s_axi_awvalid"):
            self.axi = AxiMaster(AxiBus.from_prefix(dut, "s_axi"), dut.clk, dut.rst)
            for ch in (self.axi.write_if, self.axi.read_if):
                ch.log.setLevel(logging.WARNING)

    async def write(self, addr: int, value: int, ok=True):
        resp = await self.axil.write(addr, int(value).to_bytes(4, "little"))
        assert (resp.resp == AxiResp.OKAY) == ok, f"write {addr:#010x}: {resp.resp}"

    async def read(self, addr: int, ok=True) -> int:
        resp = await self.axil.read(addr, 4)
        assert (resp.resp == AxiResp.OKAY) == ok, f"read {addr:#010x}: {resp.resp}"
        return int.from_bytes(resp.data, "little")

    def ctrl(self, name):
        return self.plan["control"][name]

    def glb(self, word):
        return self.plan["glb_base"] + 4 * word

    def glb_row(self, word):
        """The byte address of GLB word ``word`` in the row window."""
        return self.plan["glb_rows_base"] + GLB_WORD_BYTES * word

    # --- bursts (the AXI4 port)
    async def write_bursts(self, chunks: list[tuple[int, bytes]], what: str) -> None:
        """Write each ``(address, bytes)`` chunk (cocotbext-axi splits it into bursts), all
        issued at once; every burst must answer OKAY."""
        events = [self.axi.init_write(a, data) for a, data in chunks]
        for (a, _), ev in zip(chunks, events):
            await ev.wait()
            if ev.data.resp != AxiResp.OKAY:
                raise AssertionError(f"{what}: burst write at {a:#010x} answered {ev.data.resp}")

    async def read_bursts(self, chunks: list[tuple[int, int]], what: str) -> list[bytes]:
        """Read each ``(address, length in bytes)`` chunk; every beat must answer OKAY. The
        global buffer's row window is read in 64-bit beats, the 32-bit registers in 32-bit
        beats: a 64-bit beat reads both halves (docs/top.md "The burst port"), so a chunk
        ending at a tile's last register would read the offset after it, which the tile
        refuses."""
        rows = self.plan["glb_rows_base"] >> 28
        events = [self.axi.init_read(a, n, size=None if a >> 28 == rows else 2)
                  for a, n in chunks]
        out = []
        for (a, _), ev in zip(chunks, events):
            await ev.wait()
            if ev.data.resp != AxiResp.OKAY:
                raise AssertionError(f"{what}: burst read at {a:#010x} answered {ev.data.resp}")
            out.append(bytes(ev.data.data))
        return out

    async def run_until_done(self, done_cycle, timeout=10_000):
        await self.write(self.ctrl("DONE_CYCLE"), done_cycle)
        await self.write(self.ctrl("START"), 1)
        for _ in range(timeout):
            if await self.read(self.ctrl("DONE")):
                break
        else:
            raise AssertionError("DONE never rose")
        cycle = await self.read(self.ctrl("CYCLE"))
        assert cycle >= done_cycle
        assert await self.read(self.ctrl("ERROR")) == 0
        await self.write(self.ctrl("START"), 0)
        return cycle


class BurstEngine(Protocol):
    """What the bulk steps need from a burst master (:class:`Host` with cocotbext-axi's
    ``AxiMaster``; the reliability run's random-timing master): the helpers below turn
    registers and GLB words into chunks of bytes for it."""

    def glb_row(self, word: int) -> int: ...

    async def write_bursts(self, chunks: list[tuple[int, bytes]], what: str) -> None: ...

    async def read_bursts(self, chunks: list[tuple[int, int]], what: str) -> list[bytes]: ...


async def write_registers(engine, pairs: list[tuple[int, int]], what: str) -> None:
    """32-bit registers ``(address, value)``: each stretch of consecutive addresses (in the
    given order) one chunk."""
    addrs = [a for a, _ in pairs]
    chunks = [(addrs[i], b"".join(int(v).to_bytes(WORD_BYTES, "little")
                                  for _, v in pairs[i:i + n]))
              for i, n in runs(addrs, WORD_BYTES)]
    await engine.write_bursts(chunks, what)


async def read_registers(engine, addrs: list[int], what: str, gap: int = 8) -> list[int]:
    """32-bit registers at ``addrs`` (sorted): stretches with gaps of at most ``gap`` registers
    read as one chunk (the addresses in between are read and dropped, so they must be legal to
    read)."""
    spans = runs(addrs, WORD_BYTES, gap)
    data = await engine.read_bursts(
        [(addrs[i], addrs[i + n - 1] - addrs[i] + WORD_BYTES) for i, n in spans], what)
    out = []
    for (i, n), blob in zip(spans, data):
        for a in addrs[i:i + n]:
            k = a - addrs[i]
            out.append(int.from_bytes(blob[k:k + WORD_BYTES], "little"))
    return out


async def write_glb(engine, pairs: list[tuple[int, int]], what: str) -> None:
    """GLB words ``(word, value)`` through the row window, each stretch of consecutive words
    one chunk."""
    words = [w for w, _ in pairs]
    chunks = [(engine.glb_row(words[i]), b"".join(int(v).to_bytes(GLB_WORD_BYTES, "little")
                                                  for _, v in pairs[i:i + n]))
              for i, n in runs(words, 1)]
    await engine.write_bursts(chunks, what)


async def read_glb(engine, words: list[int], what: str, gap: int = 32) -> list[int]:
    """GLB words at ``words`` (sorted) through the row window."""
    spans = runs(words, 1, gap)
    data = await engine.read_bursts(
        [(engine.glb_row(words[i]), GLB_WORD_BYTES * (words[i + n - 1] - words[i] + 1))
         for i, n in spans], what)
    out = []
    for (i, n), blob in zip(spans, data):
        for w in words[i:i + n]:
            k = GLB_WORD_BYTES * (w - words[i])
            out.append(int.from_bytes(blob[k:k + GLB_WORD_BYTES], "little"))
    return out


def readable(plan: dict):
    """``addr -> bool``: not inside a write-only window (sim.bundle.write_only_ranges)."""
    ranges = sorted(plan.get("write_only", []))
    starts = [a for a, _ in ranges]

    def ok(addr: int) -> bool:
        i = bisect.bisect_right(starts, addr) - 1
        return i < 0 or addr > ranges[i][1]
    return ok


def clock_impl() -> str:
    """How the top's clock is driven: ``"gpi"`` (default), cocotb's clock in C, which toggles
    the clock without entering Python, so a run the host sleeps through costs no Python at all;
    ``"py"`` (``UBGEN_E2E_CLOCK=py``; cocotb's default without
    ``COCOTB_TRUST_INERTIAL_WRITES``), a Python task woken twice a cycle, kept for
    ``bench/sim_speed.py``'s comparison (docs/simulation.md "Speed")."""
    impl = os.environ.get("UBGEN_E2E_CLOCK", "gpi")
    if impl not in ("gpi", "py"):
        raise ValueError(f"UBGEN_E2E_CLOCK={impl!r}: 'gpi' or 'py'")
    return impl


async def start_host(dut, p: dict, axil: bool = True) -> Host:
    """Start the clock (:func:`clock_impl`), reset the top and return a :class:`Host` with plan
    ``p`` (``axil=False``: without cocotbext-axi's masters, for a caller driving the ports
    itself); ``host.clock`` is the running clock."""
    clock = Clock(dut.clk, 10, unit="ns", impl=clock_impl())
    clock.start()
    host = Host(dut, p, axil)
    host.clock = clock
    dut.rst.value = 1
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0
    await RisingEdge(dut.clk)
    return host
