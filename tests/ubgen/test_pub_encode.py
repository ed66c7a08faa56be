"""The PUB's encoder (``ubgen.pub.encode_pub``, docs/pub.md "The input side"): the fixed parts
of the area-optimised PUB are checked, and a configuration the narrowed registers cannot hold
is refused with one line naming the controller and the register (negative controls for every
narrowed field)."""
from dataclasses import replace

import pytest

from sim.tb.pub_cases import PUB_CASES, ctl
from ubgen.arch import load_arch
from ubgen.controller import EncodeError
from ubgen.pub import encode_pub, pub_regmap

PRM = load_arch("pub").pub
GAUSS = PUB_CASES["gaussian"].configs       # docs/design.md §4 fixture


def test_fixture_encodes_and_fits_the_register_map():
    regs = encode_pub(GAUSS, PRM)
    assert regs["agg2sram_0_slack"] == 0 and regs["agg2sram_0_row_slack"] == 0
    assert "agg2sram_0_cycle_start" not in regs and "in2agg_0_agg_start" not in regs
    pub_regmap(PRM).writes(regs)          # every value fits its register


def test_slacks_come_from_the_agg2sram_schedule():
    """Two cycles later than the earliest: slack 2. A row of 30 words ends on lane 1 of its
    eighth slot, two lanes before the padded time the affine schedule keeps for it: with
    slack 1, row slack 1 + 2."""
    cfg = dict(GAUSS, agg2sram_0=ctl((16, 64), 6, (4, 64), agg=(0, (1, 0)), sram=(0, (1, 16))))
    assert encode_pub(cfg, PRM)["agg2sram_0_slack"] == 2
    rows = {"in2agg_0": ctl((30, 4), 0, (1, 32), agg=(0, (1, 0))),
            "agg2sram_0": ctl((8, 4), 5, (4, 32), agg=(0, (1, 0)), sram=(0, (1, 8)))}
    regs = encode_pub(rows, PRM)
    assert (regs["agg2sram_0_slack"], regs["agg2sram_0_row_slack"]) == (1, 3)


@pytest.mark.parametrize("change, register", [
    # the aggregator fills in order: lane 1 first is not that order
    (dict(in2agg_0=ctl((64, 64), 0, (1, 64), agg=(1, (1, 0)))), r"\(in2agg_0_agg\)"),
    # ... and is read in fill order
    (dict(agg2sram_0=ctl((16, 64), 4, (4, 64), agg=(1, (1, 0)), sram=(0, (1, 16)))),
     r"\(agg2sram_0_agg\)"),
    # a fetched word goes to the TB slot of its SRAM address's low bits
    (dict(sram2tb_0=ctl((16, 64), 61, (4, 64), sram=(0, (1, 16)), tb=(1, (1, 0)))),
     r"\(sram2tb_0_tb\)"),
    # the SRAM write waits 16 cycles: beyond the 16-cycle delay line (slack 0..15)
    (dict(agg2sram_0=ctl((16, 64), 20, (4, 64), agg=(0, (1, 0)), sram=(0, (1, 16)))),
     r"waits 16 cycles after the aggregator fills a word; .* 0\.\.15 \(agg2sram_0_slack\)"),
    # the SRAM write before the word is complete
    (dict(agg2sram_0=ctl((16, 64), 3, (4, 64), agg=(0, (1, 0)), sram=(0, (1, 16)))),
     r"\(agg2sram_0_slack\)"),
    # the SRAM write of every other word one cycle later: not one fixed wait
    (dict(agg2sram_0=ctl((2, 8, 64), 4, (5, 8, 64), agg=(0, (1, 0, 0)),
                         sram=(0, (1, 2, 16)))), r"waits 0\.\.1 cycles .*\(agg2sram_0_slack\)"),
    # one SRAM write per filled word
    (dict(agg2sram_0=ctl((15, 64), 4, (4, 64), agg=(0, (1, 1)), sram=(0, (1, 16)))),
     r"fires 960 times, but in2agg fills 1024 wide words"),
])
def test_fixed_parts_are_checked(change, register):
    with pytest.raises(EncodeError, match=register):
        encode_pub(dict(GAUSS, **change), PRM)


@pytest.mark.parametrize("name, cfg, register", [
    # a 5000-long loop: beyond the 12-bit extent registers (and not fusable: one level)
    ("tb2out_0", ctl((5000,), 10, (1,), tb=(0, (1,))), r"\(tb2out_0_extent_m1_0\)"),
    # four levels at the input port that cannot be fused: in2agg has three
    ("in2agg_0", ctl((2, 3, 5, 7), 0, (1, 3, 10, 60), agg=(0, (1, 4, 4, 4))),
     r"in2agg_0: 4 loop levels .* exceed the controller's 3 dimensions \(in2agg_0_dim\)"),
    # a last fire beyond the 20-bit cycle counter
    ("tb2out_0", ctl((4,), 1 << 20, (1,), tb=(0, (1,))), r"cycle counter"),
])
def test_narrowed_fields_refuse_what_does_not_fit(name, cfg, register):
    with pytest.raises(EncodeError, match=register):
        encode_pub({name: cfg}, PRM)


def test_a_wider_arch_takes_them():
    """The same configurations fit an arch whose parameters are wider (the widths are arch
    parameters, not constants)."""
    c = PRM.controller
    wide = replace(PRM, controller=replace(c, extent_width=13, dims=tuple(
        (k, 4 if k == "in2agg" else n) for k, n in c.dims)))
    encode_pub({"tb2out_0": ctl((5000,), 10, (1,), tb=(0, (1,)))}, wide)
    encode_pub({"in2agg_0": ctl((2, 3, 5, 7), 0, (1, 3, 10, 60), agg=(0, (1, 4, 4, 4)))}, wide)


def test_slacks_of_a_fitted_agg2sram_come_from_its_given_schedule():
    """agg2sram has no schedule registers, so fitting it to the controller's levels may fuse
    two levels whose addresses are one loop but whose fire times are not (a 7-pixel row in two
    wide words, rows 12 cycles apart: 2 x 4 != 12). The slacks are checked against the given
    schedule (a ResNet-18 conv5_x-shaped layer's out_mem, tests/rtl/test_e2e.py), not against
    the fused one, whose fires would come 4 cycles per row too early."""
    prm = load_arch("cgra_8x8").pub
    rows = (7, 7, 3, 3, 2, 2)
    cfg = {"in2agg_0": ctl(rows, 19, (1, 12, 84, 252, 756, 1512), agg=(0, (1, 0, 0, 0, 0, 0))),
           "agg2sram_0": ctl((2,) + rows[1:], 23, (4, 12, 84, 252, 756, 1512),
                             agg=(0, (1, 0, 0, 0, 0, 0)), sram=(0, (1, 2, 0, 0, 0, 14)))}
    regs = encode_pub(cfg, prm)
    assert (regs["agg2sram_0_slack"], regs["agg2sram_0_row_slack"]) == (0, 1)
    # negative control: the fused schedule given as the schedule is refused (its fires drift)
    fused = dict(cfg, agg2sram_0=ctl((14, 3, 6, 2), 23, (4, 84, 252, 1512),
                                     agg=(0, (1, 0, 0, 0)), sram=(0, (1, 0, 0, 14))))
    with pytest.raises(EncodeError, match=r"waits -24\.\.0 cycles .*\(agg2sram_0_slack\)"):
        encode_pub(fused, prm)
