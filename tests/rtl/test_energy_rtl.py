"""Gate-level energy runs (docs/energy.md), large: `make regress`.

Table 7.2's designs on the 3x3 convolution's line buffer: the SRAM accesses equal what the
controller configurations ask for, and the all-zero image (the negative control) switches less
logic than the random one. The whole accelerator (a two-level gpyr on cgra_4x4, which leaves 7
of the 20 tiles unused; gaussian no longer fits cgra_4x4's 12 PE tiles): the gate-level netlist
reproduces the golden output in the predicted cycles, all-zero inputs cost less dynamic energy
than random ones, a tile no route or node uses costs clock energy and no data energy, and twice
the output pixels cost about twice the data energy."""
import pytest

pytestmark = [pytest.mark.rtl, pytest.mark.regress]


@pytest.fixture(scope="module")
def table():
    from sim.energy.blocks import design_energy
    return {d: (design_energy(d), design_energy(d, zero=True)) for d in ("pub", "dp")}


def test_table_7_2_sram_accesses_follow_the_configuration(table):
    from sim.energy.blocks import block_counts
    pub = block_counts("pub", "gaussian")["counts"]["srams"]
    (s,) = pub.values()
    # 4096 pixels in: one wide write per 4 words; two rows out: one wide read per 4 words each
    assert (s["kind"], s["depth"], s["width"]) == ("sp", 512, 64)
    assert s["writes"] == 1024 and s["reads"] == 2048
    for case in ("dp_line64", "dp_line128"):
        (d,) = block_counts("dp", case)["counts"]["srams"].values()
        assert (d["kind"], d["depth"], d["width"]) == ("dp", 2048, 16)
        assert d["writes"] == 4096 and d["reads"] == 4096


def test_table_7_2_zero_image_switches_less(table):
    for design, (rand, zero) in table.items():
        assert zero["dynamic_logic_pj"] < rand["dynamic_logic_pj"], design
        # the SRAM accesses and the clock are the same: only data switching differs
        assert zero["categories_pj"]["SRAM"] == pytest.approx(rand["categories_pj"]["SRAM"])
        assert zero["categories_pj"]["clock"] == pytest.approx(rand["categories_pj"]["clock"])


@pytest.fixture(scope="module")
def control():
    """The control app's runs (bench/energy.py CONTROL)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from energy import CONTROL, CONTROL_DOUBLE, CONTROL_HALF, app_point
    app, arch, sizes = CONTROL
    return {"random": app_point(app, arch, sizes),
            "zero": app_point(app, arch, sizes, zero=True),
            "half": app_point(app, arch, CONTROL_HALF),
            "double": app_point(app, arch, CONTROL_DOUBLE)}


def _data(p) -> float:
    c = p["energy"]["categories_pj"]
    return sum(v for k, v in c.items() if k not in ("clock", "SRAM"))


def test_gate_level_run_passes(control):
    for key, p in control.items():
        assert p["energy"]["passed"], (key, p["energy"]["failures"])
        assert p["energy"]["window_cycles"] == p["energy"]["cycles_measured"] + 1


def test_zero_inputs_cost_less_dynamic_energy(control):
    assert _data(control["zero"]) < _data(control["random"])


def test_unused_tile_costs_clock_and_no_data(control):
    p = control["random"]
    tiles = p["energy"]["tiles"]
    unused = set(tiles) - set(p["configured_tiles"])
    assert unused, "the bitstream configures every tile"
    for t in unused:
        assert tiles[t]["clock_pj"] > 0, t
        assert tiles[t]["data_pj"] == 0 and tiles[t].get("sram_pj", 0) == 0, (t, tiles[t])
    # and a configured tile does switch (the control of the control)
    used = [t for t in p["configured_tiles"] if t in tiles]
    assert any(tiles[t]["data_pj"] > 0 for t in used)


def test_twice_the_pixels_about_twice_the_data_energy(control):
    ratio = _data(control["double"]) / _data(control["half"])
    assert 1.7 < ratio < 2.3, ratio
