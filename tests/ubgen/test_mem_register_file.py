"""The MEM core's register-file mode (ubgen/mem/register_file.py driven by the PUB's lent
controllers in ubgen/mem/mem_tile.py) against a plain-Python reference of its contract
(docs/mem_rf.md), driven from the affine controller configurations (``ubgen.controller.iterate``):
Hypothesis-drawn schedules, addresses, data and stalls, every read checked, write-through, the
port-1-wins conflict and its sticky flag; negative controls (a wrong reference, a corrupted
register) must be caught. The core is configured through its bus at the offsets of
``ubgen.mem.spec.mem_regmap`` with the registers of ``encode_rf_ports``."""
from __future__ import annotations

import random
from dataclasses import dataclass, replace

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from tests.gateware import bus_read, bus_write, configure, reg_offset, run_testbench
from tests.ubgen.test_io_tile import streams as io_streams
from ubgen.arch import MemParams, PUBParams
from ubgen.controller import AffineMap, ControllerConfig, iterate
from ubgen.mem.mem_tile import MemCore
from ubgen.mem.spec import encode_rf_ports, mem_regmap, rf_ports, rf_regmap

PARAMS = PUBParams()
MEM = MemParams()
AW = MEM.rf_addr_width
WRITES = [f"rf_write_{p}" for p in range(PARAMS.input_ports)]
READS = [f"rf_read_{q}" for q in range(PARAMS.output_ports)]


def data_in(core, p):
    return getattr(core, f"in_data_in{p}")


def data_out(core, q):
    return getattr(core, f"out_data_out{q}"), getattr(core, f"out_valid_out{q}")


@dataclass
class Observed:
    reads: list[dict[int, int]]          # per read port: unstalled cycle -> data_out
    errors: list[tuple[int, int]]        # (unstalled cycle, error flag) at every unstalled cycle
    stalled_valid: int                   # valid_out seen high in a stalled cycle


def reference(configs: dict[str, ControllerConfig], data: list[dict[int, int]],
              *, write_through: bool = True, last_port_wins: bool = True):
    """The contract, from the affine form: per read port ``{cycle: value}`` (None for a word
    never written) and the set of conflict cycles. ``write_through`` / ``last_port_wins`` off
    give the deliberately wrong references of the negative controls."""
    fires: dict[int, list] = {}
    for name, cfg in configs.items():
        kind, k = name.rsplit("_", 1)
        for cycle, addrs in iterate(cfg, {"addr": AW}):
            fires.setdefault(cycle, []).append((kind, int(k), addrs["addr"]))
    words: dict[int, int] = {}
    reads: list[dict[int, int | None]] = [dict() for _ in READS]
    conflicts = set()
    for c in sorted(fires):
        writes = sorted((k, a) for kind, k, a in fires[c] if kind == "rf_write")
        new = {}
        for k, a in (writes if last_port_wins else writes[::-1]):
            if a in new:
                conflicts.add(c)
            new[a] = data[k][c]
        for kind, k, a in fires[c]:
            if kind == "rf_read":
                reads[k][c] = new[a] if write_through and a in new else words.get(a)
        words.update(new)
    return reads, conflicts


