"""Controller (ID + AG + SG) against the plain-Python affine reference (docs/design.md §4)."""
from hypothesis import given, settings, strategies as st, HealthCheck
import pytest

from ubgen.arch import ControllerParams
from ubgen.controller import (AffineMap, ControllerConfig, ControllerLayout, EncodeError,
                              compute_deltas, encode_controller, fit_levels, iterate)
from ubgen.controller_rtl import Controller
from tests.gateware import increasing_strides, run_testbench

PARAMS = ControllerParams(max_dims=6, extent_width=8, cycle_width=16)
LAYOUT = ControllerLayout("ctl", {"a": 10, "b": 3}, PARAMS)


def simulate(cfg: ControllerConfig, layout=LAYOUT, stall_every=0):
    """Run the controller until done and return its fires as (cycle, {ag: addr})."""
    regs = encode_controller(cfg, layout)
    dut = Controller(layout)
    fires = []
    n = layout.name
    horizon = (cfg.schedule.start + sum(s * (e - 1) for s, e in
               zip(cfg.schedule.strides, cfg.extents)) + 3) if cfg.extents else 3

    async def bench(ctx):
        ctx.set(dut.dim, regs[f"{n}_dim"])
        ctx.set(dut.cycle_start, regs[f"{n}_cycle_start"])
        for d in range(layout.params.max_dims):
            ctx.set(dut.extent_m1[d], regs[f"{n}_extent_m1_{d}"])
            ctx.set(dut.cycle_delta[d], regs[f"{n}_cycle_delta_{d}"])
            for ag in layout.addr_widths:
                ctx.set(getattr(dut, f"{ag}_delta")[d], regs[f"{n}_{ag}_delta_{d}"])
        for ag in layout.addr_widths:
            ctx.set(getattr(dut, f"{ag}_start"), regs[f"{n}_{ag}_start"])
        ctx.set(dut.restart, 1)
        await ctx.tick()
        ctx.set(dut.restart, 0)
        cycle, wall = 0, 0
        while cycle < horizon:
            stalled = stall_every and wall % stall_every == stall_every - 1
            ctx.set(dut.tick, 0 if stalled else 1)
            if ctx.get(dut.fire):
                assert not stalled
                fires.append((cycle, {ag: ctx.get(dut.addr(ag)) for ag in layout.addr_widths}))
            await ctx.tick()
            wall += 1
            if not stalled:
                cycle += 1
        assert ctx.get(dut.done) == 1

    run_testbench(dut, bench)
    return fires


@st.composite
def configs(draw):
    dims = draw(st.integers(1, 4))
    extents = [draw(st.integers(1, 5)) for _ in range(dims)]
    strides = increasing_strides(draw, extents, st.integers(1, 3))
    start = draw(st.integers(0, 20))
    addr = {ag: AffineMap(draw(st.integers(0, (1 << w) - 1)),
                          tuple(draw(st.integers(-40, 40)) for _ in range(dims)))
            for ag, w in LAYOUT.addr_widths.items()}
    return ControllerConfig(tuple(extents), AffineMap(start, tuple(strides)), addr)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), st.sampled_from([0, 3]))
def test_controller_matches_affine_reference(cfg, stall_every):
    assert simulate(cfg, stall_every=stall_every) == list(iterate(cfg, LAYOUT.addr_widths))


@pytest.mark.regress
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), st.sampled_from([0, 3]))
def test_controller_matches_affine_reference_regress(cfg, stall_every):
    assert simulate(cfg, stall_every=stall_every) == list(iterate(cfg, LAYOUT.addr_widths))


def test_downsample_by_2_deltas():
    """Thesis Fig. 6.3: downsample-by-2 over 8x8: strides (2, 16) over extents (4, 4)."""
    assert compute_deltas((4, 4), (2, 16)) == [2, 10]


def test_six_dimensions():
    cfg = ControllerConfig((2, 1, 3, 2, 1, 2), AffineMap(5, (1, 7, 2, 9, 4, 30)),
                           {"a": AffineMap(3, (1, -2, 5, 7, 0, 100)), "b": AffineMap(0, (1,) * 6)})
    assert simulate(cfg) == list(iterate(cfg, LAYOUT.addr_widths))


def test_disabled_controller_never_fires():
    assert simulate(ControllerConfig.disabled()) == []


