"""The tiled job of the end-to-end testbench (docs/simulation.md "Host runtime and tiled
runs"): a tiled app's bundle (``compiler.backend.bundle.make_tiled_bundle``) run on
``cgra_top`` by the host runtime (:class:`sim.host.Accelerator`), data and configuration in
bursts on the AXI4 port and control over AXI4-Lite, as a board driver would: one configuration, then per tile load, run, read back, stitch (the next tile's load and the previous tile's
read-back during the run where the bundle's plan allows, :meth:`sim.host.Accelerator.run_image`). The whole
outputs are compared bit for bit with the golden arrays; every run's counters are recorded
(the verdict, :func:`sim.array_run.verdict`, requires each run's ``LAST_WRITE`` to be the
predicted cycle).

Called by :func:`sim.tb.test_e2e.run_app` when the job is tiled; the job names the ``.npy``
files of the whole input arrays and the expected outputs, and where to save the stitched
outputs.
"""
from __future__ import annotations

from itertools import groupby

import numpy as np
from cocotb.triggers import Timer

from sim.host import Accelerator

from .host import read_glb, read_registers, readable, start_host, write_glb, write_registers

CLOCK_NS = 10


class AxiBus:
    """The runtime's bus (:mod:`sim.host`) over the testbench's two masters
    (:class:`sim.tb.host.Host`): global-buffer words and tile registers in bursts on the AXI4
    port (through the GLB row window, as the untiled job loads and reads back), the control
    registers as single AXI4-Lite transactions; every access must answer OKAY."""

    def __init__(self, host):
        self.host = host
        p = host.plan
        self.control = set(p["control"].values())
        self.glb_base, self.glb_end = p["glb_base"], p["glb_base"] + 4 * p["glb_words"]

    def _kind(self, addr: int) -> str:
        if addr in self.control:
            return "control"
        return "glb" if self.glb_base <= addr < self.glb_end else "tiles"

    def _word(self, addr: int) -> int:
        return (addr - self.glb_base) // 4

    async def write_many(self, pairs) -> None:
        for kind, group in groupby(pairs, key=lambda p: self._kind(p[0])):
            group = list(group)
            if kind == "control":
                for a, v in group:
                    await self.host.write(a, v)
            elif kind == "glb":
                await write_glb(self.host, [(self._word(a), v) for a, v in group], "load")
            else:
                await write_registers(self.host, group, "configure")

    async def read_many(self, addresses) -> list[int]:
        """Control registers one by one; GLB words and tile registers sorted into bursts (the
        values come back in the order asked)."""
        got: dict[int, int] = {}
        control = [a for a in addresses if self._kind(a) == "control"]
        glb = sorted({a for a in addresses if self._kind(a) == "glb"})
        tiles = sorted({a for a in addresses if self._kind(a) == "tiles"})
        for a in control:
            got[a] = await self.host.read(a)
        if glb:
            vals = await read_glb(self.host, [self._word(a) for a in glb], "read back")
            got.update(zip(glb, vals))
        if tiles:
            got.update(zip(tiles, await read_registers(self.host, tiles, "read back")))
        return [got[a] for a in addresses]

    async def wait(self, cycles: int) -> None:
        await Timer(cycles * CLOCK_NS, unit="ns")


async def run_tiled_job(dut, j: dict, result: dict, show: int = 5) -> None:
    """Configure, run every tile, compare the stitched outputs (module docstring)."""
    bundle, plan = j["bundle"], j["plan"]
    host = await start_host(dut, plan)
    result["clock"] = host.clock.impl
    acc = Accelerator(AxiBus(host), plan)
    if "blocks" in bundle:
        await _run_blocks(acc, j, result, show)
        return
    bad = await acc.configure(bundle["bitstream"], readable(plan))
    result["readback_mismatches"] = len(bad)
    result["readback_first"] = [f"{a:#010x}: wrote {w:#x}, read {g:#x}" for a, w, g in bad[:show]]
    result["log"].append(f"configure: {len(bundle['bitstream'])} words, {len(bad)} differ")
    arrays = {b: np.load(p) for b, p in j["arrays"]["inputs"].items()}
    runs = len(bundle["tiling"]["tiles"])

    def progress(k: int, c) -> None:
        if k == 0 or (k + 1) % max(1, runs // 8) == 0 or k + 1 == runs:
            result["log"].append(f"tile {k + 1}/{runs}: DONE at CYCLE {c.cycle}, last write "
                                 f"{c.last_write}, {c.writes} GLB writes, ERROR {c.error}")
    image = await acc.run_image(bundle, arrays, on_tile=progress)
    ov = bundle.get("overlap") or {}
    result["overlap"] = image.overlap
    why = ov.get("why", "") if ov.get("overlap") == image.overlap else "the host's choice"
    result["log"].append(f"overlap: {'yes' if image.overlap else 'no'}, {why}")
    _compare(j, image, result, show)


async def _run_blocks(acc: Accelerator, j: dict, result: dict, show: int) -> None:
    """A layer as channel blocks (:meth:`sim.host.Accelerator.run_blocks`): the first
    configuration written and read back, every block's runs, the last block's output compared
    with the whole layer's golden."""
    bundle, plan = j["bundle"], j["plan"]
    arrays = {b: np.load(p) for b, p in j["arrays"]["inputs"].items()}
    spec = bundle["blocks"]

    def progress(block: int, k: int, c) -> None:
        lo, hi = spec["ranges"][block]
        result["log"].append(f"block {block + 1}/{spec['runs']} ({spec['size']} {lo}..{hi - 1})"
                             f", run {k + 1}: DONE at CYCLE {c.cycle}, last write "
                             f"{c.last_write}, {c.writes} GLB writes, ERROR {c.error}")
    image = await acc.run_blocks(bundle, arrays, on_run=progress, readable=readable(plan))
    bad = image.mismatches
    result["readback_mismatches"] = len(bad)
    result["readback_first"] = [f"{a:#010x}: wrote {w:#x}, read {g:#x}" for a, w, g in bad[:show]]
    result["overlap"] = False
    _compare(j, image, result, show)


def _compare(j: dict, image, result: dict, show: int) -> None:
    """Every run's counters and the whole outputs against the golden, into ``result``."""
    result["tiles"] = [c.to_dict() for c in image.tiles]
    result["stages"] = {k: {"seconds": round(v, 2)} for k, v in image.seconds.items()}
    mismatches, first = 0, []
    for b, path in j["arrays"]["expected"].items():
        want = np.load(path).astype(np.int64) & 0xFFFF
        got = image.outputs[b] & 0xFFFF
        np.save(j["arrays"]["outputs"][b], got)
        diff = np.argwhere(got != want)
        mismatches += len(diff)
        first += [f"output {b}{list(map(int, d))}: read {int(got[tuple(d)]):#06x}, expected "
                  f"{int(want[tuple(d)]):#06x}" for d in diff[:show]]
    result["output_mismatches"] = mismatches
    result["output_first"] = first[:show]
    result["completed"] = True
