"""ubgen's builder of application FPGA designs (ubgen/fpga/app.py) on hand-written descriptions,
in Amaranth's simulator: a stream through a registered operator and a RAM, timed by the
controllers' registers; the descriptions it refuses; the pins the flow gives a design. The
compiler's descriptions of real apps run in Verilator (tests/rtl/test_fpga_app.py)."""
from __future__ import annotations

import copy

import pytest

from tests.gateware import run_testbench
from ubgen.arch import ControllerParams
from ubgen.controller import AffineMap, ControllerConfig, ControllerLayout, encode_controller
from ubgen.fpga import FPGAError
from ubgen.fpga.app import FORMAT, AppDesign, AppDesignError, app_pins, check_description
from ubgen.fpga.designs import app_design

CW = 6          # cycle counter bits


def ctl(name: str, start: int, n: int, addr: tuple[int, int] | None = None) -> dict:
    """A one-dimensional controller firing at ``start .. start + n - 1``, address
    ``addr[0] + i`` in ``addr[1]`` bits when given."""
    widths = {"addr": addr[1]} if addr else {}
    cfg = ControllerConfig((n,), AffineMap(start, (1,)),
                           {"addr": AffineMap(addr[0], (1,))} if addr else {})
    params = ControllerParams(1, max(1, (n - 1).bit_length()), CW)
    return {"name": name, "max_dims": 1, "extent_width": params.extent_width,
            "cycle_width": CW, "addr_widths": widths,
            "registers": encode_controller(cfg, ControllerLayout(name, widths, params))}


def description(n: int = 4, delay: int = 3) -> dict:
    """in -> +5 (registered) -> RAM (written at t, read ``delay`` cycles later) -> out."""
    t_in, t_add, t_wr = 1, 2, 3                 # fire; word on data at 2; sum at 3
    t_rd = t_wr + delay
    nodes = [
        {"id": "add", "kind": "pe", "params": {"op": "ADD", "out_reg": 1, "consts": {"data1": 5}}},
        {"id": "ram", "kind": "ram", "params": {
            "words": 8, "addr_width": 3, "writes": [ctl("wr0", t_wr, n, (0, 3))],
            "reads": [ctl("rd0", t_rd - 1, n, (0, 3))], "share_write": True,
            "share_read": True}},
        {"id": "in.x", "kind": "in", "params": {"controller": ctl("in", t_in, n)}},
        {"id": "out.y", "kind": "out", "params": {"controller": ctl("out", t_rd, n)}},
    ]
    edges = [
        {"src": "in.x", "src_port": "data", "dst": "add", "dst_port": "data0", "width": 16,
         "latency": t_add - (t_in + 1)},
        {"src": "add", "src_port": "res", "dst": "ram", "dst_port": "data_in0", "width": 16,
         "latency": t_wr - (t_add + 1)},
        {"src": "ram", "src_port": "data_out0", "dst": "out.y", "dst_port": "data",
         "width": 16, "latency": 0},
    ]
    return {"format": FORMAT, "app": "tiny", "cycles_predicted": t_rd + n - 1,
            "cycle_width": CW, "nodes": nodes, "edges": edges}


def simulate(desc: dict, words: list[int], cycles: int = 40) -> tuple[list, int, int]:
    dut = AppDesign(desc)
    got: list[tuple[int, int]] = []
    state = {}

    async def bench(ctx):
        k = 0
        ctx.set(dut.in0_data, words[0])
        await ctx.tick()
        ctx.set(dut.run, 1)
        for _ in range(cycles):
            take, valid, data, cyc = (ctx.get(dut.in0_take), ctx.get(dut.out0_valid),
                                      ctx.get(dut.out0_data), ctx.get(dut.cycle))
            if valid:
                got.append((cyc, data))
            await ctx.tick()
            if take:
                k += 1
                ctx.set(dut.in0_data, words[k] if k < len(words) else 0)
        state.update(last=ctx.get(dut.last_write), writes=ctx.get(dut.writes),
                     done=ctx.get(dut.done))
    run_testbench(dut, bench)
    assert state["done"]
    return got, state["last"], state["writes"]


def test_stream_through_operator_and_ram():
    """The words come out +5, in order, ``delay`` cycles after they were stored; the design's
    counters give the cycle of the last write and the number of writes."""
    desc = description()
    got, last, writes = simulate(desc, [10, 20, 30, 40])
    assert [d for _, d in got] == [15, 25, 35, 45]
    # out_valid is registered: seen one cycle after each fire, at the counter value + 1
    assert [c for c, _ in got] == [7, 8, 9, 10]
    assert last == desc["cycles_predicted"] == 9 and writes == 4


