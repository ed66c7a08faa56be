"""Run a placed and routed app's bundle (compiler/backend/bundle.py) on the generated array's
RTL in the Amaranth simulator: the real tiles (``ubgen.array.cgra.CGRA`` with its PE, MEM and
IO cores, switch and connection boxes), configured over the array's config bus with every
bitstream write, and a global buffer modelled here (one word per address, read latency 1,
docs/top.md), loaded with the bundle's inputs. A test helper: the compiler never builds
ubgen's components."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from tests.gateware import bus_writes, run_testbench
from ubgen.array.cgra import CGRA
from ubgen.array.graph import global_address
from ubgen.top.cgra_top import TILE_BASE, TILE_ID_SHIFT


def array_address(top_address: int) -> int:
    """The array's configuration-bus address of a tile register's AXI byte address."""
    rel = top_address - TILE_BASE
    return global_address(rel >> TILE_ID_SHIFT, (rel & ((1 << TILE_ID_SHIFT) - 1)) >> 2)


@dataclass
class ArrayRun:
    glb: dict[int, int]                                     # GLB word -> value after the run
    writes: list[tuple[int, int, int]] = field(default_factory=list)   # (cycle, word, value)

    def mismatches(self, bundle: dict) -> list[tuple[int, int, int | None]]:
        return [(w, e, self.glb.get(w)) for w, e in bundle["glb_outputs"]
                if self.glb.get(w) != e]

    @property
    def last_write(self) -> int | None:
        return self.writes[-1][0] if self.writes else None


def run_bundle(arch, bundle: dict, io_columns, extra_cycles: int = 20) -> ArrayRun:
    """Configure the array with ``bundle["bitstream"]``, run ``done_cycle + extra_cycles``
    cycles serving the GLB ports of ``io_columns`` and return the GLB and the array's writes
    (with the array's unstalled cycle counter at each)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # prototype cores are never elaborated
        dut = CGRA(arch)
    bank_words, banks = arch.glb.bank_words, arch.glb.banks
    run = ArrayRun({w: v for w, v in bundle["glb_inputs"]})
    cols = sorted(io_columns)

    async def bench(ctx):
        await bus_writes(ctx, dut.cfg, [(array_address(addr), value)
                                        for addr, value in bundle["bitstream"]])
        ctx.set(dut.run, 1)
        pending: dict[int, int] = {}
        for _ in range(bundle["done_cycle"] + extra_cycles):
            for c, value in pending.items():          # last cycle's reads arrive now
                ctx.set(getattr(dut, f"glb_{c}").rdata, value)
            pending = {}
            for c in cols:
                port = getattr(dut, f"glb_{c}")
                base = (c % banks) * bank_words
                word = base + ctx.get(port.addr)
                if ctx.get(port.we):
                    value = ctx.get(port.wdata)
                    run.writes.append((ctx.get(dut.cycle_count), word, value))
                    run.glb[word] = value
                if ctx.get(port.re):
                    pending[c] = run.glb.get(word, 0)
            await ctx.tick()

    run_testbench(dut, bench)
    return run
