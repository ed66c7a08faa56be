"""Random bursts on ``cgra_top``'s AXI4 port for the reliability run (docs/simulation.md
"Reliability"), with the responses docs/top.md specifies, computed from the exported address
map (:func:`top_space`) by the reference :mod:`sim.tb.axi4_model`.

The bursts keep the configured application intact: they write only the global buffer's free
words (never an input or output word: those lanes have no strobes), tile registers with the
values the bitstream gives them, and addresses the top must refuse (read-only control
registers, offsets beyond a tile's registers, holes, rows past the end of the global buffer,
the global buffer while running, bursts the protocol forbids). Reads go anywhere; the read data
of the free words written, the inputs (between load and run) and the configuration are
checked. Bursts cross region ends, start unaligned, are narrow (1, 2 or 4-byte beats) or
refused (a size wider than the bus, the reserved type, a malformed WRAP).
"""
from __future__ import annotations

import random

from .axi4_model import (BUS_BYTES, FIXED, INCR, WRAP, Burst, Space, beat_lanes, burst_beats,
                         check_read, expect_write)
from .axi_raw import RawAxi

__all__ = ["top_space", "BurstTraffic"]

TILE_ID_BITS = 13
GLB_WORD_BYTES = 2


def top_space(plan: dict, running) -> Space:
    """The top's rules for the burst port (docs/top.md) from the host plan
    (:func:`sim.bundle.host_plan`); ``running()`` says whether a run is in progress."""
    access = {a: plan["control_access"][n] for n, a in plan["control"].items()}
    glb_base, rows_base, words = plan["glb_base"], plan["glb_rows_base"], plan["glb_words"]
    spans = {int(k): v for k, v in plan["tile_spans"].items()}
    shift = plan["tile_id_shift"]

    def in_tile(a: int) -> bool:
        tid, off = (a >> shift) & ((1 << TILE_ID_BITS) - 1), (a & ((1 << shift) - 1)) >> 2
        return bool(a >> 31) and tid in spans and off < spans[tid]

    def ok(a: int, write: bool) -> bool:
        region = a >> 28
        if region == 0:
            return a in access and (not write or access[a] == "rw")
        if region == glb_base >> 28:
            return not running() and (a - glb_base) // 4 < words
        return in_tile(a)

    return Space(wide=lambda a: a >> 28 == rows_base >> 28,
                 row_ok=lambda base: not running() and (base - rows_base) // BUS_BYTES
                 < words * GLB_WORD_BYTES // BUS_BYTES,
                 read_ok=lambda a: ok(a, False), write_ok=lambda a: ok(a, True))