def run_registers(jobs) -> list[Observed]:
    """Run ``jobs`` (``(regs, data, stalls, last)``: register values, per write port
    ``{cycle: data_in}``, a stall pattern per clock, the last unstalled cycle to run) one after
    the other in one simulation: for each, ``run`` low, ``regs`` written through the bus, then
    run. ``data_in`` is random in stalled cycles and where ``data`` has no value."""
    core = MemCore(PARAMS, MEM)
    rm = mem_regmap(PARAMS, MEM)
    rng = random.Random(len(jobs))
    observed = []

    async def bench(ctx):
        for regs, data, stalls, last in jobs:
            obs = Observed([dict() for _ in READS], [], 0)
            observed.append(obs)
            ctx.set(core.run, 0)
            ctx.set(core.stall, 0)
            await configure(ctx, core.cfg, rm, regs)
            ctx.set(core.run, 1)
            cycle, clock = 0, 0
            while cycle <= last:
                stall = stalls[clock % len(stalls)]
                ctx.set(core.stall, stall)
                for p in range(len(WRITES)):
                    v = None if stall or p >= len(data) else data[p].get(cycle)
                    ctx.set(data_in(core, p), rng.randrange(1 << 16) if v is None else v)
                if stall:
                    obs.stalled_valid |= any(ctx.get(data_out(core, q)[1])
                                             for q in range(len(READS)))
                else:
                    obs.errors.append((cycle, ctx.get(core.error)))
                    for q in range(len(READS)):
                        d, v = data_out(core, q)
                        if ctx.get(v):
                            obs.reads[q][cycle] = ctx.get(d)
                await ctx.tick()
                clock += 1
                cycle += not stall

    run_testbench(core, bench)
    return observed


def simulate(jobs, *, corrupt: str | None = None) -> list[Observed]:
    """:func:`run_registers` for ``(configs, data, stalls)`` jobs: every register-file port
    encoded from ``configs`` (absent: disabled) by ``encode_rf_ports``, ``rf_en`` = 1,
    ``rf_error`` cleared, ``corrupt`` (a register name) with its bit 0 flipped; run until the
    last fire."""
    runs = []
    for configs, data, stalls in jobs:
        regs = {"rf_error": 1, **encode_rf_ports(configs, PARAMS, MEM)}
        if corrupt:
            regs[corrupt] ^= 1
        last = max([c for cfg in configs.values() for c, _ in iterate(cfg)] + [0])
        runs.append((regs, data, stalls, last + 1))
    return run_registers(runs)


def check(jobs, *, corrupt: str | None = None, **wrong) -> int:
    """Compare every observed read and the error flag of every job with :func:`reference`
    (``wrong``: its negative-control switches); returns the number of reads checked."""
    checked = 0
    for (configs, data, _), obs in zip(jobs, simulate(jobs, corrupt=corrupt)):
        want, conflicts = reference(configs, data, **wrong)
        assert obs.stalled_valid == 0, "valid_out high in a stalled cycle"
        for q in range(len(READS)):
            assert set(obs.reads[q]) == set(want[q]), f"rf_read_{q}: fire cycles differ"
            for c, v in want[q].items():
                if v is not None:                   # a word written before: its value
                    assert obs.reads[q][c] == v, f"rf_read_{q} at {c}: {obs.reads[q][c]} != {v}"
                    checked += 1
        for c, flag in obs.errors:
            assert flag == any(k < c for k in conflicts), f"error flag at cycle {c}"
    return checked


def data_for(seed: int, cycles: int) -> list[dict[int, int]]:
    rng = random.Random(seed)
    return [{c: rng.randrange(1 << 16) for c in range(cycles + 2)} for _ in WRITES]


@st.composite
def streams(draw, narrow: bool):
    """An affine controller: the iteration domain and strictly increasing schedule of the IO
    tile's test streams; ``narrow`` addresses stay among a few words (so writes and reads
    meet), else anywhere (wrapping)."""
    cfg = draw(io_streams())
    if narrow:
        addr = AffineMap(draw(st.integers(0, 3)), tuple(draw(st.integers(0, 1))
                                                         for _ in range(cfg.dims)))
    else:
        addr = AffineMap(draw(st.integers(0, MEM.rf_words - 1)),
                         tuple(draw(st.integers(-9, 9)) for _ in range(cfg.dims)))
    return replace(cfg, addresses={"addr": addr})


@st.composite
def rf_configs(draw):
    narrow = draw(st.booleans())
    ports = WRITES + READS
    return {n: draw(streams(narrow)) for n in ports if draw(st.integers(0, 4))}