@pytest.mark.parametrize("cfg, message", [
    (ControllerConfig((4,), AffineMap(0, (0,)), {"a": AffineMap(0, (1,)), "b": AffineMap(0, (1,))}),
     "not strictly increasing"),
    (ControllerConfig((300,), AffineMap(0, (1,)), {"a": AffineMap(0, (1,)), "b": AffineMap(0, (1,))}),
     "extent"),
    (ControllerConfig((4,), AffineMap(65530, (4,)), {"a": AffineMap(0, (1,)), "b": AffineMap(0, (1,))}),
     "cycle counter"),
    (ControllerConfig((4,), AffineMap(0, (1,)), {"a": AffineMap(1024, (1,)), "b": AffineMap(0, (1,))}),
     "does not fit"),
    (ControllerConfig((2,) * 7, AffineMap(0, tuple(3 ** d for d in range(7))),
                      {"a": AffineMap(0, (0,) * 7), "b": AffineMap(0, (0,) * 7)}),
     "exceed the controller's 6 dimensions"),
])
def test_encode_rejects(cfg, message):
    with pytest.raises(EncodeError, match=message):
        encode_controller(cfg, LAYOUT)


# --- more loop levels than the controller kind has: fit_levels (docs/controllers.md) ---------
TWO = ControllerLayout("two", {"a": 10, "b": 3}, ControllerParams(max_dims=2, extent_width=8,
                                                                  cycle_width=16))


@st.composite
def split_configs(draw):
    """A config of at most two levels, each split into contiguous sub-levels (extent e as
    (e1, e2) with strides (s, s * e1)), with extent-1 levels sprinkled in; the AG ``b`` (3
    bits) may add a multiple of 8 to a split stride (contiguous modulo 2**3)."""
    base_ext = [draw(st.integers(2, 12)) for _ in range(draw(st.integers(1, 2)))]
    base_t = increasing_strides(draw, base_ext, st.integers(1, 3))
    base_a = [draw(st.integers(-20, 20)) for _ in base_ext]
    base_b = [draw(st.integers(-5, 5)) for _ in base_ext]
    ext, t, a, b = [], [], [], []
    for e, st_t, st_a, st_b in zip(base_ext, base_t, base_a, base_b):
        parts = [f for f in range(2, e) if e % f == 0]
        if parts and draw(st.booleans()):
            e1 = draw(st.sampled_from(parts))
            ext += [e1, e // e1]
            t += [st_t, st_t * e1]
            a += [st_a, st_a * e1]
            b += [st_b, st_b * e1 + 8 * draw(st.integers(-2, 2))]
        else:
            ext.append(e)
            t.append(st_t)
            a.append(st_a)
            b.append(st_b)
        if draw(st.booleans()):
            ext.append(1)
            t.append(draw(st.integers(0, 9)))
            a.append(draw(st.integers(-9, 9)))
            b.append(draw(st.integers(-9, 9)))
    return ControllerConfig(tuple(ext), AffineMap(draw(st.integers(0, 9)), tuple(t)),
                            {"a": AffineMap(draw(st.integers(0, 1023)), tuple(a)),
                             "b": AffineMap(draw(st.integers(0, 7)), tuple(b))})


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split_configs())
def test_fitted_levels_give_the_same_fires(cfg):
    """Configs split into more levels than the controller has run, fitted, on the hardware
    exactly as the affine reference of the unsplit form."""
    fitted = fit_levels(cfg, TWO)
    assert fitted.dims <= 2
    assert list(iterate(fitted, TWO.addr_widths)) == list(iterate(cfg, TWO.addr_widths))
    assert simulate(cfg, TWO) == list(iterate(cfg, TWO.addr_widths))


def test_fit_levels_leaves_a_fitting_config_alone():
    cfg = ControllerConfig((2, 1), AffineMap(0, (1, 5)), {"a": AffineMap(0, (1, 2)),
                                                          "b": AffineMap(0, (1, 2))})
    assert fit_levels(cfg, TWO) is cfg


@pytest.mark.parametrize("ext, sched", [
    ((2, 2, 2), (1, 3, 9)),         # the schedule is not contiguous across any two levels
    ((4, 128, 3), (1, 4, 512)),     # contiguous, but every fused extent exceeds 2**8
])
def test_unfusable_levels_are_refused(ext, sched):
    """Negative controls: three levels that cannot become two are refused, naming the
    controller's dim register."""
    cfg = ControllerConfig(ext, AffineMap(0, sched), {"a": AffineMap(0, (0, 0, 0)),
                                                      "b": AffineMap(0, (0, 0, 0))})
    with pytest.raises(EncodeError, match=r"two: 3 loop levels .* exceed the controller's 2 "
                                          r"dimensions \(two_dim\)"):
        encode_controller(cfg, TWO)
