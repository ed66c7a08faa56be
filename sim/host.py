"""The host runtime of ``cgra_top`` (docs/simulation.md "Host runtime and tiled runs";
docs/top.md "A host run"): what a board driver does with a compiled app, over any bus that
moves 32-bit words.

    acc = Accelerator(bus, plan)           # plan: sim.bundle.host_plan(address map)
    await acc.configure(bitstream)         # tile registers (read back where readable)
    await acc.write([(glb_word, value)])   # inputs into the global buffer
    counters = await acc.run(done_cycle)   # START, poll DONE, performance counters, STOP
    values = await acc.read(glb_words)     # outputs from the global buffer
    image = await acc.run_image(bundle, arrays)   # a tiled app: every tile, stitched

The bus is anything with ``async write_many([(address, value)])``, ``async
read_many([address]) -> [value]`` (32-bit words at byte addresses; an AXI4-Lite master issues
them one by one, a burst-capable one in bursts) and ``async wait(cycles)`` (let the hardware
run between polls). The cocotb testbench passes its AXI master (``sim.tb.tiled``); a real
board's driver would pass its memory-mapped port.

A tiled app (``compiler.tiling``, the bundle of ``compiler.backend.bundle.make_tiled_bundle``)
is one configuration run once per tile: for each tile the runtime gathers the tile's input
words from the whole arrays (``input_map`` at the tile's ``lows``), runs, reads the tile's
output words (``output_map``) and writes the tile's box into the whole outputs (the thesis'
§7.1 system, the global buffer holding one data tile at a time). The next tile's load does not
overlap the current run on ``cgra_top``: the global buffer belongs to the array while
``START`` = 1 (host accesses get SLVERR), so the runtime loads, runs and reads in turn
(:attr:`Accelerator.overlap` is False; an arch with a double-buffered global buffer would load
tile ``k + 1`` during run ``k``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

COUNTERS = ("CYCLE", "ERROR", "FIRST_WRITE", "LAST_WRITE", "WRITES")


class HostError(RuntimeError):
    """The accelerator did not answer as docs/top.md says (one line)."""


@dataclass
class RunCounters:
    """What one run's control registers said (docs/top.md "Performance counters")."""
    cycle: int
    error: int
    first_write: int
    last_write: int
    writes: int
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"cycle": self.cycle, "error": self.error, "first_write": self.first_write,
                "last_write": self.last_write, "writes": self.writes,
                "seconds": round(self.seconds, 3)}


@dataclass
class ImageRun:
    """A tiled app's whole outputs and every tile's counters."""
    outputs: dict[str, np.ndarray]
    tiles: list[RunCounters] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)   # load, run, read back


