"""Thesis Figure 7.4 (compiler.sweep.figure_7_4): area per app and memory implementation from
the mapping points and bench/area.py's blocks."""
from compiler.sweep.figure_7_4 import IMPLS, PARTS, app_areas, figure_7_4

BLOCKS = {"pe": {"logic_um2": 10.0}, "dpram": {"logic_um2": 100.0, "sram_um2": 1000.0},
          "dp": {"logic_um2": 300.0, "sram_um2": 1000.0},
          "pub": {"logic_um2": 500.0, "sram_um2": 400.0}}


def test_app_areas_stack_memories_controller_pes_and_compute():
    a = app_areas({"pes": 3, "mems": 2}, {"mems": 4}, {"mems": 4, "controller_pes": 20}, BLOCKS)
    assert a[IMPLS[0]] == {PARTS[0]: 4 * 100 + 20 * 10, PARTS[1]: 4000, PARTS[2]: 30}
    assert a[IMPLS[1]] == {PARTS[0]: 1200, PARTS[1]: 4000, PARTS[2]: 30}
    assert a[IMPLS[2]] == {PARTS[0]: 1000, PARTS[1]: 800, PARTS[2]: 30}


def test_a_refused_mapping_has_no_bar():
    """Negative control: a refused or missing mapping gives its reason, never an area."""
    a = app_areas({"pes": 3, "mems": 2}, {"error": "two writers", "status": "error"}, {},
                  BLOCKS)
    assert a[IMPLS[1]] == "no mapping: two writers"
    assert a[IMPLS[0]] == "no mapping: not run"
    assert isinstance(a[IMPLS[2]], dict)


def test_figure_section_plots_and_compares(tmp_path):
    res = {"table g": {"pes": 3, "mems": 2}, "backend dp g": {"mems": 4},
           "backend dp-pe g": {"mems": 4, "controller_pes": 20}}
    lines = figure_7_4(res, {"blocks": BLOCKS}, ["g"], tmp_path / "img", tmp_path)
    text = "\n".join(lines)
    assert (tmp_path / "img" / "fig7_4_area.png").read_bytes()[:4] == b"\x89PNG"
    # DP + PEs 4630 um2 against the PUB's 1830: 2.5x
    assert "| g | 5k | 5k | 2k | 2.5x |" in text
    assert "total 2.5x, SRAM macros 5.0x, MEM control 0.6x" in text
    assert "Not measured" in "\n".join(figure_7_4(res, {"error": "no yosys"}, ["g"],
                                                  tmp_path / "img", tmp_path))