class BurstTraffic:
    """Random bursts (module docstring) on ``axi``; ``free``: the GLB words it may write."""

    def __init__(self, axi: RawAxi, plan: dict, bundle: dict, rng: random.Random,
                 free: list[int]):
        self.axi, self.plan, self.rng, self.free = axi, plan, rng, set(free)
        self.running = False
        self.tracked: set[int] = set()       # byte addresses whose value the model knows
        self.space = top_space(plan, lambda: self.running)
        self.space.keep = lambda a: a in self.tracked
        self.rows = plan["glb_rows_base"]
        self.config = {}                     # readable configuration address -> value
        self.spans = {int(k): v for k, v in plan["tile_spans"].items()}
        self.inputs = {w: v for w, v in bundle["glb_inputs"]}
        self.outputs = {w for w, _ in bundle["glb_outputs"]}
        self.bitstream = {a for a, _ in bundle["bitstream"]}
        self.scratch: dict[int, int] = {}
        self.counts = {"bursts": 0, "beats": 0, "refused_beats": 0, "running": 0,
                       "reads_checked": 0}
        self.mismatches: list[str] = []

    # --- what the model knows
    def _track(self, base: int, values: dict[int, int]) -> None:
        """Known bytes: ``values`` maps byte offsets from ``base`` to bytes."""
        for k, v in values.items():
            self.tracked.add(base + k)
            self.space.mem[base + k] = v

    def configured(self, config: dict[int, int]) -> None:
        """The configuration is in: its readable registers' values are known."""
        self.config = dict(config)
        for a, v in config.items():
            self._track(a, {k: v >> 8 * k & 0xFF for k in range(4)})

    def loaded(self) -> None:
        """The inputs are in the global buffer."""
        for w, v in self.inputs.items():
            self._track(self.rows + GLB_WORD_BYTES * w, {0: v & 0xFF, 1: v >> 8})

    def ran(self) -> None:
        """A run wrote the outputs: output words are no longer known as inputs."""
        for w in self.outputs:
            for k in range(GLB_WORD_BYTES):
                self.tracked.discard(self.rows + GLB_WORD_BYTES * w + k)

    # --- random bursts
    def _address(self) -> int:
        r, p = self.rng, self.plan
        kind = r.randrange(8)
        if kind <= 2:                                            # the row window
            anchors = sorted(self.free)[:8] + list(self.inputs)[:2] + [p["glb_words"] - 3]
            return self.rows + GLB_WORD_BYTES * r.choice(anchors) + r.randrange(-8, 8)
        if kind <= 4:                                            # tile registers
            if self.config and r.random() < 0.6:
                return r.choice(sorted(self.config)) + r.choice([-8, -4, 0, 0, 4, 6])
            tid = r.choice(sorted(self.spans))
            return (p["tile_base"] | tid << p["tile_id_shift"]) + 4 * max(
                0, self.spans[tid] - r.randrange(8))
        if kind == 5:                                            # control
            return r.randrange(0, 0x40)
        if kind == 6:                                            # the word window
            return p["glb_base"] + 4 * r.choice([0, p["glb_words"] - 2, r.randrange(1 << 12)])
        return r.choice([0x3000_0000, 0x4000_0000, 0x7FFF_FFF0, 0x0FFF_FFF8]) + r.randrange(8)

    def _beat(self, a: int, size: int) -> tuple[int, int]:
        """A write beat's data and strobes (within the beat's lanes) that change nothing the
        application uses: free words of the row window; the configuration's own values; and
        accesses the top must refuse (past the end of the global buffer, read-only or missing
        registers, part of a 32-bit register)."""
        r, base = self.rng, a - a % BUS_BYTES
        lanes = sum(1 << x for x in beat_lanes(a, size))
        data, strobes = r.randrange(1 << 64), 0
        if self.space.wide(a):
            for k in range(0, BUS_BYTES, GLB_WORD_BYTES):
                w = (base - self.rows + k) // GLB_WORD_BYTES
                if lanes >> k & 0b11 == 0b11 and (w in self.free or w >= self.plan["glb_words"]):
                    strobes |= 0b11 << k
            return data, strobes
        for h in (0, 1):
            reg, mask = base + 4 * h, lanes >> 4 * h & 0xF
            if not mask:
                continue
            if mask != 0xF or not self.space.write_ok(reg):     # refused: any data
                strobes |= mask << 4 * h
            elif reg in self.config:                            # its own value again
                data = data & ~(0xFFFF_FFFF << 32 * h) | self.config[reg] << 32 * h
                strobes |= 0xF << 4 * h
        return data, strobes

    def random_burst(self) -> Burst:
        r = self.rng
        write = r.random() < 0.5
        size = r.choice([3, 3, 3, 2, 1, 0, 3 + r.randrange(1, 5)])
        kind = r.choice([INCR, INCR, INCR, FIXED, WRAP, 3])
        length = r.choice([0, 1, 3, 7, 15, r.randrange(64)])
        addr = self._address() & 0xFFFF_FFFF
        if kind == WRAP and r.random() < 0.8:
            length = r.choice([1, 3, 7, 15])
            addr -= addr % (1 << min(size, 3))
        b = Burst(write, addr, length, size, kind, id=r.randrange(16))
        if write:
            beats = burst_beats(addr, length, size, kind)
            for a in beats or [addr] * (length + 1):
                d, s = self._beat(a, size) if beats else (r.randrange(1 << 64), 0xFF)
                b.data.append(d)
                b.strobes.append(s)
        return b

    async def one(self) -> None:
        """One random burst, its responses (and read data) checked."""
        b = self.random_burst()
        beats = burst_beats(b.addr, b.length, b.size, b.kind)
        if b.write:
            self._will_write(b, beats)
            want = expect_write(self.space, b)
            got = await self.axi.write(b)
            if got != want:
                self.mismatches.append(f"{b.describe()}: BRESP {got}, expected {want}")
        else:
            got = await self.axi.read(b)
            self.mismatches += check_read(self.space, b, got)
            self.counts["reads_checked"] += sum(
                bool(self.space.read_beat(a, b.size)[1]) for a in beats or [])
            self.counts["refused_beats"] += sum(resp != 0 for resp, _ in got)
        self.counts["bursts"] += 1
        self.counts["beats"] += b.length + 1
        self.counts["running"] += self.running

    def _will_write(self, b: Burst, beats) -> None:
        """Start tracking the free words a write burst will set (where it will take effect)."""
        if beats is None:
            return
        for a, s in zip(beats, b.strobes):
            base = a - a % BUS_BYTES
            if self.space.wide(a) and s and self.space.row_ok(base):
                for k in range(0, BUS_BYTES, GLB_WORD_BYTES):
                    if s >> k & 0b11 == 0b11:
                        w = (base - self.rows + k) // GLB_WORD_BYTES
                        self.tracked.update((base + k, base + k + 1))
                        self.scratch[w] = None        # value known from the model's memory

    async def maybe(self, rate: float = 0.3) -> None:
        if self.rng.random() < rate:
            await self.one()

    def scratch_words(self) -> dict[int, int]:
        """The free words written, with the values they must hold."""
        return {w: self.space.mem[self.rows + GLB_WORD_BYTES * w]
                | self.space.mem[self.rows + GLB_WORD_BYTES * w + 1] << 8 for w in self.scratch}
