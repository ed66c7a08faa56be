"""ubgen.areas: the measured tile areas the compiler reports (docs/array.md "Area"), found by
the fingerprint of an arch's tile parameters, without Amaranth."""
from dataclasses import replace

import pytest

from ubgen.arch import load_arch
from ubgen.areas import AreaDataError, app_area, fingerprint, tile_areas

SHIPPED = ["cgra_2x2", "cgra_4x4", "cgra_8x8", "cgra_4x16", "cgra_16x32", "cgra_dp_4x8",
           "cgra_dp_16x32", "cgra_dppe_4x8", "cgra_dppe_16x32"]


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_array_has_its_tiles_measured(name):
    kinds = tile_areas(load_arch(name))
    assert set(kinds) == {"pe", "mem", "io"}
    for t in kinds.values():
        assert t["total_um2"] == pytest.approx(t["logic_um2"] + t["sram_um2"], abs=0.2)
        assert t["config_words"] > 0 and t["transistors"] > 0
    # only the MEM tile has an SRAM macro, and it is the largest tile
    assert kinds["mem"]["sram_um2"] > 0 and kinds["pe"]["sram_um2"] == kinds["io"]["sram_um2"] == 0
    assert kinds["mem"]["total_um2"] > max(kinds["pe"]["total_um2"], kinds["io"]["total_um2"])


def test_array_size_does_not_change_a_tile_but_its_parameters_do():
    a = load_arch("cgra_4x4")
    assert fingerprint(a) == fingerprint(replace(a, array=replace(a.array, rows=9, columns=7)))
    wider = replace(a, array=replace(a.array, tracks=a.array.tracks + 1))
    assert fingerprint(wider) != fingerprint(a)
    # negative control: an arch whose tiles were never measured has no figures, one line
    with pytest.raises(AreaDataError, match=r"arch cgra_4x4: no measured tile areas .*"
                                            r"bench/tile_area.py --arch cgra_4x4 --write"):
        tile_areas(wider)


def test_a_dual_port_mem_tile_is_found_by_its_sram():
    """The dual-port MEM tiles are built from ``[dpbuf]``: its parameters are part of their
    fingerprint (not of the PUB tile's), and their SRAM macro is the dual-port one."""
    dp, pub = load_arch("cgra_dp_4x8"), load_arch("cgra_4x4")
    deeper = replace(dp, dpbuf=replace(dp.dpbuf, sram_depth=2 * dp.dpbuf.sram_depth))
    assert fingerprint(deeper) != fingerprint(dp)
    assert fingerprint(replace(pub, dpbuf=deeper.dpbuf)) == fingerprint(pub)
    a = dp.area
    assert tile_areas(dp)["mem"]["sram_um2"] == pytest.approx(a.sp_512x64_um2
                                                              * a.dp_over_sp_ratio, abs=0.1)
    # negative control: the deeper SRAM's tile was never measured
    with pytest.raises(AreaDataError, match="no measured tile areas"):
        tile_areas(deeper)


def test_app_area_sums_the_tiles_it_occupies():
    a = load_arch("cgra_8x8")
    kinds = tile_areas(a)
    got = app_area(a, {"pe": 3, "mem": 1, "io": 2})
    assert got["tile_area_um2"] == pytest.approx(3 * kinds["pe"]["total_um2"]
                                                 + kinds["mem"]["total_um2"]
                                                 + 2 * kinds["io"]["total_um2"], abs=0.2)
    assert app_area(a, {"pe": 0, "mem": 0, "io": 0})["tile_area_um2"] == 0
    a2 = replace(a, pub=replace(a.pub, agg_depth=4))
    missing = app_area(a2, {"pe": 1})
    assert missing["tile_area_um2"] is None and "no measured tile areas" in missing["tile_area_note"]


def test_contexts_change_the_fingerprint_only_when_on():
    """Tiles without PE or register-file contexts are the tiles measured before contexts
    existed (their fingerprint leaves the two fields out); turning either on is a new tile."""
    from ubgen.areas import tile_params
    a = load_arch("cgra_4x4")
    assert a.array.pe_contexts == 1 and a.mem.rf_contexts == 1
    params = tile_params(a)
    assert "pe_contexts" not in params["array"] and "rf_contexts" not in params["mem"]
    assert fingerprint(replace(a, array=replace(a.array, pe_contexts=4))) != fingerprint(a)
    assert fingerprint(replace(a, mem=replace(a.mem, rf_contexts=2))) != fingerprint(a)
