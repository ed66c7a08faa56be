"""What an AXI4 burst on ``cgra_top``'s burst port must do, in plain Python (no cocotb, no
Amaranth): the beat addresses of a burst (AMBA AXI4, "Burst address": FIXED, INCR, WRAP), the
byte lanes a beat carries, and the expected responses and effects of a burst on a target
described by a :class:`Space` (docs/top.md "The burst port"). The reference of the burst
port's gateware tests (tests/ubgen/test_axi4.py) and of the reliability run's random bursts
(:mod:`sim.tb.test_e2e`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

FIXED, INCR, WRAP = 0, 1, 2
OKAY, SLVERR = 0, 2
BUS_BYTES = 8                      # 64-bit data
MAX_SIZE = 3


def burst_beats(addr: int, length: int, size: int, kind: int) -> list[int] | None:
    """The address of each of the ``length + 1`` beats, or None for a burst the protocol does
    not allow (size wider than the bus, the reserved type 3, WRAP not of 2/4/8/16 beats or not
    aligned to the size)."""
    n, nbytes = length + 1, 1 << size
    if size > MAX_SIZE or kind not in (FIXED, INCR, WRAP):
        return None
    if kind == WRAP and (n not in (2, 4, 8, 16) or addr % nbytes):
        return None
    out, a = [], addr
    for _ in range(n):
        out.append(a)
        if kind == FIXED:
            continue
        nxt = a - a % nbytes + nbytes
        if kind == WRAP:
            span = n * nbytes
            low = a - a % span
            nxt = low + (nxt - low) % span
        a = nxt & 0xFFFF_FFFF
    return out


def beat_lanes(addr: int, size: int) -> range:
    """The byte lanes of the 64-bit bus a beat at ``addr`` of ``2**size`` bytes carries (the
    first beat of an unaligned burst carries fewer)."""
    nbytes = 1 << size
    low = addr % BUS_BYTES
    high = (addr - addr % nbytes) % BUS_BYTES + nbytes
    return range(low, high)


def lane_strobes(addr: int, size: int) -> int:
    """The write strobes a master sets for a beat: its lanes."""
    return sum(1 << b for b in beat_lanes(addr, size))


@dataclass
class Space:
    """A target's rules and state, as the burst port sees it: ``wide(addr)`` is True in the row
    window (one 64-bit row per access, byte strobes); there ``row_ok(row_addr)`` says whether
    the row exists. Elsewhere the 32-bit registers: ``read_ok(addr)`` / ``write_ok(addr)``
    (``addr`` a multiple of 4). ``mem`` holds the known bytes (address -> byte); reads of
    unknown bytes are not checked."""
    wide: Callable[[int], bool]
    row_ok: Callable[[int], bool]
    read_ok: Callable[[int], bool]
    write_ok: Callable[[int], bool]
    mem: dict[int, int] = field(default_factory=dict)
    keep: Callable[[int], bool] = lambda addr: True    # bytes whose value the model tracks

    def _store(self, base: int, data: int, strobes: int) -> None:
        for b in range(BUS_BYTES):
            if strobes >> b & 1 and self.keep(base + b):
                self.mem[base + b] = data >> 8 * b & 0xFF

    def write_beat(self, addr: int, data: int, strobes: int) -> bool:
        """Apply one write beat; False when an access of it was refused."""
        base = addr - addr % BUS_BYTES
        if self.wide(addr):
            if not strobes:
                return True
            if not self.row_ok(base):
                return False
            self._store(base, data, strobes)
            return True
        ok = True
        for h in (0, 1):
            s = strobes >> 4 * h & 0xF
            reg = base + 4 * h
            if not s:
                continue
            if s != 0xF or not self.write_ok(reg):
                ok = False
                continue
            self._store(base, data, 0xF << 4 * h)
        return ok

    def read_beat(self, addr: int, size: int) -> tuple[bool, dict[int, int]]:
        """(accepted, the bytes of the beat's lanes the model knows)."""
        base = addr - addr % BUS_BYTES
        if self.wide(addr):
            ok = self.row_ok(base)
        else:
            halves = (0, 1) if size == MAX_SIZE else ((addr >> 2) & 1,)
            ok = all(self.read_ok(base + 4 * h) for h in halves)
        known = {b: self.mem[base + b] for b in beat_lanes(addr, size) if base + b in self.mem}
        return ok, known


@dataclass
class Burst:
    """One random burst (what a master sends)."""
    write: bool
    addr: int
    length: int
    size: int
    kind: int
    data: list[int] = field(default_factory=list)       # write: one 64-bit word per beat
    strobes: list[int] = field(default_factory=list)    # write: one strobe mask per beat
    id: int = 0

    def describe(self) -> str:
        return (f"{'write' if self.write else 'read'} {self.addr:#010x} len {self.length} "
                f"size {self.size} {['FIXED', 'INCR', 'WRAP', 'reserved'][self.kind]}")


def expect_write(space: Space, b: Burst) -> int:
    """Apply a write burst to ``space``; the BRESP it must get."""
    beats = burst_beats(b.addr, b.length, b.size, b.kind)
    if beats is None:
        return SLVERR
    ok = True
    for a, d, s in zip(beats, b.data, b.strobes):
        ok &= space.write_beat(a, d, s)
    return OKAY if ok else SLVERR


def check_read(space: Space, b: Burst, got: list[tuple[int, int]]) -> list[str]:
    """Compare a read burst's ``(rresp, rdata)`` beats with ``space``; the differences."""
    beats = burst_beats(b.addr, b.length, b.size, b.kind)
    out = []
    if len(got) != b.length + 1:
        return [f"{b.describe()}: {len(got)} beats, expected {b.length + 1}"]
    for i, (resp, data) in enumerate(got):
        if beats is None:
            if resp != SLVERR:
                out.append(f"{b.describe()}: beat {i} answered {resp}, expected SLVERR")
            continue
        ok, known = space.read_beat(beats[i], b.size)
        if resp != (OKAY if ok else SLVERR):
            out.append(f"{b.describe()}: beat {i} at {beats[i]:#010x} answered {resp}, "
                       f"expected {OKAY if ok else SLVERR}")
        elif ok:
            bad = [lane for lane, v in known.items() if data >> 8 * lane & 0xFF != v]
            if bad:
                out.append(f"{b.describe()}: beat {i} at {beats[i]:#010x} lanes {bad} differ")
    return out
