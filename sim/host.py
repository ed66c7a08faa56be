"""The host runtime of ``cgra_top`` (docs/simulation.md "Host runtime and tiled runs";
docs/top.md "A host run"): what a board driver does with a compiled app, over any bus that
moves 32-bit words.

    acc = Accelerator(bus, plan)           # plan: sim.bundle.host_plan(address map)
    await acc.configure(bitstream)         # tile registers (read back where readable)
    await acc.write([(glb_word, value)])   # inputs into the global buffer
    counters = await acc.run(done_cycle)   # START, poll DONE, performance counters, STOP
    values = await acc.read(glb_words)     # outputs from the global buffer
    image = await acc.run_image(bundle, arrays)   # a tiled app: every tile, stitched
    image = await acc.run_blocks(bundle, arrays)  # a layer as channel blocks (partial sums)

The bus is anything with ``async write_many([(address, value)])``, ``async
read_many([address]) -> [value]`` (32-bit words at byte addresses; an AXI4-Lite master issues
them one by one, a burst-capable one in bursts) and ``async wait(cycles)`` (let the hardware
run between polls). The cocotb testbench passes its AXI master (``sim.tb.tiled``); a real
board's driver would pass its memory-mapped port.

A tiled app (``compiler.tiling``, the bundle of ``compiler.backend.bundle.make_tiled_bundle``)
is one configuration run once per tile: for each tile the runtime gathers the tile's input
words from the whole arrays (``input_map`` at the tile's ``lows``), runs, reads the tile's
output words (``output_map``) and writes the tile's box into the whole outputs (the thesis'
§7.1 system). Where the compiler's plan found room for two regions per stream in the global
buffer (``bundle["overlap"]``, ``compiler.backend.glb.double_buffer``) and the top has the
``SHARE`` register (docs/top.md "Sharing the global buffer"), the next tile's load and the
previous tile's read-back overlap the current run: tile ``k`` uses region ``k % 2``, the IO
tiles' address registers (the plan's ``registers``) switched between runs. Otherwise the
runtime loads, runs and reads in turn.
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
    overlap: bool = False           # loads and read-backs overlapped the runs
    mismatches: list = field(default_factory=list)   # configuration read back (run_blocks)


class Accelerator:
    """One ``cgra_top`` behind ``bus`` (module docstring); ``plan`` is
    :func:`sim.bundle.host_plan` of the top's exported address map."""

    def __init__(self, bus, plan: dict, poll_cycles: int = 256):
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
        """``DONE_CYCLE``, ``START`` = 1, sleep until ``CYCLE`` reaches ``done_cycle``, poll
        ``DONE`` every ``poll_cycles``, read the counters, ``START`` = 0. Raises :class:`HostError` when ``DONE`` does not rise within
        ``limit`` polls (default: twice the cycles to ``done_cycle``)."""
        t = await self.start(done_cycle)
        return await self.finish(done_cycle, t, limit)

    async def start(self, done_cycle: int) -> float:
        """``DONE_CYCLE``, ``START`` = 1 (the first half of :meth:`run`); returns the wall
        time it started at."""
        t = time.perf_counter()
        await self.bus.write_many([(self.ctrl("DONE_CYCLE"), done_cycle),
                                   (self.ctrl("START"), 1)])
        return t

    async def finish(self, done_cycle: int, t: float, limit: int | None = None) -> RunCounters:
        """Read ``CYCLE`` and sleep the cycles left to ``done_cycle``, poll ``DONE``, read the
        counters, ``START`` = 0 (the second half of :meth:`run`)."""
        polls = limit or 2 * (done_cycle // self.poll + 8)
        # the run's own counter says how long is left: sleep that long, then poll
        cycle = (await self.bus.read_many([self.ctrl("CYCLE")]))[0]
        if cycle < done_cycle:
            await self.bus.wait(done_cycle - cycle)
        for _ in range(polls):
            if (await self.bus.read_many([self.ctrl("DONE")]))[0] & 1:
                break
            await self.bus.wait(self.poll)
        else:
            raise HostError(f"DONE did not rise within {polls * self.poll} cycles")
        vals = await self.bus.read_many([self.ctrl(n) for n in COUNTERS])
        await self.bus.write_many([(self.ctrl("START"), 0)])
        return RunCounters(*vals, seconds=time.perf_counter() - t)

    def overlapped(self, bundle: dict, overlap: bool | None = None) -> bool:
        """Whether :meth:`run_image` overlaps: the bundle's plan says the global buffer holds
        two regions per stream (``bundle["overlap"]``, ``compiler.backend.glb.double_buffer``)
        and the top has the ``SHARE`` register; ``overlap`` False forces the sequential host,
        True requires the overlap (:class:`HostError` naming why not)."""
        ov = bundle.get("overlap") or {"overlap": False, "why": "the bundle has no plan"}
        can, why = ov["overlap"], ov.get("why", "")
        if can and "SHARE" not in self.plan["control"]:
            can, why = False, "the top has no SHARE register"
        if overlap and not can:
            raise HostError(f"no overlap: {why}")
        return can if overlap is None else bool(overlap) and can

    async def run_image(self, bundle: dict, arrays: dict[str, np.ndarray],
                        on_tile=None, overlap: bool | None = None) -> ImageRun:
        """Every tile of a tiled bundle (module docstring) on the whole input ``arrays``;
        ``on_tile(k, counters)`` after each run. Overlapped (:meth:`overlapped`): tile ``k +
        1``'s inputs are written into the other region and tile ``k - 1``'s outputs read from
        it while run ``k`` goes on (``SHARE`` = 1), the IO tiles' address registers switched
        between runs. Returns the stitched whole outputs and the counters of every run."""
        tiling = bundle["tiling"]
        img = _Image(bundle, arrays, self.overlapped(bundle, overlap))
        result = ImageRun(img.whole, seconds={"load": 0.0, "run": 0.0, "read back": 0.0})
        tiles = tiling["tiles"]
        if img.overlap:
            await self.bus.write_many([(self.ctrl("SHARE"), 1)])
        await self._timed(result, "load", self.write(img.inputs(0)))
        for k in range(len(tiles)):
            if img.overlap:
                await self.bus.write_many(img.switch(k))
            t = await self.start(bundle["done_cycle"])
            if img.overlap and k + 1 < len(tiles):
                await self._timed(result, "load", self.write(img.inputs(k + 1)))
            if img.overlap and k > 0:
                await self._timed(result, "read back", self._read_tile(img, k - 1))
            counters = await self.finish(bundle["done_cycle"], t)
            result.seconds["run"] += counters.seconds
            result.tiles.append(counters)
            if not img.overlap:
                await self._timed(result, "read back", self._read_tile(img, k))
                if k + 1 < len(tiles):
                    await self._timed(result, "load", self.write(img.inputs(k + 1)))
            if on_tile:
                on_tile(k, counters)
        if img.overlap:
            await self._timed(result, "read back", self._read_tile(img, len(tiles) - 1))
            await self.bus.write_many([(self.ctrl("SHARE"), 0)])
        result.overlap = img.overlap
        return result

    async def run_blocks(self, bundle: dict, arrays: dict[str, np.ndarray], on_run=None,
                         readable=None) -> ImageRun:
        """A layer run as channel blocks (``compiler.backend.bundle.make_blocked_bundle``):
        for each block the inputs it cuts (``sliced``) narrowed to its channels, the others
        whole, and the carried partial sums (``arrays[carry_in]`` for the first block: the
        bias as partial sums), every output tile of the block's configuration run
        (:meth:`run_image`), its output read back the next block's carried input. The first
        configuration is written whole (read back where ``readable`` allows); a switch
        between the two writes only the words that differ. ``on_run(block, k, counters)``
        after each run. Returns the last block's outputs and every run's counters."""
        spec = bundle["blocks"]
        cin, cout = spec["carry"]
        configs = bundle["configs"]
        result = ImageRun({}, seconds={"load": 0.0, "run": 0.0, "read back": 0.0})
        t = time.perf_counter()
        result.mismatches = await self.configure(configs[0]["bitstream"], readable)
        result.seconds["configure"] = time.perf_counter() - t
        current, carry = 0, np.asarray(arrays[cin])
        for j, (lo, hi) in enumerate(spec["ranges"]):
            which = int(j == len(spec["ranges"]) - 1)
            if which != current:
                old = {a: v for a, v in configs[current]["bitstream"]}
                await self.bus.write_many([(a, v) for a, v in configs[which]["bitstream"]
                                           if old.get(a) != v])
                current = which
            block_in = {b: (np.take(np.asarray(arr), range(lo, hi), axis=spec["sliced"][b])
                            if b in spec["sliced"] else np.asarray(arr))
                        for b, arr in arrays.items() if b != cin}
            block_in[cin] = carry
            image = await self.run_image(configs[which], block_in,
                                         on_tile=(lambda k, c, j=j: on_run(j, k, c))
                                         if on_run else None)
            for k, v in image.seconds.items():
                result.seconds[k] += v
            result.tiles += image.tiles
            carry = image.outputs[cout]
            result.outputs = image.outputs
        return result

    async def _timed(self, result: ImageRun, step: str, work) -> None:
        t = time.perf_counter()
        await work
        result.seconds[step] += time.perf_counter() - t

    async def _read_tile(self, img: "_Image", k: int) -> None:
        for b, (words, idx, keep, at) in img.outputs(k).items():
            vals = np.asarray(await self.read(words.tolist()), dtype=np.int64)
            img.whole[b][at] = vals[keep]


class _Image:
    """A tiled bundle's words per tile: the GLB words of tile ``k`` in region ``k % 2`` when
    overlapped (region 1 = region 0 + the bank's ``delta``), else region 0."""

    def __init__(self, bundle: dict, arrays: dict, overlap: bool):
        self.tiles = bundle["tiling"]["tiles"]
        self.overlap = overlap
        ov = bundle.get("overlap") or {}
        self.delta = {int(b): d for b, d in ov.get("delta", {}).items()}
        self.registers = ov.get("registers", [])
        self.bank_words = ov.get("bank_words", 1)
        self.ins = {b: _map(m) for b, m in bundle["input_map"].items()}
        self.outs = {b: _map(m) for b, m in bundle["output_map"].items()}
        self.arrays = {b: np.asarray(arrays[b]).astype(np.int64) for b in self.ins}
        t = bundle["tiling"]
        self.whole = {b: np.zeros(t["shapes"][b], dtype=np.int64) for b in t["outputs"]}

    def region(self, words: np.ndarray, k: int) -> np.ndarray:
        if not (self.overlap and k % 2):
            return words
        return words + np.array([self.delta.get(int(w) // self.bank_words, 0) for w in words],
                                dtype=np.int64)

    def inputs(self, k: int) -> list[tuple[int, int]]:
        lows, out = self.tiles[k]["lows"], []
        for b, (w, idx) in self.ins.items():
            vals = self.arrays[b][_at(idx, lows[b])]
            out += zip(self.region(w, k).tolist(), (vals & 0xFFFF).tolist())
        return out

    def outputs(self, k: int) -> dict:
        tile, out = self.tiles[k], {}
        for b, (w, idx) in self.outs.items():
            keep = _inside(idx, tile["lows"][b], tile["box"])
            out[b] = (self.region(w, k), idx, keep, _at(idx[keep], tile["lows"][b]))
        return out

    def switch(self, k: int) -> list[tuple[int, int]]:
        """The IO tiles' address registers for region ``k % 2``."""
        return [(a, v1 if k % 2 else v0) for a, v0, v1 in self.registers]


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
