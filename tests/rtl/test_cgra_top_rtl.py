"""cocotb + Verilator tests of ``cgra_top`` (cgra_8x8) driven over AXI4-Lite the way a host
would (cocotbext-axi ``AxiLiteMaster``). Every case of ``sim/tb/test_cgra_top.py`` runs on the
Verilator model the end-to-end tests use (``sim.array_run.model_for``: one build of cgra_8x8 for
both files; the testbench touches the top's ports only).

This side computes the plan: addresses from the top's address map, routes on the exported
routing graph, controller registers from ``encode_controller``, and every expected value from
an independent reference (``pe_reference``/``counter_next``, plain-Python arithmetic). The PE
sweep's operands are drawn by Hypothesis (:func:`pe_cases`), deterministically.
"""
from __future__ import annotations

import json
import random
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from sim.array_run import model_for, run_test_module
from sim.runner import BUILD
from ubgen.array.routes import add_pipeline_registers, route
from ubgen.arch import load_arch
from ubgen.array.graph import (path_latency, port_node, register_writes, route_bus_writes,
                               routing_graph)
from ubgen.array.layout import ArrayLayout
from ubgen.controller import AffineMap, ControllerConfig, encode_controller
from ubgen.io.spec import GLB2F_LATENCY, F2GLB_LATENCY, io_layouts
from ubgen.pe import PEOp, counter_next, pe_reference
from ubgen.pe.ops import step_reset
from ubgen.pe.spec import BIT_INPUTS, DATA_INPUTS
from ubgen.mem.spec import MEM_STATUS
from ubgen.top.cgra_top import CONTROL, GLB_BASE, GLB_ROWS_BASE, control_address, glb_address, tile_address

pytestmark = pytest.mark.rtl

ARCH = load_arch("cgra_8x8")
SAMPLES = 6            # f2glb samples per PE-sweep run (COUNTER needs several)
SAMPLE_START = 3
CASES_PER_OP = 3       # PE-sweep runs per op, alternately without and with the output register

WORD = st.one_of(st.sampled_from([0, 1, 0x7FFF, 0x8000, 0xFFFF]), st.integers(0, 0xFFFF))
BIT = st.integers(0, 1)


class Planner:
    def __init__(self, arch):
        self.arch = arch
        self.lay = ArrayLayout(arch)
        self.g = routing_graph(self.lay)

    def writes(self, tile_id: int, values: dict[str, int]) -> list[tuple[int, int]]:
        """AXI (address, value) writes of named registers of one tile."""
        return register_writes(self.lay, {(tile_id, n): v for n, v in values.items()},
                               tile_address)

    def route_axi_writes(self, path) -> list[tuple[int, int]]:
        return route_bus_writes(self.lay, self.g, path, tile_address)

    def glb_word(self, col: int, offset: int) -> int:
        return (col % self.arch.glb.banks) * self.arch.glb.bank_words + offset


def every_register_values(p: Planner, rng: random.Random):
    """Random values (masked to each register's width) for every read/write register of every
    tile, and the read-only status registers (the MEM tiles' MEM_STATUS: the PUB's and the
    register file's) with their idle value 0 (not running, no error)."""
    rw, status = [], []
    for pos in p.lay.positions():
        ro = set(MEM_STATUS) if pos.kind == "mem" else set()
        for r in p.lay.specs[pos.kind].regmap.registers:
            addr = tile_address(pos.tile_id, r.offset)
            if r.name in ro:
                status.append((addr, 0))
            else:
                rw.append((addr, rng.randrange(1 << r.width)))
    return rw, status


def illegal_addresses(p: Planner) -> list[int]:
    g = p.arch.glb
    n_tiles = len(p.lay.positions())
    pe = p.lay.tile_id(1, 0)
    span = len(p.lay.specs["pe"].regmap.registers)
    assert not p.lay.specs["pe"].regmap.windows
    rows_end = GLB_ROWS_BASE + 2 * g.banks * g.bank_words       # past the GLB row window
    return [len(CONTROL) * 4, 0x0FFF_FFFC, glb_address(g.banks * g.bank_words), rows_end,
            0x3000_0000, 0x4000_0000, tile_address(n_tiles, 0), tile_address(pe, span),
            tile_address(pe, 0) + 2, 0x7FFF_FFFC]


# Operands of one PE-sweep run: three words (about half of them one of the signed and unsigned
# boundaries 0, 1, 0x7FFF, 0x8000, 0xFFFF), three bits, a LUT, and the modulus that
# COUNTER uses instead of its first word: 0..SAMPLE_START + SAMPLES (0 never wraps, 1 wraps every
# cycle), so that it wraps while it is sampled; COUNTER also gets bit 0 set (counting enabled).
PE_CASE = st.fixed_dictionaries({
    "words": st.lists(WORD, min_size=3, max_size=3),
    "bits": st.lists(BIT, min_size=3, max_size=3),
    "lut": st.integers(0, 255),
    "modulus": st.integers(0, SAMPLE_START + SAMPLES),
})


