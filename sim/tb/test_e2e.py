"""The end-to-end cocotb testbench (docs/simulation.md): one application's bundle
(:mod:`sim.bundle`) run on ``cgra_top`` exactly as a host driver does it (docs/top.md "A host
run"): the bulk data in bursts on the AXI4 port (cocotbext-axi ``AxiMaster``), the control
registers over AXI4-Lite (``AxiLiteMaster``):

1. configure: write the bitstream, each stretch of consecutive registers one burst, then read
   every configured register back in bursts and compare (the last value written to each
   address);
2. load: write the input words into the global buffer's row window (four words per beat);
3. run: write ``DONE_CYCLE``, write ``START`` = 1, wait until ``DONE_CYCLE`` has passed (a
   timer: no Python per clock cycle) and poll ``DONE``; read ``CYCLE``, ``ERROR`` and the
   performance counters ``FIRST_WRITE``, ``LAST_WRITE``, ``WRITES``; write ``START`` = 0;
4. read back: read every expected output word from the row window and compare bit for bit.

Run by :func:`sim.array_run.run_bundle`, which passes the job (bundle and the host's addresses
from the exported address map) in ``UBGEN_E2E_JOB``; the testbench writes what it observed to
``UBGEN_E2E_RESULT`` (the verdict is :func:`sim.array_run.verdict`'s), its progress to
``UBGEN_E2E_PROGRESS`` (:class:`Progress`, shown live by :mod:`sim.progress`) and fails the
cocotb test when the run does not pass.

With ``"stress": seed`` in the job (the reliability run), the same steps run on bit-level
masters with random timing: the bulk steps on :class:`sim.tb.axi_raw.RawAxi` (random burst
lengths, random beat sizes in the row window and 32-bit beats on the registers, W before AW,
gaps, B/R back-pressure) with random bursts woven in
(:class:`sim.tb.burst_traffic.BurstTraffic`: crossing region ends, unaligned, narrow, refused,
while stopped and while running), random AXI4-Lite traffic (:class:`Traffic`, on
:class:`sim.tb.axil_raw.RawHost`) running concurrently on the other port, and ``STALL`` toggled
during the run. Every response must be the one docs/top.md specifies (SLVERR for every
rejected access), no handshake may hang, the configuration, the inputs and the scratch words
both traffics wrote must read back unchanged, and the application must still produce its
exact output and cycles.
"""
from __future__ import annotations

import json
import os
import random
import time

import cocotb
from cocotb.triggers import ClockCycles, Timer
from cocotb.utils import get_sim_time

from .axi_raw import RawAxi, gather, split
from .axil_raw import SLVERR, OKAY, BusHang, RawHost
from .burst_traffic import BurstTraffic
from .host import read_glb, read_registers, readable, start_host, write_glb, write_registers

SHOW = 5                  # mismatches kept in the result, per kind
POLL_CYCLES = 256         # host poll period while waiting for DONE (a timer: no per-cycle
                          # Python callbacks, the model runs at its own speed)
PROGRESS_SECONDS = 0.5    # wall time between progress reports during the run
FINAL_POLL_CYCLES = 16    # poll period once DONE_CYCLE is reached
CLOCK_NS = 10             # sim/tb/host.py's clock


def job() -> dict:
    with open(os.environ["UBGEN_E2E_JOB"]) as f:
        return json.load(f)


async def read_many(host, addresses, what: str, traffic=None) -> list[int]:
    """Read ``addresses`` one by one over AXI4-Lite (the stress host), with random traffic
    woven in; every response must be OKAY."""
    out = []
    for a in addresses:
        if traffic:
            await traffic.maybe(running=False)
        out.append(await host.read(a))
    return out


