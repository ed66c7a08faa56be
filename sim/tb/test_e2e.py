"""The end-to-end cocotb testbench (docs/simulation.md): one application's bundle
(:mod:`sim.bundle`) run on ``cgra_top`` through its AXI4-Lite port, exactly as a host driver
does it (cocotbext-axi ``AxiLiteMaster``, docs/top.md "A host run"):

1. configure: write every bitstream word, then read every configured register back and compare
   (the last value written to each address);
2. load: write the input words into the global buffer at the bundle's words;
3. run: write ``DONE_CYCLE``, write ``START`` = 1, poll ``DONE`` (every 256 cycles); read
   ``CYCLE``, ``ERROR`` and the performance counters ``FIRST_WRITE``, ``LAST_WRITE``,
   ``WRITES``; write ``START`` = 0;
4. read back: read every expected output word from the global buffer and compare bit for bit.

Run by :func:`sim.array_run.run_bundle`, which passes the job (bundle and the host's addresses
from the exported address map) in ``UBGEN_E2E_JOB``; the testbench writes what it observed to
``UBGEN_E2E_RESULT`` (the verdict is :func:`sim.array_run.verdict`'s) and fails the cocotb test
when the run does not pass.

Host transactions are issued back to back (the master keeps several in flight; the slave
serves one at a time), as a driver streaming a configuration would.

With ``"stress": seed`` in the job, the same steps run on the bit-level master
:class:`sim.tb.axil_raw.RawHost` (random AW/W orders, gaps and back-pressure) with random
traffic woven in (:class:`Traffic`): random addresses over every region, random strobes, reads
and writes while stopped and while running, ``STALL`` toggled during the run. Every access's
response must be the one docs/top.md specifies (SLVERR for every rejected access), no handshake
may hang, the configuration, the inputs and the scratch GLB words the traffic wrote must read
back unchanged, and the application must still produce its exact output and cycles.
"""
from __future__ import annotations

import json
import os
import random
import time

import cocotb
from cocotb.triggers import Timer
from cocotb.utils import get_sim_time

from .axil_raw import SLVERR, OKAY, BusHang, RawHost
from .host import start_host

SHOW = 5                  # mismatches kept in the result, per kind
POLL_CYCLES = 256         # host poll period while waiting for DONE (a timer: no per-cycle
                          # Python callbacks, the model runs at its own speed)
CLOCK_NS = 10             # sim/tb/host.py's clock


def job() -> dict:
    with open(os.environ["UBGEN_E2E_JOB"]) as f:
        return json.load(f)


async def write_many(host, pairs, what: str, traffic=None) -> None:
    """Write ``(address, value)`` pairs back to back; every response must be OKAY."""
    if not hasattr(host, "axil"):
        for a, v in pairs:
            if traffic:
                await traffic.maybe(running=False)
            await host.write(a, v)
            if traffic:
                traffic.wrote(a, v)
        return
    events = [host.axil.init_write(a, int(v).to_bytes(4, "little")) for a, v in pairs]
    for (a, _), ev in zip(pairs, events):
        await ev.wait()
        if int(ev.data.resp) != 0:
            raise AssertionError(f"{what}: write {a:#010x} answered {ev.data.resp}")


async def read_many(host, addresses, what: str, traffic=None) -> list[int]:
    """Read ``addresses`` back to back; every response must be OKAY."""
    if not hasattr(host, "axil"):
        out = []
        for a in addresses:
            if traffic:
                await traffic.maybe(running=False)
            out.append(await host.read(a))
        return out
    events = [host.axil.init_read(a, 4) for a in addresses]
    out = []
    for a, ev in zip(addresses, events):
        await ev.wait()
        if int(ev.data.resp) != 0:
            raise AssertionError(f"{what}: read {a:#010x} answered {ev.data.resp}")
        out.append(int.from_bytes(ev.data.data, "little"))
    return out


def readable(plan: dict):
    """``addr -> bool``: not inside a write-only window (sim.bundle.write_only_ranges)."""
    import bisect
    ranges = sorted(plan.get("write_only", []))
    starts = [a for a, _ in ranges]

    def ok(addr: int) -> bool:
        i = bisect.bisect_right(starts, addr) - 1
        return i < 0 or addr > ranges[i][1]
    return ok


