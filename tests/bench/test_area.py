"""bench/area.py and bench/tile_area.py (docs/fpga.md "area comparison", docs/array.md "Area"):
the per-component tables add up, the PUB beats the DP-SRAM + AG baseline by the margin the
thesis reports, and the committed tile areas are what the generated tiles synthesize to. The
syntheses take minutes: ``make regress``."""
from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import area  # noqa: E402
import tile_area  # noqa: E402
from ubgen.arch import load_arch  # noqa: E402
from ubgen.areas import DATA  # noqa: E402

pytestmark = pytest.mark.regress


@pytest.fixture(scope="module")
def result():
    return area.run(load_arch("pub"))


def test_parts_add_up_to_the_flattened_block(result):
    """The separately synthesized submodules of each block sum to its flattened total within
    5 % (cross-module optimization is all that separates them)."""
    for key in ("pub", "dp"):
        assert abs(area.parts_vs_whole(result["blocks"][key])) < 5, key


def test_negative_control_a_missing_part_breaks_the_sum(result):
    """Drop the PUB's configuration registers from its parts: the sum is far off."""
    pub = dict(result["blocks"]["pub"])
    pub["parts"] = [p for p in pub["parts"] if p["unit"] != "config"]
    assert abs(area.parts_vs_whole(pub)) > 5


def test_pub_is_at_most_0_80_of_dp_ag(result):
    """Thesis Table 7.2: 0.82; the paper's Table II: 0.74; ours by the same method as before."""
    assert result["ratio_pub_over_dp"] <= 0.80
    pub, dp = result["blocks"]["pub"], result["blocks"]["dp"]
    assert pub["config_words"] > 0 and dp["config_bits"] > 0
    assert set(pub["rows"]) >= {"controllers (ID+AG+SG)", "aggregators (AGG)",
                                "transpose buffers (TB)", "config registers + bus",
                                "SRAM port logic"}


@pytest.fixture(scope="module")
def tiles():
    return tile_area.measure(tile_area.default_archs())


def test_committed_tile_areas_are_the_generated_tiles(tiles):
    """bench/tile_area.py --check: every shipped cgra_* arch's tiles synthesize to the figures
    ubgen/data/tile_area.json holds (the compiler's reports read that file), and each tile's
    parts add up to its flattened total within 5 %."""
    committed = json.loads(DATA.read_text())
    assert tile_area.compare(tiles, committed) == []
    for e in tiles["entries"]:
        for kind, t in e["tiles"].items():
            assert abs(tile_area.parts_vs_whole_tile(t)) < 5, kind


def test_negative_control_a_changed_figure_is_found(tiles):
    committed = copy.deepcopy(json.loads(DATA.read_text()))
    committed["entries"][0]["tiles"]["pe"]["transistors"] += 1
    assert tile_area.compare(tiles, committed) == [", ".join(committed["entries"][0]["archs"])]
