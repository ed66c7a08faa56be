"""The register file's second port contexts (``[mem] rf_contexts`` = 2, docs/mem_rf.md): each
write and read port has the borrowed PUB controller (context 0) and an own controller (context
1); a write port's context 1 writes ``chain_in<p>``, a read port's context 1 drives
``data_out<q>`` when it fires; both contexts of one port in a cycle set ``rf_error``. The MEM core
configured through its bus (``mem_regmap``, ``encode_rf_ports``) in the Amaranth simulator,
stalls included, every read against a plain-Python reference of that contract written from the
affine forms (``ubgen.controller.iterate``). Negative controls: a reference whose context-1
writes take ``data_in`` instead of ``chain_in`` fails; one context cannot be configured on an
arch without contexts."""
from __future__ import annotations

import random

import pytest

from tests.gateware import configure, run_testbench
from ubgen.arch import MemParams, PUBParams
from ubgen.controller import AffineMap, ControllerConfig, iterate
from ubgen.mem.mem_tile import MemCore
from ubgen.mem.spec import encode_rf_ports, mem_regmap, rf_ports, rf_regmap

PARAMS = PUBParams()
MEM = MemParams(rf_contexts=2)
AW = MEM.rf_addr_width


def cfg(extents, start, strides, addr, astrides) -> ControllerConfig:
    return ControllerConfig(extents, AffineMap(start, strides), {"addr": AffineMap(addr, astrides)})


# every port and context used, the contexts of a port at disjoint cycles; reads after and
# during writes (write-through), context-1 reads of context-1 writes and the other way round
JOB = {
    "rf_write_0": cfg((4,), 0, (1,), 0, (1,)),
    "rf_write_0_c1": cfg((4,), 5, (2,), 8, (1,)),
    "rf_write_1": cfg((3,), 2, (3,), 16, (1,)),
    "rf_write_1_c1": cfg((2, 2), 20, (1, 4), 24, (1, 2)),
    "rf_read_0": cfg((4,), 14, (1,), 8, (1,)),
    "rf_read_0_c1": cfg((4,), 18, (1,), 0, (1,)),
    "rf_read_1": cfg((3,), 26, (2,), 24, (1,)),
    "rf_read_1_c1": cfg((3,), 27, (2,), 16, (1,)),
}
# both contexts of read port 0 fire at cycle 6: a conflict
CLASH = {"rf_write_0": cfg((2,), 0, (1,), 3, (1,)),
         "rf_read_0": cfg((2,), 5, (1,), 3, (1,)), "rf_read_0_c1": cfg((1,), 6, (1,), 4, (1,))}


def reference(configs, data, chain, *, chain_for_c1: bool = True):
    """Per read port ``{cycle: value}`` and the conflict cycles (module docstring)."""
    fires: dict[int, dict] = {}
    conflicts = set()
    for name, c in configs.items():
        parts = name.split("_")                   # rf, write|read, port[, c1]
        key, ctx = (parts[1], int(parts[2])), int(len(parts) == 4)
        for cycle, a in iterate(c, {"addr": AW}):
            if key in fires.setdefault(cycle, {}):
                conflicts.add(cycle)
            if key not in fires[cycle] or ctx:
                fires[cycle][key] = (ctx, a["addr"])
    words, reads = {}, [dict(), dict()]
    for c in sorted(fires):
        new = {}
        for (kind, p), (ctx, a) in sorted(fires[c].items()):
            if kind == "write":
                if a in new:
                    conflicts.add(c)
                new[a] = (chain if ctx and chain_for_c1 else data)[p][c]
        for (kind, q), (_ctx, a) in fires[c].items():
            if kind == "read":
                reads[q][c] = new.get(a, words.get(a))
        words.update(new)
    return reads, conflicts


def simulate(configs, stalls):
    core = MemCore(PARAMS, MEM)
    rng = random.Random(3)
    last = max(c for v in configs.values() for c, _a in iterate(v)) + 1
    data = [{c: rng.randrange(1 << 16) for c in range(last + 1)} for _ in range(2)]
    chain = [{c: rng.randrange(1 << 16) for c in range(last + 1)} for _ in range(2)]
    seen = {"reads": [dict(), dict()], "errors": []}

    async def bench(ctx):
        await configure(ctx, core.cfg, mem_regmap(PARAMS, MEM),
                        {"rf_error": 1, **encode_rf_ports(configs, PARAMS, MEM)})
        ctx.set(core.run, 1)
        cycle = clock = 0
        while cycle <= last:
            stall = stalls[clock % len(stalls)]
            ctx.set(core.stall, stall)
            for p in range(2):
                ctx.set(getattr(core, f"in_data_in{p}"), rng.randrange(1 << 16) if stall
                        else data[p][cycle])
                ctx.set(getattr(core, f"in_chain_in{p}"), rng.randrange(1 << 16) if stall
                        else chain[p][cycle])
            if not stall:
                seen["errors"].append((cycle, ctx.get(core.error)))
                for q in range(2):
                    if ctx.get(getattr(core, f"out_valid_out{q}")):
                        seen["reads"][q][cycle] = ctx.get(getattr(core, f"out_data_out{q}"))
            await ctx.tick()
            clock += 1
            cycle += not stall

    run_testbench(core, bench)
    return seen, data, chain


def test_second_contexts_against_the_reference():
    seen, data, chain = simulate(JOB, [False, True, False, False, True])
    want, conflicts = reference(JOB, data, chain)
    assert not conflicts and not any(e for _c, e in seen["errors"])
    checked = 0
    for q in range(2):
        assert set(seen["reads"][q]) == set(want[q])
        for c, v in want[q].items():
            assert v is not None
            assert seen["reads"][q][c] == v, (q, c)
            checked += 1
    assert checked == 14
    wrong, _ = reference(JOB, data, chain, chain_for_c1=False)   # negative control
    assert any(seen["reads"][q][c] != v for q in range(2) for c, v in wrong[q].items())


def test_both_contexts_of_a_port_in_one_cycle_is_an_error():
    seen, data, chain = simulate(CLASH, [False])
    _want, conflicts = reference(CLASH, data, chain)
    assert conflicts == {6}
    assert [c for c, e in seen["errors"] if e] == [c for c, _e in seen["errors"] if c > 6]


def test_the_contexts_are_configuration_only_with_rf_contexts_2():
    one, two = rf_ports(PARAMS, MemParams()), rf_ports(PARAMS, MEM)
    assert set(two) - set(one) == {"rf_write_0_c1", "rf_write_1_c1", "rf_read_0_c1",
                                   "rf_read_1_c1"}
    assert all(p.context == 1 and p.ag == "addr" for n, p in two.items() if n not in one)
    names = [r.name for r in rf_regmap(PARAMS, MEM).registers]
    assert names[0] == "rf_en" and names[-1] == "rf_error" and "rf_read_1_c1_addr_start" in names
    assert [r.name for r in rf_regmap(PARAMS, MemParams()).registers] == ["rf_en", "rf_error"]
    with pytest.raises(ValueError, match="no register-file port rf_read_0_c1"):
        encode_rf_ports({"rf_read_0_c1": JOB["rf_read_0_c1"]}, PARAMS, MemParams())