@st.composite
def jobs(draw):
    """A few register-file configurations with their data and stall patterns."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        configs = draw(rf_configs())
        last = max([c for cfg in configs.values() for c, _ in iterate(cfg)] + [0])
        stalls = draw(st.lists(st.booleans(), min_size=1, max_size=7)) + [False]
        out.append((configs, data_for(draw(st.integers(0, 1 << 30)), last), stalls))
    return out


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(jobs())
def test_register_file_matches_reference(jobs):
    check(jobs)


def fixed(start, stride, extent, addr, addr_stride=0):
    return ControllerConfig((extent,), AffineMap(start, (stride,)),
                            {"addr": AffineMap(addr, (addr_stride,))})


# Hand-written: word 5 written at 2 and 6 (port 0) and at 6 (port 1: a conflict, port 1
# wins); rf_read_0 reads word 5 at 2..7, so at 2 and 6 it sees the write of its own cycle;
# rf_read_1 reads words 0..3 while rf_write_1 fills them one cycle earlier.
WRITE_THROUGH = {
    "rf_write_0": fixed(2, 4, 2, 5),
    "rf_write_1": ControllerConfig((2,), AffineMap(6, (4,)), {"addr": AffineMap(5, (27,))}),
    "rf_read_0": fixed(2, 1, 6, 5),
    "rf_read_1": fixed(11, 1, 4, 0, 1),
}


def test_write_through_and_conflict_by_hand():
    data = data_for(7, 20)
    want, conflicts = reference(WRITE_THROUGH, data)
    assert conflicts == {6}
    assert want[0] == {2: data[0][2], 3: data[0][2], 4: data[0][2], 5: data[0][2],
                       6: data[1][6], 7: data[1][6]}
    # rf_write_1's second fire (cycle 10) writes word (5 + 27) % 32 = 0, read at 11
    assert want[1][11] == data[1][10] and want[1][12] is None
    assert check([(WRITE_THROUGH, data, [False, True, False, False])]) == 7


@pytest.mark.parametrize("wrong", [dict(write_through=False), dict(last_port_wins=False)])
def test_negative_control_wrong_reference(wrong):
    with pytest.raises(AssertionError):
        check([(WRITE_THROUGH, data_for(7, 20), [False])], **wrong)


@pytest.mark.parametrize("register", ["sram2tb_0_sram_start", "in2agg_0_cycle_start",
                                      "agg2sram_0_sram_delta_0", "rf_en"])
def test_negative_control_corrupted_register(register):
    with pytest.raises(AssertionError):
        check([(WRITE_THROUGH, data_for(7, 20), [False])], corrupt=register)


def test_disabled_and_restart_and_error_clear():
    """rf_en = 0: the lent controllers are the PUB's again (their SRAM accesses collide, the
    PUB's own ``error``), no register-file read. Run low restarts the controllers (the same
    reads again); the sticky flag survives it and clears by writing 1 to rf_error."""
    core = MemCore(PARAMS, MEM)
    regs = encode_rf_ports(WRITE_THROUGH, PARAMS, MEM)
    regs["rf_en"] = 0
    data = data_for(3, 20)
    want, _ = reference(WRITE_THROUGH, data)
    rm = mem_regmap(PARAMS, MEM)

    async def write(ctx, name, value):
        await bus_write(ctx, core.cfg, reg_offset(rm, name), value)

    async def run(ctx, cycles):
        seen = [dict() for _ in READS]
        ctx.set(core.run, 1)
        for c in range(cycles):
            for p in range(len(WRITES)):
                ctx.set(data_in(core, p), data[p][c])
            for q in range(len(READS)):
                d, v = data_out(core, q)
                if ctx.get(v):
                    seen[q][c] = ctx.get(d)
            await ctx.tick()
        ctx.set(core.run, 0)
        await ctx.tick()
        return seen

    def read(ctx, name):
        return bus_read(ctx, core.cfg, reg_offset(rm, name))

    async def bench(ctx):
        for name, value in regs.items():
            await write(ctx, name, value)
        seen = await run(ctx, 16)                             # rf_en = 0: the PUB
        assert all(v is not None for q in seen for v in q.values())
        assert not any(seen[q] == want[q] for q in range(len(READS)))
        assert read(ctx, "error") == 1 and read(ctx, "rf_error") == 0
        await write(ctx, "error", 1)
        await write(ctx, "rf_en", 1)
        assert read(ctx, "rf_en") == 1
        for _ in range(2):                                    # restart: the same again
            seen = await run(ctx, 16)
            assert seen[0] == want[0]
            assert {c: v for c, v in seen[1].items() if want[1][c] is not None} == \
                {c: v for c, v in want[1].items() if v is not None}
            assert ctx.get(core.error) == 1
            assert read(ctx, "error") == 0                    # the PUB stayed idle
        assert read(ctx, "rf_error") == 1
        await write(ctx, "rf_error", 1)
        assert ctx.get(core.error) == 0 and read(ctx, "rf_error") == 0

    run_testbench(core, bench)


def test_regmap_layout():
    """The register file's own registers are rf_en and rf_error; its ports borrow the PUB's
    agg2sram_<p> / sram2tb_<q> controllers, whose sram generator must hold a word address, a
    write port timed by in2agg_<p> (agg2sram_<p> has no schedule generator)."""
    rm = rf_regmap(PARAMS, MEM)
    assert [r.name for r in rm.registers] == ["rf_en", "rf_error"]
    ports = rf_ports(PARAMS, MEM)
    assert list(ports) == WRITES + READS
    assert [(p.layout.name, p.ag, p.timing.name) for p in ports.values()] == [
        ("agg2sram_0", "sram", "in2agg_0"), ("agg2sram_1", "sram", "in2agg_1"),
        ("sram2tb_0", "sram", "sram2tb_0"), ("sram2tb_1", "sram", "sram2tb_1")]
    assert all(p.addr_width == AW == 5 for p in ports.values())
    assert rf_ports(PARAMS, replace(MEM, rf_words=64))["rf_read_0"].addr_width == 6
    regs = encode_rf_ports({"rf_read_1": fixed(3, 2, 4, 30, 1)}, PARAMS, MEM)
    assert regs["rf_en"] == 1 and regs["sram2tb_1_sram_start"] == 30
    assert "sram2tb_1_tb_start" not in regs and regs["agg2sram_0_dim"] == 0
    regs = encode_rf_ports({"rf_write_0": fixed(3, 2, 4, 30, 1)}, PARAMS, MEM)
    assert (regs["in2agg_0_cycle_start"], regs["in2agg_0_cycle_delta_0"]) == (3, 2)
    assert (regs["agg2sram_0_sram_start"], regs["agg2sram_0_sram_delta_0"]) == (30, 1)
    assert regs["in2agg_0_dim"] == regs["agg2sram_0_dim"] == 1
    assert regs["in2agg_0_extent_m1_0"] == regs["agg2sram_0_extent_m1_0"] == 3
    # negative controls: too many words for the borrowed generator, an unknown port
    with pytest.raises(ValueError, match="agg2sram_0.sram has 13 bits"):
        rf_ports(PARAMS, replace(MEM, rf_words=1 << 14))
    with pytest.raises(ValueError, match="no register-file port rf_read_2"):
        encode_rf_ports({"rf_read_2": fixed(0, 1, 1, 0)}, PARAMS, MEM)


def test_spec_module_imports_no_amaranth():
    """The register file's data (ubgen/mem/spec.py) is for the compiler: no Amaranth import of
    its own (the AST check sees one in the gateware module, the negative control)."""
    import ast
    from pathlib import Path

    def amaranth_imports(path):
        tree = ast.parse(Path(path).read_text())
        return [n for n in ast.walk(tree)
                if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("amaranth")
                or isinstance(n, ast.Import) and any(a.name.startswith("amaranth")
                                                     for a in n.names)]
    import ubgen.mem.register_file as gateware
    import ubgen.mem.spec as spec
    assert amaranth_imports(spec.__file__) == []
    assert amaranth_imports(gateware.__file__)