def hypothesis_examples(strategy: st.SearchStrategy, n: int) -> list:
    """The first ``n`` examples Hypothesis generates from ``strategy``, deterministically
    (``derandomize``, no example database, generation phase only). For inputs of a simulation
    that is too slow to run once per Hypothesis example: the values are drawn here and checked
    together in one simulation, whose failure message names the failing case."""
    out = []

    @settings(max_examples=n, derandomize=True, database=None, phases=[Phase.generate],
              deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(example):
        out.append(example)

    collect()
    if len(out) != n:
        raise RuntimeError(f"Hypothesis generated {len(out)} examples, {n} needed")
    return out


def pe_cases(per_op: int = CASES_PER_OP) -> list[tuple[PEOp, int, dict]]:
    """``(op, index, operands)``: ``per_op`` operand cases (``PE_CASE``) for every op of ``PEOp``;
    ``words``, ``bits``, ``lut`` are the op's inputs (COUNTER: ``modulus`` as word 0, bit 0
    set). Hypothesis's examples are dealt out round-robin (example ``i`` goes to op
    ``i % len(PEOp)``), so that consecutive examples, which Hypothesis often derives from one
    another, test different ops, and the simplest example (all zeros) is one case of one op."""
    ops = list(PEOp)
    cases = []
    for i, case in enumerate(hypothesis_examples(PE_CASE, per_op * len(ops))):
        op = ops[i % len(ops)]
        words, bits = list(case["words"]), list(case["bits"])
        if op is PEOp.COUNTER:
            words[0], bits[0] = case["modulus"], 1
        cases.append((op, i // len(ops), {"words": words, "bits": bits, "lut": case["lut"]}))
    return cases


def pe_trace(op: PEOp, words: list[int], bits: list[int], lut: int, cycles: int
             ) -> list[tuple[int, int]]:
    """The ALU output ``(res, res_p)`` of a PE with constant inputs during each of the first
    ``cycles`` unstalled running cycles. The stateful ops start from their reset at run's rise:
    COUNTER's ``count`` from 0, STEP's state (the output register) from ``step_reset(c)``; the
    output register holds the previous cycle's ALU output, so from cycle 1 on STEP's state is
    ``trace[t - 1]``."""
    count, (acc, _) = 0, step_reset(words[2])
    trace = []
    for _ in range(cycles):
        out = pe_reference(op, *words, tuple(bits), lut=lut, count=count, acc=acc)
        trace.append(out)
        count = counter_next(count, words[0], tuple(bits)) if op is PEOp.COUNTER else 0
        acc = out[0]
    return trace


def test_pe_trace_stateful_ops():
    """The expected-value model's states, on hand-worked cases: STEP holds ``c`` without bit0,
    counts down and reloads with bit2 and ``a = -1``; COUNTER wraps at its modulus. Negative
    control: a STEP trace that ignored the reset to ``c`` (state 0) differs."""
    assert pe_trace(PEOp.STEP, [684, 1, 1], [0, 0, 1], 1, 3) == [(1, 0)] * 3
    assert [r for r, _ in pe_trace(PEOp.STEP, [0xFFFF, 2, 2], [1, 0, 1], 0, 6)] == [1, 0, 2, 1,
                                                                                    0, 2]
    assert [p for _, p in pe_trace(PEOp.STEP, [0xFFFF, 2, 2], [1, 0, 1], 0, 6)] == [0, 1, 0, 0,
                                                                                    1, 0]
    assert [r for r, _ in pe_trace(PEOp.COUNTER, [3, 0, 0], [1, 0, 0], 0, 5)] == [0, 1, 2, 0, 1]
    assert pe_trace(PEOp.STEP, [684, 1, 0], [0, 0, 1], 1, 3) != pe_trace(
        PEOp.STEP, [684, 1, 1], [0, 0, 1], 1, 3)


def pe_sweep(p: Planner) -> dict:
    """Every PE op through the real config path, on the operands of :func:`pe_cases`: a PE with
    constant inputs, its res routed to IO tile 0 and its res_p to IO tile 1; both IO tiles'
    f2glb sample SAMPLES cycles. Each op runs CASES_PER_OP times, alternately without and with
    its output register."""
    pe = p.lay.tile_id(1, 0)
    res_route = route(p.g, port_node(pe, "out", "res"), port_node(0, "in", "f2io_16"))
    bit_route = route(p.g, port_node(pe, "out", "res_p"), port_node(1, "in", "f2io_1"))
    assert path_latency(p.g, res_route) == path_latency(p.g, bit_route) == 0
    layout = io_layouts(p.arch)["f2glb"]
    sampler = encode_controller(ControllerConfig((SAMPLES,), AffineMap(SAMPLE_START, (1,)),
                                                 {"addr": AffineMap(0, (1,))}), layout)
    common = (p.route_axi_writes(res_route) + p.route_axi_writes(bit_route)
              + p.writes(0, {**sampler, "f2glb_bit": 0}) + p.writes(1, {**sampler,
                                                                        "f2glb_bit": 1}))
    runs = []
    for k, (op, index, case) in enumerate(pe_cases()):
        words, bits, lut = case["words"], case["bits"], case["lut"]
        out_reg = index % 2
        values = {"op": int(op), "out_reg": out_reg, "lut": lut}
        for name, x in zip(DATA_INPUTS + BIT_INPUTS, words + bits):
            values[f"{name}_const_en"], values[f"{name}_const"] = 1, x
        base = k * SAMPLES      # each run samples into its own GLB words
        writes = p.writes(pe, values)
        moved = encode_controller(ControllerConfig((SAMPLES,), AffineMap(SAMPLE_START, (1,)),
                                                   {"addr": AffineMap(base, (1,))}), layout)
        changed = {n: v for n, v in moved.items() if sampler[n] != v}
        for col in (0, 1):
            writes += p.writes(col, changed)
        comb = pe_trace(op, words, bits, lut, SAMPLE_START + SAMPLES)
        expected = []
        for i in range(SAMPLES):
            res, res_p = comb[SAMPLE_START + i - out_reg]
            expected += [(p.glb_word(0, base + i), res), (p.glb_word(1, base + i), res_p)]
        runs.append({"op": op.name, "operands": {"words": words, "bits": bits, "lut": lut,
                                                 "out_reg": out_reg},
                     "writes": writes, "expected": expected,
                     "done_cycle": SAMPLE_START + SAMPLES + F2GLB_LATENCY})
    assert {r["op"] for r in runs} == {op.name for op in PEOp}
    return {"common": common, "runs": runs}


def io_stream(p: Planner, rng: random.Random) -> dict:
    """GLB bank 0 -> IO tile 0 -> PE (MAC x*3+7, output register) -> 2 pipeline registers ->
    IO tile 2 -> GLB bank 2, with host stalls during the run."""
    n, src_off, dst_off = 64, 0x10, 0x20
    pe = p.lay.tile_id(1, 1)
    r_in = route(p.g, port_node(0, "out", "io2f_16"), port_node(pe, "in", "data0"))
    r_out = add_pipeline_registers(
        p.g, route(p.g, port_node(pe, "out", "res"), port_node(2, "in", "f2io_16"), avoid=r_in),
        2)
    latency = GLB2F_LATENCY + path_latency(p.g, r_in) + 1 + path_latency(p.g, r_out)
    layouts = io_layouts(p.arch)
    rd = ControllerConfig((n,), AffineMap(0, (1,)), {"addr": AffineMap(src_off, (1,))})
    wr = ControllerConfig((n,), AffineMap(latency, (1,)), {"addr": AffineMap(dst_off, (1,))})
    writes = (p.route_axi_writes(r_in) + p.route_axi_writes(r_out)
              + p.writes(0, encode_controller(rd, layouts["glb2f"]))
              + p.writes(2, encode_controller(wr, layouts["f2glb"]))
              + p.writes(pe, {"op": int(PEOp.MAC), "out_reg": 1, "data1_const_en": 1,
                              "data1_const": 3, "data2_const_en": 1, "data2_const": 7}))
    data = [rng.randrange(1 << 16) for _ in range(n)]
    glb_init = [(p.glb_word(0, src_off + i), x) for i, x in enumerate(data)]
    # words around the output range, preloaded, must survive
    guard = [(p.glb_word(2, dst_off - 1), 0x1111), (p.glb_word(2, dst_off + n), 0x2222)]
    expected = [(p.glb_word(2, dst_off + i), (3 * x + 7) & 0xFFFF) for i, x in enumerate(data)]
    return {"writes": writes, "glb_init": glb_init + guard, "expected": expected + guard,
            "done_cycle": latency + n + F2GLB_LATENCY, "stalls": [(5, 7), (30, 1), (50, 12)]}


def test_cgra_top_rtl():
    rng = random.Random(2024)
    p = Planner(ARCH)
    registers, status = every_register_values(p, rng)
    plan = {
        "control": {r.name: control_address(r.name) for r in CONTROL},
        "ro": [control_address(r.name) for r in CONTROL if r.access == "ro"],
        "glb_base": GLB_BASE, "glb_words": ARCH.glb.banks * ARCH.glb.bank_words,
        "info": ARCH.array.rows | ARCH.array.columns << 8 | ARCH.glb.banks << 16
                | (ARCH.glb.bank_words.bit_length() - 1) << 24,
        "registers": registers, "status": status,
        "illegal": illegal_addresses(p),
        "pe_sweep": pe_sweep(p),
        "stream": io_stream(p, rng),
    }
    # the end-to-end runs' model (tests/rtl/test_e2e.py): one Verilator build of cgra_8x8
    model = model_for(ARCH)
    run_dir = Path(tempfile.mkdtemp(dir=BUILD, prefix="cgra_top-"))
    plan_path = run_dir / "plan.json"
    plan_path.write_text(json.dumps(plan))
    run_test_module(model, "sim.tb.test_cgra_top", run_dir,
                    extra_env={"UBGEN_TOP_PLAN": str(plan_path)})
    shutil.rmtree(run_dir)
