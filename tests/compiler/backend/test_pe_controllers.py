"""Controllers built from PEs for the plain dual-port SRAM (``compiler.backend.pe_controllers``;
thesis §6.3, Fig. 6.2): the PEs, evaluated cycle by cycle with the PE's reference semantics
(``ubgen.pe.ops.pe_reference``), must fire at exactly the cycles and addresses
``ubgen.controller.iterate`` gives for the affine form, and never again within the 16-bit cycle
range. Negative controls: a corrupted constant register, and streams the 16-bit PEs cannot
express (one-line errors). The netlist of gaussian on the ``dp-pe`` tile passes the netlist
model; with one controller PE's constant corrupted it fails."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

import pytest

from compiler.backend.pe_controllers import (PEControllerError, controller_pes, synthesize)
from compiler.pipeline import check_result, compile_app
from ubgen.controller import AffineMap, ControllerConfig, iterate
from ubgen.pe.ops import PEOp, pe_reference, step_reset

PORTS = ("data0", "data1", "data2", "bit0", "bit1", "bit2")


def evaluate(ctl, cycles: int) -> list[tuple[int, int]]:
    """``(cycle, address)`` of every fire of the PEs of ``ctl`` over ``cycles`` cycles."""
    nodes = {n.name: n for n in ctl.nodes}
    into = {(e.dst, e.dst_port): (e.src, e.src_port) for e in ctl.edges}
    state = {n.name: step_reset(n.consts.get("data2", 0)) for n in ctl.nodes if n.registered}

    def value(name, port, memo):
        n = nodes[name]
        if n.registered:
            return state[name][port == "res_p"]
        if (name, port) not in memo:
            ops = [operand(name, p, memo) for p in PORTS]
            memo[(name, port)] = pe_reference(n.op, *ops[:3], tuple(ops[3:]))[port == "res_p"]
        return memo[(name, port)]

    def operand(name, port, memo):
        n = nodes[name]
        if port in n.consts:
            return n.consts[port]
        return value(*into[(name, port)], memo) if (name, port) in into else 0

    fires = []
    for c in range(cycles):
        memo: dict = {}
        if value(*ctl.fire, memo):
            fires.append((c, value(*ctl.addr, memo)))
        nxt = {}
        for name, n in nodes.items():
            if n.registered:
                assert n.op is PEOp.STEP
                ops = [operand(name, p, memo) for p in PORTS]
                nxt[name] = pe_reference(PEOp.STEP, *ops[:3], tuple(ops[3:]),
                                         acc=state[name][0])
        state.update(nxt)
    return fires


def expected(cfg: ControllerConfig) -> list[tuple[int, int]]:
    return [(c, a["addr"] & 0xFFFF) for c, a in iterate(cfg)]


@st.composite
def configs(draw):
    dims = draw(st.integers(1, 4))
    ext = tuple(draw(st.integers(1, 4)) for _ in range(dims))
    strides, inner = [], 1
    for e in ext:
        strides.append(inner + draw(st.integers(0, 3)))     # strictly increasing schedule
        inner = strides[-1] * e
    return ControllerConfig(ext, AffineMap(draw(st.integers(0, 9)), tuple(strides)),
                            {"addr": AffineMap(draw(st.integers(0, 99)), tuple(
                                draw(st.integers(-9, 9)) for _ in range(dims)))})


@settings(max_examples=40, deadline=None)
@given(configs())
def test_pe_controller_fires_like_the_affine_form(cfg):
    ctl = synthesize(cfg, "c")
    want = expected(cfg)
    assert evaluate(ctl, want[-1][0] + 40) == want
    assert len(ctl.nodes) <= 3 * max(1, sum(e > 1 for e in cfg.extents)) + 1


def test_line_buffer_streams():
    """gaussian's 64x64 delay-line write (6 PEs) and upsample's four-level read."""
    line = ControllerConfig((64, 64), AffineMap(1, (1, 64)), {"addr": AffineMap(0, (1, 64))})
    assert controller_pes(line) == 6
    assert evaluate(synthesize(line, "w"), 4200) == expected(line)
    up = ControllerConfig((2, 64, 2, 64), AffineMap(16, (1, 2, 128, 256)),
                          {"addr": AffineMap(0, (0, 1, 0, 64))})
    assert evaluate(synthesize(up, "r"), 16500) == expected(up)


def test_negative_control_corrupted_constant():
    cfg = ControllerConfig((4, 3), AffineMap(2, (1, 5)), {"addr": AffineMap(7, (1, 10))})
    ctl = synthesize(cfg, "c")
    ag = next(n for n in ctl.nodes if n.name.endswith(".ag"))
    ag.consts["data0"] += 1
    assert evaluate(ctl, 40) != expected(cfg)


def test_streams_the_pes_cannot_express():
    late = ControllerConfig((2,), AffineMap(65534, (1,)), {"addr": AffineMap(0, (1,))})
    with pytest.raises(PEControllerError, match="16-bit schedule generator"):
        synthesize(late, "c", "buffer b: memory m write controller")
    many = ControllerConfig((300, 300), AffineMap(0, (1, 300)), {"addr": AffineMap(0, (1, 300))})
    with pytest.raises(PEControllerError, match="cannot express"):
        synthesize(many, "c")


@pytest.mark.parametrize("sizes, why", [
    (dict(width=1100, height=4), "needs 3 chained dual-port SRAMs"),
    (dict(width=256, height=256), "16-bit schedule generator")])
def test_buffers_the_pe_controllers_cannot_hold(sizes, why):
    """A delay line longer than one SRAM, and a stream past the 16-bit cycle range: one line
    naming the buffer and the reason."""
    from compiler.backend.netlist import NetlistError
    with pytest.raises(NetlistError) as e:
        compile_app("gaussian", "cgra_dppe_16x32", sizes, until="netlist")
    msg = str(e.value)
    assert msg.startswith("buffer hw_input: memory hw_input_d") and why in msg
    assert "\n" not in msg


def test_dp_pe_netlist_model_and_negative_control():
    r = compile_app("gaussian", "cgra_dppe_16x32", dict(width=32, height=12), until="netlist")
    net = r.netlist
    ctl = [n for n, d in net.graph.nodes(data=True) if d["kind"] == "pe"
           and d.get("buffer") == "hw_input"]
    assert ctl and net.count("mem") == 2
    assert check_result(r).ok, check_result(r).summary()
    sg = next(n for n in ctl if n.endswith("rd.sg"))
    net.graph.nodes[sg]["config"]["data2_const"] += 1        # the read fires a cycle late
    assert not check_result(r).ok