def cycle_now(dut) -> int:
    return int(get_sim_time(unit="ns") // 10)


class Traffic:
    """Random host accesses with the responses docs/top.md specifies, which keep the
    configured application intact: legal writes only re-write a configuration word with its
    value, write scratch GLB words (outside the app's words; stopped), ``DONE_CYCLE`` (with its
    value) and ``STALL`` (running); every other write is one the top must reject (illegal
    address, read-only register, partial strobe, unaligned, GLB while running)."""

    def __init__(self, host: RawHost, plan: dict, bundle: dict, rng: random.Random,
                 rate: float = 0.5):
        self.host, self.plan, self.rng, self.rate = host, plan, rng, rate
        can_read = readable(plan)
        self.target = {a: v for a, v in bundle["bitstream"] if can_read(a)}   # readable config
        self.bits: dict[int, int] = {}        # configuration words known to be in the top
        self.bit_addrs = sorted(self.target)
        self.inputs = {w: v for w, v in bundle["glb_inputs"]}
        used = set(self.inputs) | {w for w, _ in bundle["glb_outputs"]}
        words = plan["glb_words"]
        self.free = [w for w in self.rng.sample(range(words), min(words, 64)) if w not in used]
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
            return r.choice([0x2000_0000, 0x4000_0000, 0x7FFF_FFFC, 0x0FFF_FFFC])
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


class _Run:
    """One job on the top: the host (AXI master or the raw stress host), the random traffic
    (stress runs only) and the result being filled, one method per step."""

    def __init__(self, dut, bundle: dict, plan: dict, host, traffic, result: dict):
        self.dut, self.b, self.plan = dut, bundle, plan
        self.host, self.traffic, self.result = host, traffic, result
        self.last: dict[int, int] = {}      # the configuration: address -> last value written
        self.addrs: list[int] = []          # the configured addresses that read back

    @classmethod
    async def start(cls, dut, j: dict, result: dict) -> "_Run":
        b, plan = j["bundle"], j["plan"]
        host = await start_host(dut, plan, axil=j.get("stress") is None)
        traffic = None
        if j.get("stress") is not None:
            host = RawHost(dut, plan, random.Random(j["stress"]))
            traffic = Traffic(host, plan, b, random.Random(j["stress"] + 1))
            result["stress"] = traffic.counts
        return cls(dut, b, plan, host, traffic, result)

    def mark(self) -> tuple[float, int]:
        return time.perf_counter(), cycle_now(self.dut)

    def stage(self, name: str, t0: float, c0: int, what: str) -> None:
        sec, cyc = time.perf_counter() - t0, cycle_now(self.dut) - c0
        self.result["stages"][name] = {"seconds": round(sec, 2), "cycles": cyc}
        self.result["log"].append(f"{name}: {what} ({sec:.1f} s, {cyc} clock cycles)")

    async def configure(self) -> None:
        """1. every bitstream word, then every readable configured register read back."""
        t0, c0 = self.mark()
        bits = [tuple(p) for p in self.b["bitstream"]]
        await write_many(self.host, bits, "configure", self.traffic)
        self.last = dict(bits)
        can_read = readable(self.plan)
        self.addrs = sorted(a for a in self.last if can_read(a))    # windows are write-only
        got = await read_many(self.host, self.addrs, "read back", self.traffic)
        bad = [(a, self.last[a], g) for a, g in zip(self.addrs, got) if g != self.last[a]]
        self.result["readback_mismatches"] = len(bad)
        self.result["readback_first"] = [f"{a:#010x}: wrote {w:#x}, read {g:#x}"
                                         for a, w, g in bad[:SHOW]]
        self.stage("configure", t0, c0, f"{len(bits)} words written, {len(self.addrs)} read "
                                        f"back, {len(bad)} differ")

    async def load(self) -> None:
        """2. the inputs into the global buffer (stress: the configuration and the inputs
        read back after the traffic)."""
        host, b, traffic = self.host, self.b, self.traffic
        t0, c0 = self.mark()
        await write_many(host, [(host.glb(w), v) for w, v in b["glb_inputs"]], "load", traffic)
        if traffic:
            got = await read_many(host, self.addrs + [host.glb(w) for w, _ in b["glb_inputs"]],
                                  "check", traffic)
            want = [self.last[a] for a in self.addrs] + [v for _, v in b["glb_inputs"]]
            self.result["readback_mismatches"] += sum(g != w for g, w in zip(got, want))
        self.stage("load", t0, c0, f"{len(b['glb_inputs'])} GLB words")

    async def run(self) -> bool:
        """3. ``DONE_CYCLE``, ``START``, poll ``DONE``, read the counters; False (with
        ``abort`` in the result) when ``DONE`` does not rise."""
        host, b, traffic, result = self.host, self.b, self.traffic, self.result
        t0, c0 = self.mark()
        await host.write(host.ctrl("DONE_CYCLE"), b["done_cycle"])
        if traffic:
            traffic.done_value = b["done_cycle"]
        await host.write(host.ctrl("START"), 1)
        if not await self.wait_done(c0):
            return False
        if traffic and traffic.stalled:
            await host.write(host.ctrl("STALL"), 0)
            traffic.stalled = 0
        for name in ("CYCLE", "ERROR", "FIRST_WRITE", "LAST_WRITE", "WRITES"):
            result[name.lower()] = await host.read(host.ctrl(name))
        await host.write(host.ctrl("START"), 0)
        self.stage("run", t0, c0, f"DONE at CYCLE {result['cycle']}; ERROR {result['error']}; "
                                  f"{result['writes']} GLB writes, cycles "
                                  f"{result['first_write']}..{result['last_write']}")
        return True

    async def wait_done(self, c0: int) -> bool:
        """Poll ``DONE`` (stress: with random traffic and ``STALL`` released at random)."""
        host, traffic = self.host, self.traffic
        limit = 2 * (self.b["done_cycle"] + 1000) + 10_000
        while True:
            if traffic:
                for _ in range(traffic.rng.randrange(4)):
                    await traffic.one(running=True)
                if traffic.stalled and traffic.rng.random() < 0.5:
                    await host.write(host.ctrl("STALL"), 0)
                    traffic.stalled = 0
            if await host.read(host.ctrl("DONE")):
                return True
            if cycle_now(self.dut) - c0 > limit:
                self.result["abort"] = f"DONE did not rise within {limit} clock cycles"
                return False
            if not traffic:
                await Timer(POLL_CYCLES * CLOCK_NS, unit="ns")

    async def read_outputs(self) -> None:
        """4. every expected output word read from the global buffer and compared."""
        host = self.host
        t0, c0 = self.mark()
        outs = self.b["glb_outputs"]
        got = await read_many(host, [host.glb(w) for w, _ in outs], "outputs", self.traffic)
        bad = [(w, e, g) for (w, e), g in zip(outs, got) if g != e]
        self.result["output_mismatches"] = len(bad)
        self.result["output_first"] = [f"GLB word {w}: read {g:#06x}, expected {e:#06x}"
                                       for w, e, g in bad[:SHOW]]
        self.stage("read back", t0, c0, f"{len(outs)} output words, {len(bad)} differ")

    async def check_after_traffic(self) -> None:
        """Stress: the scratch words the traffic wrote, and the inputs, unchanged; the
        traffic's wrong responses into the result."""
        host, b, traffic, result = self.host, self.b, self.traffic, self.result
        words = sorted(traffic.scratch) + [w for w, _ in b["glb_inputs"]]
        got = await read_many(host, [host.glb(w) for w in words], "scratch")
        want = {**{w: v for w, v in b["glb_inputs"]}, **traffic.scratch}
        result["readback_mismatches"] += sum(g != want[w] for w, g in zip(words, got))
        result["stress_mismatches"] = len(traffic.mismatches)
        result["stress_first"] = traffic.mismatches[:SHOW]
        result["log"].append(
            f"stress: {traffic.counts['transactions']} random transactions "
            f"({traffic.counts['running']} while running), {traffic.counts['rejected']} "
            f"rejected, {traffic.counts['reads_checked']} read values checked, "
            f"{len(traffic.mismatches)} wrong responses")


@cocotb.test()
async def run_app(dut):
    j = job()
    result = {"app": j["bundle"]["app"], "completed": False, "stages": {}, "log": [],
              "readback_mismatches": 0, "readback_first": [], "output_mismatches": 0,
              "output_first": []}
    try:
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
