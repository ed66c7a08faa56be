"""The array configured for one application (docs/fpga.md): configuration registers folded
into constants (ubgen/config.py ``folded_registers``), a bitstream decoded per tile
(ubgen/fpga/fold.py) and the simulation check of folded against configured tiles
(ubgen/fpga/fold_check.py), on cgra_2x2 (Amaranth simulator; no Yosys, no nextpnr)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from amaranth.hdl import Fragment, Module, Signal

from tests.gateware import run_testbench
from ubgen.arch import load_arch
from ubgen.array.layout import ArrayLayout
from ubgen.config import ConfigRegisters, folded_registers
from ubgen.fpga.common import FPGAError
from ubgen.fpga.fold import (Folded, FoldedConfig, _modules, decode_writes, folded_sources,
                             load_bitstream)
from ubgen.fpga.fold_check import check_fold
from ubgen.regmap import RegisterMap
from ubgen.top.spec import tile_address

PAIR_AVG = Path(__file__).resolve().parents[1] / "data" / "apps" / "pair_avg.py"


def _regmap() -> RegisterMap:
    rm = RegisterMap("blk")
    rm.add("a", 4, reset=3)
    rm.add("b", 8)
    return rm


def _write_then_read(regs: ConfigRegisters) -> tuple[int, int, int]:
    """Write 1 to ``b`` through the bus; then (a, b, read-back of b's offset)."""
    seen = []

    async def bench(ctx):
        ctx.set(regs.bus.addr, 1)
        ctx.set(regs.bus.wdata, 1)
        ctx.set(regs.bus.we, 1)
        await ctx.tick()
        ctx.set(regs.bus.we, 0)
        await ctx.tick()
        seen.extend([ctx.get(regs.fields["a"]), ctx.get(regs.fields["b"]),
                     ctx.get(regs.bus.rdata)])
    m = Module()
    m.submodules.regs = regs
    tick = Signal()                  # a folded register file has no clocked logic of its own
    m.d.sync += tick.eq(~tick)
    run_testbench(m, bench)
    return tuple(seen)


def test_folded_registers_are_constants_that_ignore_writes():
    regs = ConfigRegisters(_regmap())
    with folded_registers({"b": 0x5A}) as fold:
        assert _write_then_read(regs) == (3, 0x5A, 0x5A)
    assert regs.folded == {"a": 3, "b": 0x5A}          # a unwritten: its reset value
    assert fold.unused() == []
    # negative control: the same writes change the register of an unfolded register file
    assert _write_then_read(ConfigRegisters(_regmap())) == (3, 1, 1)


def test_folded_registers_report_unknown_names_and_wide_values():
    with folded_registers({"c": 1, "b": 2}) as fold:
        Fragment.get(ConfigRegisters(_regmap()), None)
    assert fold.unused() == ["c"]
    with pytest.raises(ValueError, match="value 16 does not fit register a"):
        with folded_registers({"a": 16}):
            Fragment.get(ConfigRegisters(_regmap()), None)
    plain = ConfigRegisters(_regmap())
    Fragment.get(plain, None)
    assert plain.folded is None                        # outside the scope: registers


def _arch():
    return load_arch("cgra_2x2")


def _pe():
    layout = ArrayLayout(_arch())
    pos = next(p for p in layout.positions() if p.kind == "pe")
    return layout, pos, layout.specs["pe"].regmap


def _decode(writes) -> FoldedConfig:
    return decode_writes(FoldedConfig("hand", _arch(), "test"), writes)


def test_decode_writes_names_each_register_and_keeps_the_last_write():
    _, pos, rm = _pe()
    sel = rm["cb_data0_sel"]
    cfg = _decode([[tile_address(pos.tile_id, sel.offset), 2],
                   [tile_address(pos.tile_id, sel.offset), 5]])
    assert cfg.values == {(pos.row, pos.col): {"cb_data0_sel": 5}}
    assert cfg.writes == {(pos.row, pos.col): [(sel.offset, 2), (sel.offset, 5)]}
    assert cfg.n_writes == 2


def _bad_writes():
    layout, pos, rm = _pe()
    mem = next(p for p in layout.positions() if p.kind == "mem")
    window = layout.specs["mem"].regmap.windows[0]
    n_tiles = len(layout.positions())
    return {
        "control register": ([[0x0, 1]], "not a tile register"),
        "unaligned": ([[tile_address(pos.tile_id, 0) + 2, 1]], "not a tile register"),
        "window": ([[tile_address(mem.tile_id, window.offset), 1]], "not foldable"),
        "no tile": ([[tile_address(n_tiles, 0), 1]], f"no tile {n_tiles}"),
        "too wide": ([[tile_address(pos.tile_id, rm["cb_data0_sel"].offset), 1 << 20]],
                     "does not fit cb_data0_sel"),
        "not a pair": ([[1, 2, 3]], "is not \\[byte address, value\\]"),
    }


@pytest.mark.parametrize("case", sorted(_bad_writes()))
def test_decode_writes_refuses_what_cannot_be_folded(case):
    writes, message = _bad_writes()[case]
    with pytest.raises(FPGAError, match=message):
        _decode(writes)


def test_load_bitstream_refuses_bad_files(tmp_path):
    bad = tmp_path / "x.bitstream.json"
    bad.write_text("{}")
    with pytest.raises(FPGAError, match="is not a bitstream"):
        load_bitstream(bad)
    bad.write_text(json.dumps({"arch": "cgra_2x2", "writes": []}))
    with pytest.raises(FPGAError, match="for cgra_2x2, not cgra_4x4"):
        load_bitstream(bad, "cgra_4x4")
    with pytest.raises(FPGAError, match="cannot read"):
        load_bitstream(tmp_path / "missing.json")


def _hand_config() -> tuple[FoldedConfig, tuple[int, int]]:
    """A PE tile of cgra_2x2 reading data0 from north track 0 (select 1), its core driving
    east track 0 (the select's reset) through the pipeline register, by writes at the tile's
    register offsets."""
    _, pos, rm = _pe()
    regs = {"cb_data0_sel": 1, "sb16_E_0_pipe": 1}
    writes = [[tile_address(pos.tile_id, rm[n].offset), v] for n, v in regs.items()]
    return _decode(writes), (pos.row, pos.col)


def test_check_fold_passes_for_the_decoded_values_and_fails_for_a_corrupted_one():
    cfg, key = _hand_config()
    ok = check_fold(cfg, cycles=16, positions=[key])
    assert ok.ok and ok.tiles == 1 and ok.mismatches == []
    bad = copy.deepcopy(cfg.values)
    bad[key]["sb16_E_0_pipe"] = 0                       # the register bypassed instead
    result = check_fold(cfg, bad, cycles=16, positions=[key])
    assert not result.ok
    assert result.mismatches[0].startswith(f"tile r{key[0]}c{key[1]} (pe)")


def test_configured_tiles_get_their_own_module_and_reset_ones_share_one():
    cfg, key = _hand_config()
    modules = _modules(cfg, cfg.values)
    assert modules[f"cgra_pe_tile_r{key[0]}c{key[1]}"][1] == cfg.values[key]
    # every other tile is at reset: one module per kind and edge situation, none per position
    per_position = [n for n in modules if not n.endswith("_reset")]
    assert per_position == [f"cgra_pe_tile_r{key[0]}c{key[1]}"]
    layout = ArrayLayout(_arch())
    assert len(modules) == len({(p.kind, layout.edges(p.row, p.col))
                                for p in layout.positions() if (p.row, p.col) != key}) + 1
    reset_values = [m[1] for n, m in modules.items() if n.endswith("_reset")]
    assert len(reset_values) == len(modules) - 1 and all(v == {} for v in reset_values)


def test_a_fold_naming_no_register_of_the_block_is_refused():
    with pytest.raises(FPGAError, match="blk here: no configuration register named nope"):
        Fragment.get(Folded(ConfigRegisters(_regmap()), {"nope": 1, "a": 1}, "blk here"), None)


@pytest.mark.regress
def test_a_compiled_bitstream_folds_and_checks(tmp_path):
    """pair_avg (tests/data/apps) placed and routed on cgra_2x2 by the compiler: its bitstream
    file folds, every folded tile module converts to Verilog and matches the configured tile
    (regress: ~1 min)."""
    from compiler.pipeline import compile_app
    res = compile_app(str(PAIR_AVG), "cgra_2x2", until="pnr")
    files = res.pnr.bitstream.save(tmp_path, "pair_avg-cgra_2x2")
    cfg = load_bitstream(next(f for f in files if f.suffix == ".json"))
    assert cfg.app == "pair_avg" and cfg.n_writes == len(res.pnr.bitstream)
    assert len(folded_sources(cfg)) == len(_modules(cfg, cfg.values)) >= 4
    from ubgen.fpga.designs import folded_design
    result = folded_design(next(f for f in files if f.suffix == ".json"), cycles=24).check(
        cfg.arch)
    assert result["ok"] and result["tiles"] == len(_modules(cfg, cfg.values))


def test_folded_design_is_a_loop_free_flow_design_with_its_check(tmp_path):
    from ubgen.fpga.designs import folded_design
    cfg, key = _hand_config()
    path = tmp_path / "hand-cgra_2x2.bitstream.json"
    pos = ArrayLayout(_arch()).tile_id(*key)
    path.write_text(json.dumps({"arch": "cgra_2x2", "writes": [
        [tile_address(pos, off), v] for off, v in cfg.writes[key]]}))
    design = folded_design(path, cycles=4)
    assert design.name == "folded_cgra_2x2_hand" and design.arch == "cgra_2x2"
    assert not design.ignore_loops and design.flatten and design.key.startswith("fold:")
    assert design.sources is not None and design.check is not None   # run by the regress test
    # another configuration is another design for the Verilog cache
    other = tmp_path / "other-cgra_2x2.bitstream.json"
    other.write_text(json.dumps({"arch": "cgra_2x2", "writes": [[tile_address(pos, 0), 1]]}))
    assert folded_design(other).key != design.key


def test_cli_refuses_a_bad_bitstream_in_one_line(tmp_path, capsys):
    from ubgen.fpga.cli import main
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    assert main(["--target", "ecp5", "--bitstream", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "is not a bitstream" in err and err.count("\n") == 1
    assert main(["--target", "ecp5", "--bitstream", str(bad), "--check-cycles", "0"]) == 1
    assert "--check-cycles must be at least 1" in capsys.readouterr().err


@pytest.mark.regress
def test_the_folded_cgra_2x2_routes(tmp_path):
    """pair_avg's bitstream folded into cgra_2x2, checked, synthesized, placed and routed
    (Yosys + nextpnr, ~3 min): a routed Fmax without --ignore-loops, where the unfolded
    cgra_2x2 stops (docs/fpga.md)."""
    from compiler.pipeline import compile_app
    from ubgen.fpga.designs import folded_design
    from ubgen.fpga.flow import run_fpga_flow
    res = compile_app(str(PAIR_AVG), "cgra_2x2", until="pnr")
    files = res.pnr.bitstream.save(tmp_path, "pair_avg-cgra_2x2")
    design = folded_design(next(f for f in files if f.suffix == ".json"), cycles=16)
    report = run_fpga_flow("ecp5", design, out_dir=tmp_path / "flow", quiet=True)
    assert report["design"] == "folded_cgra_2x2_pair_avg" and not report["ignore_loops"]
    assert report["check"]["ok"] and report["fmax_mhz"] > 0
    assert (tmp_path / "flow" / "report.json").exists()
