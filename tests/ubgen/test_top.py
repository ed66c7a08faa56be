"""The top's address map as data (docs/top.md) and its Verilog post-processing."""
import json

from ubgen.arch import load_arch
from ubgen.array.graph import full_regmap
from ubgen.top import strip_zero_memory_init
from ubgen.top.cgra_top import (CONTROL, GLB_BASE, TILE_BASE, control_address, glb_address,
                                tile_address, top_address_map)


def test_address_map_covers_every_register_once():
    arch = load_arch("cgra_4x4")
    amap = json.loads(json.dumps(top_address_map(arch)))
    kinds = amap["tiles"]["kinds"]
    addrs = set()
    for tile in amap["tiles"]["list"]:
        assert tile["base"] == TILE_BASE | tile["tile_id"] << 18
        for r in kinds[tile["kind"]]["registers"]:
            addrs.add(tile["base"] + 4 * r["offset"])
    regs = [r for r in full_regmap(arch) if "window_size" not in r]
    assert addrs == {tile_address(r["tile_id"], r["offset"]) for r in regs}
    assert len(addrs) == len(regs)
    ctrl = {c["address"] for c in amap["control"]}
    assert ctrl == {4 * i for i in range(len(CONTROL))}
    assert not ctrl & addrs and min(addrs) >= TILE_BASE > glb_address(
        arch.glb.banks * arch.glb.bank_words) > GLB_BASE > max(ctrl)
    assert control_address("CYCLE") == 0xC


def test_strip_zero_memory_init_keeps_other_initial_blocks():
    text = ("  reg [15:0] bank0 [3:0];\n  initial begin\n    bank0[0] = 16'h0000;\n"
            "    bank0[1] = 16'h0000;\n  end\n  reg [7:0] rom [1:0];\n  initial begin\n"
            "    rom[0] = 8'h00;\n    rom[1] = 8'h2a;\n  end\n")
    out = strip_zero_memory_init(text)
    assert "bank0[0]" not in out and "rom[1] = 8'h2a" in out and "rom[0] = 8'h00" in out
