"""The end-to-end cocotb testbench (docs/simulation.md): one application's bundle
(:mod:`sim.bundle`) run on ``cgra_top`` through its AXI4-Lite port, exactly as a host driver
does it (cocotbext-axi ``AxiLiteMaster``, docs/top.md "A host run"):

1. configure: write every bitstream word, then read every configured register back and compare
   (the last value written to each address);
2. load: write the input words into the global buffer at the bundle's words;
3. run: write ``DONE_CYCLE``, write ``START`` = 1, poll ``DONE``; read ``CYCLE``, ``ERROR`` and
   the performance counters ``FIRST_WRITE``, ``LAST_WRITE``, ``WRITES``; write ``START`` = 0;
4. read back: read every expected output word from the global buffer and compare bit for bit.

Run by :func:`sim.array_run.run_bundle`, which passes the job (bundle and the host's addresses
from the exported address map) in ``UBGEN_E2E_JOB``; the testbench writes what it observed to
``UBGEN_E2E_RESULT`` (the verdict is :func:`sim.array_run.verdict`'s) and fails the cocotb test
when the run does not pass.

Host transactions are issued back to back (the master keeps several in flight; the slave
serves one at a time), as a driver streaming a configuration would.
"""
from __future__ import annotations

import json
import os
import time

import cocotb
from cocotb.triggers import ClockCycles
from cocotb.utils import get_sim_time

from .host import start_host

SHOW = 5                  # mismatches kept in the result, per kind
POLL_CYCLES = 32          # host poll period while waiting for DONE


def job() -> dict:
    with open(os.environ["UBGEN_E2E_JOB"]) as f:
        return json.load(f)


async def write_many(host, pairs, what: str) -> None:
    """Write ``(address, value)`` pairs back to back; every response must be OKAY."""
    events = [host.axil.init_write(a, int(v).to_bytes(4, "little")) for a, v in pairs]
    for (a, _), ev in zip(pairs, events):
        await ev.wait()
        if int(ev.data.resp) != 0:
            raise AssertionError(f"{what}: write {a:#010x} answered {ev.data.resp}")


async def read_many(host, addresses, what: str) -> list[int]:
    """Read ``addresses`` back to back; every response must be OKAY."""
    events = [host.axil.init_read(a, 4) for a in addresses]
    out = []
    for a, ev in zip(addresses, events):
        await ev.wait()
        if int(ev.data.resp) != 0:
            raise AssertionError(f"{what}: read {a:#010x} answered {ev.data.resp}")
        out.append(int.from_bytes(ev.data.data, "little"))
    return out


def cycle_now(dut) -> int:
    return int(get_sim_time(unit="ns") // 10)


async def run_job(dut, j: dict, result: dict) -> None:
    """Steps 1-4 (module docstring) into ``result``."""
    b, plan = j["bundle"], j["plan"]
    host = await start_host(dut, plan)
    stages, log = result["stages"], result["log"]

    def stage(name: str, t0: float, c0: int, what: str) -> None:
        sec, cyc = time.perf_counter() - t0, cycle_now(dut) - c0
        stages[name] = {"seconds": round(sec, 2), "cycles": cyc}
        log.append(f"{name}: {what} ({sec:.1f} s, {cyc} clock cycles)")

    # 1. configure, then read everything back
    t0, c0 = time.perf_counter(), cycle_now(dut)
    bits = [tuple(p) for p in b["bitstream"]]
    await write_many(host, bits, "configure")
    last = dict(bits)
    addrs = sorted(last)
    got = await read_many(host, addrs, "read back")
    bad = [(a, last[a], g) for a, g in zip(addrs, got) if g != last[a]]
    result["readback_mismatches"] = len(bad)
    result["readback_first"] = [f"{a:#010x}: wrote {w:#x}, read {g:#x}" for a, w, g in bad[:SHOW]]
    stage("configure", t0, c0, f"{len(bits)} words written, {len(addrs)} read back, "
                               f"{len(bad)} differ")

    # 2. inputs into the global buffer
    t0, c0 = time.perf_counter(), cycle_now(dut)
    await write_many(host, [(host.glb(w), v) for w, v in b["glb_inputs"]], "load")
    stage("load", t0, c0, f"{len(b['glb_inputs'])} GLB words")

    # 3. run
    t0, c0 = time.perf_counter(), cycle_now(dut)
    await host.write(host.ctrl("DONE_CYCLE"), b["done_cycle"])
    await host.write(host.ctrl("START"), 1)
    limit = b["done_cycle"] + 1000
    while not await host.read(host.ctrl("DONE")):
        if cycle_now(dut) - c0 > 2 * limit + 10_000:
            result["abort"] = f"DONE did not rise within {2 * limit + 10_000} clock cycles"
            return
        await ClockCycles(dut.clk, POLL_CYCLES)
    for name in ("CYCLE", "ERROR", "FIRST_WRITE", "LAST_WRITE", "WRITES"):
        result[name.lower()] = await host.read(host.ctrl(name))
    await host.write(host.ctrl("START"), 0)
    stage("run", t0, c0, f"DONE at CYCLE {result['cycle']}; ERROR {result['error']}; "
                         f"{result['writes']} GLB writes, cycles {result['first_write']}.."
                         f"{result['last_write']}")

    # 4. outputs
    t0, c0 = time.perf_counter(), cycle_now(dut)
    outs = b["glb_outputs"]
    got = await read_many(host, [host.glb(w) for w, _ in outs], "outputs")
    bad = [(w, e, g) for (w, e), g in zip(outs, got) if g != e]
    result["output_mismatches"] = len(bad)
    result["output_first"] = [f"GLB word {w}: read {g:#06x}, expected {e:#06x}"
                              for w, e, g in bad[:SHOW]]
    stage("read back", t0, c0, f"{len(outs)} output words, {len(bad)} differ")
    result["completed"] = True


@cocotb.test()
async def run_app(dut):
    j = job()
    result = {"app": j["bundle"]["app"], "completed": False, "stages": {}, "log": [],
              "readback_mismatches": 0, "readback_first": [], "output_mismatches": 0,
              "output_first": []}
    try:
        await run_job(dut, j, result)
    except AssertionError as e:       # an unexpected SLVERR: recorded, then the test fails
        result["abort"] = str(e)
    finally:
        result["sim_cycles"] = cycle_now(dut)
        with open(os.environ["UBGEN_E2E_RESULT"], "w") as f:
            json.dump(result, f)
    assert result["completed"], result.get("abort")
    assert result["readback_mismatches"] == 0, result["readback_first"]
    assert result["output_mismatches"] == 0, result["output_first"]
