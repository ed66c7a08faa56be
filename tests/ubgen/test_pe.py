"""PE core against the plain-Python reference ``pe_reference`` (docs/design.md §5.2).

Every vector is applied through the real configuration path: op, constants and constant enables
are written on the PE's config bus; the other inputs are driven on the routed ports.
"""
from hypothesis import given, settings, strategies as st, HealthCheck, Phase

from ubgen.pe import PEOp, PE, pe_reference, counter_next
from ubgen.pe.ops import step_reset
from ubgen.pe.spec import DATA_INPUTS, BIT_INPUTS
from tests import gateware as gw
from tests.gateware import run_testbench

WORDS = st.one_of(st.integers(0, 0xFFFF),
                  st.sampled_from([0, 1, 2, 15, 16, 0x7FFF, 0x8000, 0x8001, 0xFFFF]))


async def configure(ctx, dut, values: dict[str, int]):
    await gw.configure(ctx, dut.cfg, dut.regmap, values)


@st.composite
def vectors(draw, ops=tuple(op for op in PEOp if not op.stateful)):
    return dict(op=draw(st.sampled_from(ops)), words=[draw(WORDS) for _ in range(3)],
                bits=[draw(st.integers(0, 1)) for _ in range(3)], lut=draw(st.integers(0, 255)),
                const_mask=draw(st.integers(0, 63)), out_reg=draw(st.integers(0, 1)))


def apply_vectors(vecs):
    """Configure and drive each vector; return (expected, got) pairs."""
    dut = PE()
    pairs = []

    async def bench(ctx):
        ctx.set(dut.run, 1)
        for v in vecs:
            values = {"op": int(v["op"]), "out_reg": v["out_reg"], "lut": v["lut"]}
            inputs = list(zip(DATA_INPUTS + BIT_INPUTS, v["words"] + v["bits"]))
            for i, (name, x) in enumerate(inputs):
                const = v["const_mask"] >> i & 1
                values[f"{name}_const_en"] = const
                # a routed input gets a different constant so a wrong mux shows up
                values[f"{name}_const"] = x if const else (~x & (0xFFFF if i < 3 else 1))
                ctx.set(getattr(dut, f"in_{name}"), (~x & (0xFFFF if i < 3 else 1))
                        if const else x)
            await configure(ctx, dut, values)
            if v["out_reg"]:
                await ctx.tick()
            expected = pe_reference(v["op"], *v["words"], tuple(v["bits"]), lut=v["lut"])
            pairs.append((v, expected, (ctx.get(dut.out_res), ctx.get(dut.out_res_p))))

    run_testbench(dut, bench)
    return pairs


def check(pairs):
    for v, expected, got in pairs:
        assert got == expected, f"{v['op'].name} {v}: expected {expected}, got {got}"


# 15 examples x 16..24 vectors: >= 240 random vectors over all combinational ops. Shrinking a
# list of simulated vectors is slow and the failure message names the vector, so it is off.
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(st.lists(vectors(), min_size=16, max_size=24))
def test_pe_ops_random(vecs):
    check(apply_vectors(vecs))


def test_pe_every_op_edge_values():
    """Every combinational op on a grid of corner values (each op appears at least 16 times)."""
    corners = [0, 1, 0x7FFF, 0x8000, 0xFFFF, 17]
    vecs = []
    for op in PEOp:
        if op.stateful:
            continue
        for i, a in enumerate(corners):
            for j, b in enumerate(corners[::-1][:3]):
                vecs.append(dict(op=op, words=[a, b, corners[(i + j) % 6]],
                                 bits=[i & 1, j & 1, (i + j) >> 1 & 1], lut=0b10010110,
                                 const_mask=(i * 7 + j) % 64, out_reg=(i + j) & 1))
    check(apply_vectors(vecs))


def test_pe_output_register_freezes_on_stall():
    dut = PE()

    async def bench(ctx):
        await configure(ctx, dut, {"op": int(PEOp.ADD), "out_reg": 1})
        ctx.set(dut.in_data0, 5)
        ctx.set(dut.in_data1, 7)
        await ctx.tick()
        assert ctx.get(dut.out_res) == 12
        ctx.set(dut.stall, 1)
        ctx.set(dut.in_data0, 100)
        await ctx.tick()
        await ctx.tick()
        assert ctx.get(dut.out_res) == 12          # frozen
        ctx.set(dut.stall, 0)
        await ctx.tick()
        assert ctx.get(dut.out_res) == 107
        await configure(ctx, dut, {"out_reg": 0})
        ctx.set(dut.in_data1, 1)
        assert ctx.get(dut.out_res) == 101          # combinational: latency 0

    run_testbench(dut, bench)


# (run, stall, bit0) per cycle, mostly counting so that wraps happen
STEPS = st.one_of(st.just((1, 0, 1)), st.tuples(st.integers(0, 1), st.integers(0, 1),
                                                 st.integers(0, 1)))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(st.sampled_from([0, 1, 2, 3, 5, 0xFFFF]), st.lists(STEPS, min_size=5, max_size=40),
       st.integers(0, 1))