class Accelerator:
    """One ``cgra_top`` behind ``bus`` (module docstring); ``plan`` is
    :func:`sim.bundle.host_plan` of the top's exported address map."""

    overlap = False        # the GLB is the array's while running (docs/top.md)

    def __init__(self, bus, plan: dict, poll_cycles: int = 16):
        self.bus, self.plan, self.poll = bus, plan, poll_cycles

    def ctrl(self, name: str) -> int:
        return self.plan["control"][name]

    def glb(self, word: int) -> int:
        return self.plan["glb_base"] + 4 * word

    async def configure(self, bitstream, readable=None) -> list[tuple[int, int, int]]:
        """Write every ``(byte address, value)`` of the bitstream, then read back those
        ``readable(address)`` allows (default: all). Returns ``(address, written, read)`` of
        every word that reads back differently."""
        pairs = [(int(a), int(v)) for a, v in bitstream]
        await self.bus.write_many(pairs)
        last = dict(pairs)
        addrs = sorted(a for a in last if readable is None or readable(a))
        got = await self.bus.read_many(addrs)
        return [(a, last[a], g) for a, g in zip(addrs, got) if g != last[a]]

    async def write(self, words) -> None:
        """``(GLB word, value)`` pairs into the global buffer (while stopped)."""
        await self.bus.write_many([(self.glb(int(w)), int(v)) for w, v in words])

    async def read(self, words) -> list[int]:
        """The values of GLB ``words`` (while stopped)."""
        return [v & 0xFFFF for v in await self.bus.read_many([self.glb(int(w))
                                                              for w in words])]

    async def run(self, done_cycle: int, limit: int | None = None) -> RunCounters:
        """``DONE_CYCLE``, ``START`` = 1, wait ``done_cycle`` cycles (``DONE`` cannot rise
        before: one wait, no bus traffic while the array runs), then poll ``DONE`` every
        ``poll_cycles``, read the counters, ``START`` = 0. Raises :class:`HostError` when
        ``DONE`` does not rise within ``limit`` polls after the wait (default: as many cycles
        as ``done_cycle`` again, plus 1,024)."""
        t = time.perf_counter()
        await self.bus.write_many([(self.ctrl("DONE_CYCLE"), done_cycle),
                                   (self.ctrl("START"), 1)])
        await self.bus.wait(done_cycle)
        polls = limit or (done_cycle + 1024) // self.poll
        for _ in range(polls):
            if (await self.bus.read_many([self.ctrl("DONE")]))[0] & 1:
                break
            await self.bus.wait(self.poll)
        else:
            raise HostError(f"DONE did not rise within {done_cycle + polls * self.poll} "
                            "cycles")
        vals = await self.bus.read_many([self.ctrl(n) for n in COUNTERS])
        await self.bus.write_many([(self.ctrl("START"), 0)])
        return RunCounters(*vals, seconds=time.perf_counter() - t)

    async def run_image(self, bundle: dict, arrays: dict[str, np.ndarray],
                        on_tile=None) -> ImageRun:
        """Every tile of a tiled bundle (module docstring) on the whole input ``arrays``;
        ``on_tile(k, counters)`` after each run. Returns the stitched whole outputs and the
        counters of every run."""
        tiling = bundle["tiling"]
        ins = {b: _map(m) for b, m in bundle["input_map"].items()}
        outs = {b: _map(m) for b, m in bundle["output_map"].items()}
        whole = {b: np.zeros(tiling["shapes"][b], dtype=np.int64) for b in tiling["outputs"]}
        result = ImageRun(whole, seconds={"load": 0.0, "run": 0.0, "read back": 0.0})
        for k, tile in enumerate(tiling["tiles"]):
            t = time.perf_counter()
            words = []
            for b, (w, idx) in ins.items():
                vals = np.asarray(arrays[b]).astype(np.int64)[_at(idx, tile["lows"][b])]
                words += zip(w.tolist(), (vals & 0xFFFF).tolist())
            await self.write(words)
            result.seconds["load"] += time.perf_counter() - t
            counters = await self.run(bundle["done_cycle"])
            result.seconds["run"] += counters.seconds
            result.tiles.append(counters)
            t = time.perf_counter()
            for b, (w, idx) in outs.items():
                vals = np.asarray(await self.read(w.tolist()), dtype=np.int64)
                keep = _inside(idx, tile["lows"][b], tile["box"])
                whole[b][_at(idx[keep], tile["lows"][b])] = vals[keep]
            result.seconds["read back"] += time.perf_counter() - t
            if on_tile:
                on_tile(k, counters)
        return result


def _map(pairs) -> tuple[np.ndarray, np.ndarray]:
    """``[[word, [index...]], ...]`` as (words, indices[n, dims])."""
    words = np.array([w for w, _ in pairs], dtype=np.int64)
    idx = np.array([i for _, i in pairs], dtype=np.int64).reshape(len(pairs), -1)
    return words, idx


def _at(idx: np.ndarray, lows) -> tuple:
    """Numpy index of the whole array's elements at tile indices ``idx`` + ``lows``."""
    return tuple((idx + np.asarray(lows, dtype=np.int64)).T)


def _inside(idx: np.ndarray, lows, box) -> np.ndarray:
    """Which tile indices fall in the tile's output ``box`` (whole coordinates)."""
    g = idx + np.asarray(lows, dtype=np.int64)
    lo = np.array([a for a, _ in box], dtype=np.int64)
    hi = np.array([b for _, b in box], dtype=np.int64)
    return np.all((g >= lo) & (g <= hi), axis=1)


def signed_view(values: np.ndarray, signed: bool) -> np.ndarray:
    """16-bit words as the buffer's type (two's complement for a signed buffer)."""
    v = np.asarray(values, dtype=np.int64) & 0xFFFF
    return np.where(v >= 0x8000, v - 0x10000, v) if signed else v