def cycle_now(dut) -> int:
    return int(get_sim_time(unit="ns") // 10)


class Traffic:
    """Random host accesses with the responses docs/top.md specifies, which keep the
    configured application intact: legal writes only re-write a configuration word with its
    value, write scratch GLB words (outside the app's words; stopped), ``DONE_CYCLE`` (with its
    value) and ``STALL`` (running); every other write is one the top must reject (illegal
    address, read-only register, partial strobe, unaligned, GLB while running)."""

    def __init__(self, host: RawHost, plan: dict, bundle: dict, rng: random.Random,
                 free: list[int], rate: float = 0.5):
        self.host, self.plan, self.rng, self.rate = host, plan, rng, rate
        can_read = readable(plan)
        self.target = {a: v for a, v in bundle["bitstream"] if can_read(a)}   # readable config
        self.bits: dict[int, int] = {}        # configuration words known to be in the top
        self.bit_addrs = sorted(self.target)
        self.inputs = {w: v for w, v in bundle["glb_inputs"]}
        self.free = list(free)               # GLB words no one else uses
        self.scratch: dict[int, int] = {}
        self.spans = {int(k): v for k, v in plan["tile_spans"].items()}
        self.ctrl = plan["control"]
        self.access = plan["control_access"]
        self.done_cycle = bundle["done_cycle"]
        self.done_value = 0                  # DONE_CYCLE's reset value
        self.stalled = 0
        self.counts = {"transactions": 0, "rejected": 0, "reads_checked": 0, "running": 0}
        self.mismatches: list[str] = []

    # --- the top's rules (docs/top.md), from the exported address map
    def legal(self, addr: int, write: bool, strb: int, running: bool) -> bool:
        if addr % 4 or (write and strb != 0xF):
            return False
        p = self.plan
        if addr >> 28 == 0:
            names = {a: n for n, a in self.ctrl.items()}
            return addr in names and not (write and self.access[names[addr]] == "ro")
        if addr >> 28 == p["glb_base"] >> 28:
            return not running and (addr - p["glb_base"]) // 4 < p["glb_words"]
        if addr >> 28 == p["glb_rows_base"] >> 28:        # two words of a row, whole writes
            return not running and (addr - p["glb_rows_base"]) // 8 < p["glb_words"] // 4
        if addr >> 31:
            tid = (addr >> p["tile_id_shift"]) & ((1 << 13) - 1)
            off = (addr & ((1 << p["tile_id_shift"]) - 1)) >> 2
            return tid in self.spans and off < self.spans[tid]
        return False

    def random_address(self) -> int:
        r, p = self.rng, self.plan
        kind = r.randrange(9)
        if kind == 0:
            return r.choice(list(self.ctrl.values()) + [4 * len(self.ctrl),
                                                        4 * r.randrange(len(self.ctrl), 1 << 20)])
        if kind == 1:
            return p["glb_base"] + 4 * r.choice(
                [r.randrange(p["glb_words"]), p["glb_words"] + r.randrange(1 << 16)]
                + list(self.inputs)[:1] + self.free[:4])
        if kind in (2, 3):
            return r.choice(self.bit_addrs)
        if kind == 4:
            tid = r.choice(list(self.spans))
            return p["tile_base"] | tid << p["tile_id_shift"] | r.randrange(self.spans[tid]
                                                                            + 8) << 2
        if kind == 5:
            return p["tile_base"] | r.randrange(1 << 13) << p["tile_id_shift"] | \
                r.randrange(1 << 10) << 2
        if kind == 6:
            return r.randrange(1 << 32)
        if kind == 7:
            return r.choice([p["glb_rows_base"] + 4 * r.randrange(p["glb_words"] // 2 + 8),
                             0x3000_0000, 0x4000_0000, 0x7FFF_FFFC, 0x0FFF_FFFC])
        return self.random_address() + r.choice([1, 2, 3])     # unaligned

    def expect(self, what: str, got, want) -> None:
        if got != want:
            self.mismatches.append(f"{what}: got {got}, expected {want}")

    async def one(self, running: bool) -> None:
        """One random access, its response checked."""
        r, h = self.rng, self.host
        addr = self.random_address()
        if r.random() < 0.5:                                   # read
            legal = self.legal(addr, False, 0xF, running)
            resp, data = await h.raw_read(addr)
            self.expect(f"read {addr:#010x} response", resp, OKAY if legal else SLVERR)
            if legal and resp == OKAY:
                want = self.known(addr, running)
                if want is not None:
                    self.counts["reads_checked"] += 1
                    self.expect(f"read {addr:#010x}", data, want)
        else:
            strb = r.choice([0xF, 0xF, 0x0, 0x1, 0x3, 0x7, 0xE, 0xC])
            value = self.safe_value(addr, running) if strb == 0xF else None
            legal = self.legal(addr, True, strb, running) and value is not None
            if value is None:
                value = r.randrange(1 << 32)
                if self.legal(addr, True, strb, running):
                    # a legal write that would change the app: make it a rejected one
                    strb = r.choice([0x0, 0x1, 0x3, 0x7, 0xE])
            resp = await h.raw_write(addr, value, strb)
            self.expect(f"write {addr:#010x} strb {strb:#x} response", resp,
                        OKAY if legal else SLVERR)
            if legal and resp == OKAY:
                self.wrote(addr, value)
        self.counts["transactions"] += 1
        self.counts["rejected"] += not legal
        self.counts["running"] += running

    def known(self, addr: int, running: bool):
        p = self.plan
        if addr in self.bits:
            return self.bits[addr]
        if addr >> 28 == p["glb_base"] >> 28 and not running:
            w = (addr - p["glb_base"]) // 4
            if w in self.scratch:
                return self.scratch[w]
        if addr == self.ctrl["DONE_CYCLE"]:
            return self.done_value
        if addr == self.ctrl["STALL"]:
            return self.stalled
        return None

    def safe_value(self, addr: int, running: bool):
        """The value a legal write to ``addr`` may carry without changing the application, or
        None if it has none."""
        p = self.plan
        if addr in self.target:
            return self.target[addr]
        if addr == self.ctrl["DONE_CYCLE"]:
            return self.done_cycle
        if addr == self.ctrl["STALL"] and running:
            return int(not self.stalled)
        if addr >> 28 == p["glb_base"] >> 28 and (addr - p["glb_base"]) // 4 in self.free:
            return self.rng.randrange(1 << 16)
        return None

    def wrote(self, addr: int, value: int) -> None:
        """A legal write (the traffic's or the host's) reached the top."""
        p = self.plan
        if addr in self.target:
            self.bits[addr] = value
        elif addr == self.ctrl["STALL"]:
            self.stalled = value & 1
        elif addr == self.ctrl["DONE_CYCLE"]:
            self.done_value = value
        elif addr >> 28 == p["glb_base"] >> 28:
            self.scratch[(addr - p["glb_base"]) // 4] = value & 0xFFFF

    async def maybe(self, running: bool) -> None:
        if self.rng.random() < self.rate:
            await self.one(running)


async def run_job(dut, j: dict, result: dict) -> None:
    """Steps 1-4 (module docstring) into ``result``."""
    run = await _Run.start(dut, j, result)
    await run.configure()
    await run.load()
    if not await run.run():
        return
    await run.read_outputs()
    if run.traffic:
        await run.check_after_traffic()
    result["completed"] = True


class Progress:
    """Progress lines for the parent process (``UBGEN_E2E_PROGRESS``: one JSON object a line,
    flushed as written: stage, done, total, clock cycles so far), so ``make sim`` shows the
    configure / load / run / read-back progress while the simulator runs."""

    def __init__(self, dut, path: str | None):
        self.dut = dut
        self.f = open(path, "a", buffering=1) if path else None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.f:
            self.f.write(json.dumps({"stage": stage, "done": done, "total": total,
                                     "cycle": cycle_now(self.dut),
                                     "t": round(time.perf_counter(), 3)}) + "\n")


CHUNK_WORDS = 4096        # GLB words per progress step of load and read back (a few bursts)


class StressBulk:
    """The bulk steps' burst engine of the reliability run (:class:`sim.tb.host.BurstEngine`):
    the random-timing AXI4 master, each chunk cut into bursts of random lengths (and, for the
    global buffer, random beat sizes: narrow bursts carry real data too), random bursts
    (:class:`BurstTraffic`) woven in between."""

    def __init__(self, axi: RawAxi, bursts: BurstTraffic, plan: dict, rng: random.Random):
        self.axi, self.bursts, self.plan, self.rng = axi, bursts, plan, rng

    def glb_row(self, word: int) -> int:
        return self.plan["glb_rows_base"] + 2 * word

    def _size(self, addr: int) -> int:
        """The beat size of a chunk: the row window's at random (64, 32 or 16 bits), the
        registers' 32 bits."""
        rows = addr >> 28 == self.plan["glb_rows_base"] >> 28
        return self.rng.choice([3, 3, 3, 2, 1]) if rows else 2

    def split(self, addr: int, data: bytes | int) -> list:
        """One chunk (bytes to write, or a length to read) as bursts of random lengths, checked
        by :func:`check_register_beats`."""
        bs = split(addr, data, self.rng, self._size(addr), self.rng.choice([1, 4, 16, 256]))
        check_register_beats(bs, self.plan)
        return bs

    async def write_bursts(self, chunks: list[tuple[int, bytes]], what: str) -> None:
        for addr, data in chunks:
            for b in self.split(addr, data):
                await self.bursts.maybe(0.5)
                resp = await self.axi.write(b)
                if resp != OKAY:
                    raise AssertionError(f"{what}: {b.describe()} answered {resp}")

    async def read_bursts(self, chunks: list[tuple[int, int]], what: str) -> list[bytes]:
        out = []
        for addr, n in chunks:
            bs = self.split(addr, n)
            beats = []
            for b in bs:
                await self.bursts.maybe(0.5)
                got = await self.axi.read(b)
                if any(resp != OKAY for resp, _ in got):
                    raise AssertionError(f"{what}: {b.describe()} answered "
                                         f"{[resp for resp, _ in got]}")
                beats.append(got)
            out.append(gather(bs, beats, addr, n))
        return out


def check_register_beats(bursts: list, plan: dict) -> None:
    """Registers take 32-bit beats (docs/top.md "The burst port"): a 64-bit beat reads both
    halves, so a chunk ending at a tile's last register would read the offset after it, which
    the tile refuses. ``AssertionError`` for a burst outside the row window in other beats."""
    rows = plan["glb_rows_base"] >> 28
    for b in bursts:
        if b.addr >> 28 != rows and b.size != 2:
            raise AssertionError(f"{b.describe()}: {8 << b.size}-bit beats on registers "
                                 "(they take 32-bit beats)")


def free_words(plan: dict, bundle: dict, rng: random.Random, n: int) -> list[int]:
    """``n`` (at most) random GLB words the application neither reads nor writes."""
    used = {w for w, _ in bundle["glb_inputs"]} | {w for w, _ in bundle["glb_outputs"]}
    words = plan["glb_words"]
    return [w for w in rng.sample(range(words), min(words, n)) if w not in used]


class _Run:
    """One job on the top: the host (cocotbext-axi masters, or the raw stress masters), the
    random traffic (stress runs only) and the result being filled, one method per step."""

    def __init__(self, dut, bundle: dict, plan: dict, host, bulk, traffic, bursts,
                 result: dict):
        self.dut, self.b, self.plan = dut, bundle, plan
        self.host, self.bulk, self.result = host, bulk, result
        self.traffic, self.bursts = traffic, bursts
        self.last: dict[int, int] = {}      # the configuration: address -> last value written
        self.addrs: list[int] = []          # the configured addresses that read back
        self.progress = Progress(dut, os.environ.get("UBGEN_E2E_PROGRESS"))
        self._background = None

    @classmethod
    async def start(cls, dut, j: dict, result: dict) -> "_Run":
        b, plan, seed = j["bundle"], j["plan"], j.get("stress")
        host = await start_host(dut, plan, axil=seed is None)
        result["clock"] = host.clock.impl
        if seed is None:
            return cls(dut, b, plan, host, host, None, None, result)
        host = RawHost(dut, plan, random.Random(seed))
        free = free_words(plan, b, random.Random(seed + 2), 128)
        traffic = Traffic(host, plan, b, random.Random(seed + 1), free[:64])
        bursts = BurstTraffic(RawAxi(dut, random.Random(seed + 3)), plan, b,
                              random.Random(seed + 4), free[64:])
        bulk = StressBulk(bursts.axi, bursts, plan, random.Random(seed + 5))
        result["stress"], result["stress_bursts"] = traffic.counts, bursts.counts
        return cls(dut, b, plan, host, bulk, traffic, bursts, result)

    def mark(self) -> tuple[float, int]:
        self._cpu0 = time.process_time()
        return time.perf_counter(), cycle_now(self.dut)

    def stage(self, name: str, t0: float, c0: int, what: str) -> None:
        sec, cyc = time.perf_counter() - t0, cycle_now(self.dut) - c0
        self.result["stages"][name] = {"seconds": round(sec, 2), "cycles": cyc,
                                       "cpu_seconds": round(time.process_time() - self._cpu0, 3)}
        self.result["log"].append(f"{name}: {what} ({sec:.1f} s, {cyc} clock cycles)")

    # --- stress: AXI4-Lite traffic running beside the host's own steps
    def background(self, on: bool, running: bool = False):
        """Start (``on``) the random AXI4-Lite traffic that runs concurrently with the host's
        steps (stress runs only; ``running``: a run is in progress), or return the coroutine
        that stops it."""
        if not self.traffic:
            return None
        if on:
            self._stop_background = False

            async def loop():
                while not self._stop_background:
                    await self.traffic.one(running=running)
                    await ClockCycles(self.dut.clk, self.traffic.rng.randrange(1, 12))
            self._background = cocotb.start_soon(loop())
            return None

        async def stop():
            self._stop_background = True
            await self._background
        return stop()

    async def bulk_step(self, coro):
        """``coro`` (a bulk step), with the background traffic around it in stress runs."""
        self.background(True)
        try:
            return await coro
        finally:
            stop = self.background(False)
            if stop is not None:
                await stop

    async def configure(self) -> None:
        """1. every bitstream word, then every readable configured register read back."""
        t0, c0 = self.mark()
        bits = [tuple(p) for p in self.b["bitstream"]]
        self.progress("configure", 0, 2 * len(bits))
        await self.bulk_step(write_registers(self.bulk, bits, "configure"))
        if self.traffic:                     # the configuration is in: the traffic may use it
            for a, v in bits:
                self.traffic.wrote(a, v)
        self.progress("configure", len(bits), 2 * len(bits))
        self.last = dict(bits)
        can_read = readable(self.plan)
        self.addrs = sorted(a for a in self.last if can_read(a))    # windows are write-only
        got = await self.bulk_step(read_registers(self.bulk, self.addrs, "read back"))
        if self.bursts:
            self.bursts.configured({a: self.last[a] for a in self.addrs})
        self.progress("configure", 2 * len(bits), 2 * len(bits))
        bad = [(a, self.last[a], g) for a, g in zip(self.addrs, got) if g != self.last[a]]
        self.result["readback_mismatches"] = len(bad)
        self.result["readback_first"] = [f"{a:#010x}: wrote {w:#x}, read {g:#x}"
                                         for a, w, g in bad[:SHOW]]
        self.stage("configure", t0, c0, f"{len(bits)} words written, {len(self.addrs)} read "
                                        f"back, {len(bad)} differ")

    async def load(self) -> None:
        """2. the inputs into the global buffer (stress: then the configuration and the inputs
        read back over AXI4-Lite, word by word, with the random traffic)."""
        host, b, traffic = self.host, self.b, self.traffic
        t0, c0 = self.mark()
        ins = [tuple(p) for p in b["glb_inputs"]]
        for k in range(0, len(ins), CHUNK_WORDS):
            self.progress("load", k, len(ins))
            await self.bulk_step(write_glb(self.bulk, ins[k:k + CHUNK_WORDS], "load"))
        self.progress("load", len(ins), len(ins))
        if self.bursts:
            self.bursts.loaded()
        if traffic:
            got = await read_many(host, self.addrs + [host.glb(w) for w, _ in ins],
                                  "check", traffic)
            want = [self.last[a] for a in self.addrs] + [v for _, v in ins]
            self.result["readback_mismatches"] += sum(g != w for g, w in zip(got, want))
        self.stage("load", t0, c0, f"{len(ins)} GLB words")

    async def run(self) -> bool:
        """3. ``DONE_CYCLE``, ``START``, poll ``DONE``, read the counters; False (with
        ``abort`` in the result) when ``DONE`` does not rise."""
        host, b, traffic, result = self.host, self.b, self.traffic, self.result
        t0, c0 = self.mark()
        await host.write(host.ctrl("DONE_CYCLE"), b["done_cycle"])
        if traffic:
            traffic.done_value = b["done_cycle"]
        await host.write(host.ctrl("START"), 1)
        if self.bursts:
            self.bursts.running = True
        if not await self.wait_done(c0):
            return False
        if traffic and traffic.stalled:
            await host.write(host.ctrl("STALL"), 0)
            traffic.stalled = 0
        for name in ("CYCLE", "ERROR", "FIRST_WRITE", "LAST_WRITE", "WRITES"):
            result[name.lower()] = await host.read(host.ctrl(name))
        await host.write(host.ctrl("START"), 0)
        if self.bursts:
            self.bursts.running = False
            self.bursts.ran()
        self.stage("run", t0, c0, f"DONE at CYCLE {result['cycle']}; ERROR {result['error']}; "
                                  f"{result['writes']} GLB writes, cycles "
                                  f"{result['first_write']}..{result['last_write']}")
        return True

    async def wait_done(self, c0: int) -> bool:
        """Poll ``DONE`` (stress: with random traffic on both ports and ``STALL`` released at
        random). The host knows when the run should end: it sleeps (no Python per cycle) in
        steps of about :data:`PROGRESS_SECONDS` of wall time until ``DONE_CYCLE``, reporting
        progress, then polls every :data:`FINAL_POLL_CYCLES`."""
        host, traffic = self.host, self.traffic
        done_cycle = self.b["done_cycle"]
        limit = 2 * (done_cycle + 1000) + 10_000
        step = POLL_CYCLES
        fixed = int(os.environ.get("UBGEN_E2E_POLL", "0"))     # bench/sim_speed.py: poll-256
        self.background(True, running=True)
        while True:
            if traffic:
                for _ in range(self.bursts.rng.randrange(3)):
                    await self.bursts.one()
                if traffic.stalled and traffic.rng.random() < 0.5:
                    await host.write(host.ctrl("STALL"), 0)
                    traffic.stalled = 0
            ran = cycle_now(self.dut) - c0
            self.progress("run", min(ran, done_cycle), done_cycle)
            if await host.read(host.ctrl("DONE")):
                stop = self.background(False)
                if stop is not None:
                    await stop
                return True
            if ran > limit:
                self.result["abort"] = f"DONE did not rise within {limit} clock cycles"
                stop = self.background(False)
                if stop is not None:
                    await stop
                return False
            if not traffic:
                t = time.perf_counter()
                await Timer(step * CLOCK_NS, unit="ns")
                rate = step / max(time.perf_counter() - t, 1e-6)
                left = done_cycle - (cycle_now(self.dut) - c0)
                if fixed:
                    step = fixed
                elif left > POLL_CYCLES:
                    step = max(POLL_CYCLES, min(int(rate * PROGRESS_SECONDS), left))
                else:
                    step = max(left, FINAL_POLL_CYCLES)

    async def read_outputs(self) -> None:
        """4. every expected output word read from the global buffer and compared."""
        t0, c0 = self.mark()
        outs = sorted(self.b["glb_outputs"])
        got = []
        for k in range(0, len(outs), CHUNK_WORDS):
            self.progress("read back", k, len(outs))
            got += await self.bulk_step(read_glb(self.bulk, [w for w, _ in outs[k:k + CHUNK_WORDS]],
                                                 "outputs"))
        self.progress("read back", len(outs), len(outs))
        bad = [(w, e, g) for (w, e), g in zip(outs, got) if g != e]
        self.result["output_mismatches"] = len(bad)
        self.result["output_first"] = [f"GLB word {w}: read {g:#06x}, expected {e:#06x}"
                                       for w, e, g in bad[:SHOW]]
        self.stage("read back", t0, c0, f"{len(outs)} output words, {len(bad)} differ")

    async def check_after_traffic(self) -> None:
        """Stress: the scratch words both traffics wrote (each read back over its own port)
        and the inputs unchanged; the traffics' wrong responses into the result."""
        host, b, traffic, bursts, result = (self.host, self.b, self.traffic, self.bursts,
                                            self.result)
        words = sorted(traffic.scratch) + [w for w, _ in b["glb_inputs"]]
        got = await read_many(host, [host.glb(w) for w in words], "scratch")
        want = {**{w: v for w, v in b["glb_inputs"]}, **traffic.scratch}
        result["readback_mismatches"] += sum(g != want[w] for w, g in zip(words, got))
        mine = bursts.scratch_words()
        got = await read_glb(self.bulk, sorted(mine), "burst scratch") if mine else []
        result["readback_mismatches"] += sum(g != mine[w] for w, g in zip(sorted(mine), got))
        wrong = traffic.mismatches + bursts.mismatches
        result["stress_mismatches"] = len(wrong)
        result["stress_first"] = wrong[:SHOW]
        result["log"].append(
            f"stress: {traffic.counts['transactions']} random AXI4-Lite transactions "
            f"({traffic.counts['running']} while running), {traffic.counts['rejected']} "
            f"rejected, {traffic.counts['reads_checked']} read values checked; "
            f"{bursts.counts['bursts']} random bursts ({bursts.counts['beats']} beats, "
            f"{bursts.counts['running']} while running, {bursts.counts['refused_beats']} read "
            f"beats refused, {bursts.counts['reads_checked']} read beats checked); "
            f"{len(wrong)} wrong responses")


@cocotb.test()
async def run_app(dut):
    j = job()
    result = {"app": j["bundle"]["app"], "completed": False, "stages": {}, "log": [],
              "readback_mismatches": 0, "readback_first": [], "output_mismatches": 0,
              "output_first": []}
    try:
        if "tiling" in j["bundle"] or "blocks" in j["bundle"]:
            from .tiled import run_tiled_job
            await run_tiled_job(dut, j, result)
        else:
            await run_job(dut, j, result)
    except BusHang as e:
        result["abort"] = f"bus hang: {e}"
    except AssertionError as e:       # an unexpected response: recorded, then the test fails
        result["abort"] = str(e)
    finally:
        result["sim_cycles"] = cycle_now(dut)
        with open(os.environ["UBGEN_E2E_RESULT"], "w") as f:
            json.dump(result, f)
    assert result["completed"], result.get("abort")
    assert result["readback_mismatches"] == 0, result["readback_first"]
    assert result["output_mismatches"] == 0, result["output_first"]
    assert not result.get("stress_mismatches"), result.get("stress_first")