def test_changed_constant_changes_the_words():
    """Negative control of the test above: the folded constant is the description's."""
    desc = description()
    desc["nodes"][0]["params"]["consts"]["data1"] = 6
    got, _, _ = simulate(desc, [10, 20, 30, 40])
    assert [d for _, d in got] == [16, 26, 36, 46]


def test_read_one_cycle_late_reads_the_next_word():
    """Negative control: the RAM's read controller one cycle late shows the data a cycle
    later than the output samples it: the output gets the previous read's word."""
    desc = description()
    regs = desc["nodes"][1]["params"]["reads"][0]["registers"]
    regs["rd0_cycle_start"] += 1
    got, _, _ = simulate(desc, [10, 20, 30, 40])
    assert [d for _, d in got] != [15, 25, 35, 45]


def test_two_writes_in_one_cycle_the_latest_wins():
    """Two write streams that fire together (cycles 5 and 6) into one RAM: write 0 stores the
    results of cycles 3..6 at addresses 0..3, write 1 those of cycles 5..8 at the same
    addresses; the reads after both see write 1's words, the last write of each address."""
    desc = description(delay=7)                 # reads at 10..13 of addresses 0..3
    ram = desc["nodes"][1]["params"]
    ram["writes"].append(ctl("wr1", 5, 4, (0, 3)))
    ram["share_write"] = False
    desc["edges"].append({"src": "add", "src_port": "res", "dst": "ram", "dst_port": "data_in1",
                          "width": 16, "latency": 0})
    got, _, _ = simulate(desc, [10, 20, 30, 40])
    # the sum of cycle t is word (t - 3) + 5 while words last, then the last word's
    assert [d for _, d in got] == [35, 45, 45, 45]


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(format="other/1"), "not an application FPGA design"),
    (lambda d: d["nodes"][0].update(kind="dsp"), "unknown kind 'dsp'"),
    (lambda d: d["edges"][0].update(dst="nowhere"), "names an unknown node"),
    (lambda d: d["edges"][0].update(latency=-1), "latency -1"),
])
def test_bad_descriptions_are_refused(change, message):
    desc = copy.deepcopy(description())
    change(desc)
    with pytest.raises(AppDesignError, match=message):
        check_description(desc)
    with pytest.raises(FPGAError, match=message):
        app_design(desc)


def test_an_edge_from_a_missing_output_is_refused():
    desc = description()
    desc["edges"][2]["src_port"] = "data_out7"
    with pytest.raises(AppDesignError, match="ram.data_out7 is read but its node has no"):
        AppDesign(desc)


def test_pins():
    """run and every stream while 40 pins last; the app design is on the 85k by default."""
    desc = description()
    assert app_pins(desc) == ("run", "in0_data", "in0_take", "out0_data", "out0_valid")
    many = copy.deepcopy(desc)
    many["nodes"] += [{"id": f"in.{k}", "kind": "in", "params": desc["nodes"][2]["params"]}
                      for k in range(3)]
    pins = app_pins(many)
    assert "in1_data" in pins and "in2_data" not in pins       # 1 + 16 + 16 <= 40 < 1 + 48
    spec = app_design(desc)
    assert spec.name == "app_tiny" and spec.devices["ecp5"][0] == "--85k"


def test_arrays_are_placed_with_loops_ignored():
    """The arrays' switch boxes make structural combinational loops: their designs pass nextpnr
    ``--ignore-loops`` by default (docs/fpga.md "The CGRA on the FPGA"); other designs do not,
    so a loop there stays an error."""
    from ubgen.fpga import DESIGNS, TARGETS, nextpnr_arguments
    assert DESIGNS["cgra_2x2"].ignore_loops and DESIGNS["cgra_4x4"].ignore_loops
    assert not DESIGNS["pe_tile"].ignore_loops and not app_design(description()).ignore_loops
    tgt = TARGETS["ecp5"]
    assert "--ignore-loops" in nextpnr_arguments(tgt, tgt.device, "x.lpf", 100, None, 1, True)
    assert "--ignore-loops" not in nextpnr_arguments(tgt, tgt.device, "x.lpf", 100, None, 1)