def test_pe_counter(modulus, steps, out_reg):
    """COUNTER against ``counter_next``: steps are (run, stall, bit0) per cycle."""
    dut = PE()

    async def bench(ctx):
        await configure(ctx, dut, {"op": int(PEOp.COUNTER), "out_reg": out_reg,
                                   "data0_const_en": 1, "data0_const": modulus})
        count, prev = 0, None
        for run, stall, bit0 in steps:
            ctx.set(dut.run, run)
            ctx.set(dut.stall, stall)
            ctx.set(dut.in_bit0, bit0)
            now = pe_reference(PEOp.COUNTER, modulus, 0, 0, (bit0, 0, 0), count=count)
            got = (ctx.get(dut.out_res), ctx.get(dut.out_res_p))
            if not out_reg:
                assert got == now
            elif prev is not None:
                assert got == prev
            await ctx.tick()
            if not stall:
                prev = now
            count = 0 if not run else count if stall else counter_next(count, modulus,
                                                                       (bit0, 0, 0))

    run_testbench(dut, bench)


def test_pe_counter_wraps():
    test_pe_counter.hypothesis.inner_test(3, [(1, 0, 1)] * 8 + [(1, 1, 1), (0, 0, 1)] +
                                          [(1, 0, 1)] * 4, 0)
    test_pe_counter.hypothesis.inner_test(2, [(1, 0, 1)] * 6, 1)


def test_counter_reference_counts_modulo():
    """The reference itself: 0..a-1 then wrap, res_p on the last value."""
    count, seen = 0, []
    for _ in range(7):
        seen.append(pe_reference(PEOp.COUNTER, 3, 0, 0, (1, 0, 0), count=count))
        count = counter_next(count, 3, (1, 0, 0))
    assert seen == [(0, 0), (1, 0), (2, 1), (0, 0), (1, 0), (2, 1), (0, 0)]
    assert counter_next(0xFFFF, 0, (1, 0, 0)) == 0
    assert pe_reference(PEOp.COUNTER, 0, 0, 0, (1, 0, 0), count=0xFFFF)[1] == 1


def test_regmap_readback():
    dut = PE()

    async def bench(ctx):
        values = {r.name: (0x5A5A5 * (r.offset + 3)) & ((1 << r.width) - 1)
                  for r in dut.regmap.registers}
        await configure(ctx, dut, values)
        for r in dut.regmap.registers:
            ctx.set(dut.cfg.addr, r.offset)
            assert ctx.get(dut.cfg.rdata) == values[r.name], r.name
        ctx.set(dut.cfg.addr, len(dut.regmap.registers) + 0x100)
        assert ctx.get(dut.cfg.rdata) == 0

    run_testbench(dut, bench)


# STEP (docs/pe.md): (run, stall, bit0, bit1) per cycle, mostly stepping
STEP_CYCLES = st.one_of(st.just((1, 0, 1, 0)), st.just((1, 0, 1, 1)),
                        st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 1),
                                  st.integers(0, 1)))


def run_step(words, bit2, cycles, model_bit2=None):
    """Drive a STEP PE (constants ``words`` = a, b, c; ``bit2`` constant; bit0/bit1 routed)
    and compare its output register with the reference model every cycle; returns the first
    mismatch or None. ``model_bit2`` lets a negative control give the model another ``bit2``."""
    dut = PE()
    a, b, c = words
    mb2 = bit2 if model_bit2 is None else model_bit2
    found = []

    async def bench(ctx):
        values = {"op": int(PEOp.STEP), "out_reg": 1, "bit2_const_en": 1, "bit2_const": bit2}
        for name, x in zip(DATA_INPUTS, words):
            values[f"{name}_const_en"], values[f"{name}_const"] = 1, x
        await configure(ctx, dut, values)
        await ctx.tick()                                  # run low: the state loads c
        state = step_reset(c)
        for k, (run, stall, bit0, bit1) in enumerate(cycles):
            ctx.set(dut.run, run)
            ctx.set(dut.stall, stall)
            ctx.set(dut.in_bit0, bit0)
            ctx.set(dut.in_bit1, bit1)
            got = (ctx.get(dut.out_res), ctx.get(dut.out_res_p))
            if got != state and not found:
                found.append(f"cycle {k}: got {got}, model {state}")
            await ctx.tick()
            if not run:
                state = step_reset(c)
            elif not stall:
                state = pe_reference(PEOp.STEP, a, b, c, (bit0, bit1, mb2), acc=state[0])

    run_testbench(dut, bench)
    return found[0] if found else None


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(st.tuples(WORDS, WORDS, WORDS), st.integers(0, 1), st.lists(STEP_CYCLES, min_size=5,
                                                                    max_size=40))
def test_pe_step(words, bit2, cycles):
    """STEP against its reference, with run/stall/bit0/bit1 changing every cycle."""
    assert run_step(words, bit2, cycles) is None


def test_pe_step_down_counter_and_negative_control():
    """bit2 = 1, a = -1, b = c = 2: the down-counter 2, 1, 0, 2, 1, 0 with res_p on 0 (a loop
    level of 3 iterations); a model that ignores the self-select (bit2 = 0) disagrees."""
    seq = [(1, 0, 1, 0)] * 7
    assert run_step((0xFFFF, 2, 2), 1, seq) is None
    assert run_step((0xFFFF, 2, 2), 1, seq, model_bit2=0) is not None
    state, seen = step_reset(2), []
    for _ in range(7):
        seen.append(state)
        state = pe_reference(PEOp.STEP, 0xFFFF, 2, 2, (1, 0, 1), acc=state[0])
    assert seen == [(2, 0), (1, 0), (0, 1), (2, 0), (1, 0), (0, 1), (2, 0)]
