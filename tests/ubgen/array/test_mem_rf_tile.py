"""The MEM tile's register-file mode reached the way the array reaches it (Amaranth simulator):
every register written through the tile's configuration bus at its offset in the tile's
register map, data in on incoming tracks through the connection boxes, data and valid out on
outgoing tracks through the switch boxes of both networks. The reads are checked against the
register file's reference (tests/ubgen/test_mem_register_file.py); ``rf_en`` = 0 gives the PUB's
ports back; the conflict reaches the tile's ``error``."""
from __future__ import annotations

import warnings

from tests import gateware as gw
from tests.gateware import run_testbench
from tests.ubgen.test_mem_register_file import WRITE_THROUGH, data_for, reference
from ubgen.arch import load_arch
from ubgen.array.graph import full_regmap, global_address
from ubgen.array.layout import ArrayLayout
from ubgen.array.tile import Tile, track_port
from ubgen.interconnect import SIDES
from ubgen.interconnect.switch_box import Source
from ubgen.mem.spec import MEM_STATUS, encode_rf_ports, rf_registers

ARCH = load_arch("cgra_4x4")
# data_in<p> from incoming track (side, track); data_out<q>/valid_out<q> to outgoing (side, track)
IN_TRACKS = {"data_in0": ("W", 0), "data_in1": ("N", 1)}
OUT_TRACKS = {0: ("E", 0), 1: ("S", 2)}


def route_registers(spec) -> dict[str, int]:
    """Connection-box and switch-box selects of the routes above (pipeline registers off)."""
    regs = {}
    for port, (side, track) in IN_TRACKS.items():
        cb = spec.cbs[port]
        regs[cb.sel_reg] = cb.inputs().index(Source("track", side=side, track=track))
    for q, (side, track) in OUT_TRACKS.items():
        for w, name in ((spec.word_width, f"data_out{q}"), (1, f"valid_out{q}")):
            sb = spec.sbs[w]
            regs[sb.sel_reg(side, track)] = sb.mux_inputs(side, track).index(
                Source("core", port=name))
    return regs


def test_rf_mode_through_the_tile():
    lay = ArrayLayout(ARCH)
    spec = lay.specs["mem"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # the layout's unused prototype cores
        tile = Tile(spec, lay.cores["mem"](ARCH))
    regs = route_registers(spec)
    regs.update(encode_rf_ports(WRITE_THROUGH, ARCH.pub, ARCH.mem))
    regs["rf_en"] = 0
    data = data_for(11, 24)
    want, conflicts = reference(WRITE_THROUGH, data)
    stalls = [False, False, True, False, True, True, False]
    seen = {"pub": [], "rf": [dict(), dict()], "errors": []}

    def track(direction, side, t, w=16):
        return getattr(tile, track_port(w, direction, side, t))

    async def configure(ctx, values):
        await gw.configure(ctx, tile.cfg, spec.regmap, values)

    async def run(ctx, rf: bool):
        ctx.set(tile.run, 1)
        cycle, clock = 0, 0
        while cycle < 20:
            stall = stalls[clock % len(stalls)]
            ctx.set(tile.stall, stall)
            for p, (side, t) in enumerate(IN_TRACKS.values()):
                ctx.set(track("in", side, t), (clock * 7919) & 0xFFFF if stall else data[p][cycle])
            outs = [(ctx.get(track("out", s, t, 1)), ctx.get(track("out", s, t)))
                    for s, t in OUT_TRACKS.values()]
            if stall:
                assert not any(v for v, _ in outs)
            elif rf:
                seen["errors"].append((cycle, ctx.get(tile.error)))
                for q, (valid, value) in enumerate(outs):
                    if valid:
                        seen["rf"][q][cycle] = value
            else:
                seen["pub"].append(outs)
            await ctx.tick()
            clock += 1
            cycle += not stall
        ctx.set(tile.run, 0)
        await ctx.tick()

    async def bench(ctx):
        await configure(ctx, regs)
        for name, value in regs.items():                     # read-back at the tile offsets
            ctx.set(tile.cfg.addr, spec.regmap[name].offset)
            assert ctx.get(tile.cfg.rdata) == value, name
        # rf_en = 0: the lent controllers are the PUB's streams again (agg2sram and sram2tb
        # collide on its SRAM: its own error flag); tb2out is off, so its ports stay quiet
        await run(ctx, rf=False)
        assert ctx.get(tile.error) == 1
        ctx.set(tile.cfg.addr, spec.regmap["rf_error"].offset)
        assert ctx.get(tile.cfg.rdata) == 0
        await configure(ctx, {"error": 1, "rf_en": 1})
        assert ctx.get(tile.error) == 0
        await run(ctx, rf=True)
        assert ctx.get(tile.error) == 1
        ctx.set(tile.cfg.addr, spec.regmap["rf_error"].offset)
        assert ctx.get(tile.cfg.rdata) == 1
        ctx.set(tile.cfg.addr, spec.regmap["error"].offset)   # the PUB's own flag stays clear
        assert ctx.get(tile.cfg.rdata) == 0
        await configure(ctx, {"rf_error": 1})
        assert ctx.get(tile.error) == 0

    run_testbench(tile, bench)
    assert all(v == 0 and d == 0 for outs in seen["pub"] for v, d in outs)
    checked = 0
    for q in range(2):
        assert set(seen["rf"][q]) == set(want[q])
        for c, v in want[q].items():
            if v is not None:
                assert seen["rf"][q][c] == v, (q, c)
                checked += 1
    assert checked == 7 and conflicts == {6}
    assert [c for c, e in seen["errors"] if e] == [c for c, _ in seen["errors"] if c > 6]


def test_rf_registers_in_the_array_regmap():
    """Every MEM tile lists the register file's registers after the PUB's, below the sram
    window, so the interconnect registers keep their offsets."""
    lay = ArrayLayout(ARCH)
    spec = lay.specs["mem"]
    rf = rf_registers(ARCH.pub, ARCH.mem)
    (win,) = spec.core_regmap.windows
    assert rf[0].name == "rf_en" and rf[0].offset == len(spec.core_regmap.registers) - len(rf)
    assert rf[-1].offset < win.offset and spec.core_span == win.offset + win.size
    assert MEM_STATUS == ("error", "cycle_count", "rf_error")
    assert set(MEM_STATUS) <= {r.name for r in spec.core_regmap.registers}
    regs = full_regmap(ARCH)
    mems = [p.tile_id for p in lay.positions() if p.kind == "mem"]
    for tid in mems:
        mine = {r["name"]: r for r in regs if r["tile_id"] == tid}
        for r in rf:
            assert mine[r.name]["global_addr"] == global_address(tid, r.offset)
    assert sum(r["name"].startswith("rf_") for r in regs) == len(mems) * len(rf)
    assert not any(r["name"].startswith("rf_") for r in regs if r["tile_kind"] != "mem")
