"""The double-buffer plan of a tiled app (``compiler.backend.glb.double_buffer``; docs/tiling.md
"Overlapped runs"): whether the global buffer holds two regions per IO stream, and the
configuration words that switch a run between them, from the compiler's own netlist and
bitstream; and the tiler's preference for tiles that leave that room."""
from __future__ import annotations

from functools import lru_cache

from compiler.backend.glb import double_buffer, io_fires
from compiler.backend.pnr import array_data
from compiler.frontend.source import load_app
from compiler.pipeline import compile_tiled
from compiler.tiling.choose import glb_fits
from ubgen.arch import load_arch

ARCH = load_arch("cgra_8x8")


@lru_cache(maxsize=None)
def _tiled(w: int, h: int, shape=None, overlap: bool = False):
    return compile_tiled(load_app("gaussian", {"width": w, "height": h}), ARCH, "bundle",
                         shape=shape, overlap=overlap)


def test_the_ci_tile_has_two_regions_and_switches_the_io_address_registers():
    r = _tiled(22, 18, (10, 8))
    ov = r.bundle["overlap"]
    assert ov["overlap"] is True
    banks = r.pnr.io_banks()
    assert {n: b["bank"] for n, b in banks.items()} == {"io.blur_st": 4, "io.hw_input_ld0": 3}
    # region 1 starts past region 0's last word, rounded up to a row; both fit the bank
    assert ov["delta"] == {"3": 120, "4": 80}            # 12 x 10 inputs, 10 x 8 outputs
    bitstream = dict(map(tuple, r.bundle["bitstream"]))
    assert len(ov["registers"]) == 2
    for addr, v0, v1 in ov["registers"]:
        tid, name, _ = array_data(ARCH).index.decode(addr)
        node = next(n for n, b in banks.items() if b["tile_id"] == tid)
        offs = [off for _c, off in io_fires(r.netlist, ARCH, node)]
        assert name == f"{r.netlist.graph.nodes[node]['stream']}_addr_start"
        assert bitstream[addr] == v0 == min(offs)        # region 0 is the bitstream's own
        assert v1 - v0 == ov["delta"][str(banks[node]["bank"])] > max(offs) - min(offs)
        assert max(offs) + v1 - v0 < ARCH.glb.bank_words


def test_negative_control_a_tile_filling_a_bank_has_no_room_for_two_regions():
    ov = _tiled(128, 96, (63, 47)).bundle["overlap"]
    assert ov["overlap"] is False and ov["registers"] == [] and ov["delta"] == {}
    assert ov["why"].endswith("streams use words 0..2960: two regions need 5925 of its 4096 "
                              "words")


def test_negative_control_a_bank_with_an_input_and_an_output_stream_is_refused():
    r = _tiled(22, 18, (10, 8))
    one_bank = {n: dict(b, bank=3) for n, b in r.pnr.io_banks().items()}
    ov = double_buffer(r.netlist, ARCH, one_bank, array_data(ARCH).index)
    assert ov["overlap"] is False
    assert ov["why"] == ("bank 3 holds an input and an output stream (the host's load would "
                         "take the port the run uses)")


def test_the_tiler_prefers_two_regions_and_falls_back_to_one():
    over, single = _tiled(128, 96, overlap=True), _tiled(128, 96)
    assert (over.runs, tuple(over.tiling.shape)) == (7, (18, 94))
    assert (single.runs, tuple(single.tiling.shape)) == (4, (63, 47))
    assert over.bundle["overlap"]["overlap"] is True
    assert single.bundle["overlap"]["overlap"] is False
    # the 4-run tile fits the GLB once, not twice (the input is 65 x 49 = 3185 words)
    assert glb_fits(single.tiling.program, ARCH) is None
    assert glb_fits(single.tiling.program, ARCH, regions=2) == (
        "input input needs 3185 GLB words, its 1 stream(s) have 2048 in each of 2 regions")


def test_a_blocked_bundle_must_cover_the_reduction_in_order():
    """``sim.bundle.validate_blocked_bundle``: two tiled configurations and channel ranges
    that cover the reduction once, in order (a repeated or a missing block is refused)."""
    import pytest
    from sim.bundle import BundleError, validate_bundle
    t = _tiled(22, 18, (10, 8)).bundle
    good = {**{f: t[f] for f in ("app", "arch", "bitstream", "cycles_predicted", "done_cycle",
                                 "output_writes")}, "configs": [t, t],
            "blocks": {"ranges": [[0, 4], [4, 8]], "runs": 2}}
    assert validate_bundle(good) is good
    for ranges in ([[0, 4], [0, 4]], [[0, 4], [5, 8]], [[4, 8]], []):
        with pytest.raises(BundleError, match="do not cover the reduction in order"):
            validate_bundle(dict(good, blocks={"ranges": ranges, "runs": len(ranges)}))
    with pytest.raises(BundleError, match="two configurations"):
        validate_bundle(dict(good, configs=[t]))
