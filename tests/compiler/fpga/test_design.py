"""The FPGA backend's description (compiler.fpga): what it builds from an app, its controllers
against the unified buffer's streams, the host vectors, and the checks that refuse a design
(docs/fpga.md "Applications on the FPGA"). No hardware here: tests/rtl/test_fpga_app.py runs
the designs in Verilator."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from compiler.fpga.build import build_fpga_design, counter_width
from compiler.fpga.design import FPGADesign, FPGADesignError
from compiler.fpga.host import host_vectors, stream_fires
from compiler.mapping.pub_model import decode_arrays
from compiler.pipeline import compile_app
from ubgen.arch import ControllerParams
from ubgen.controller import AffineMap, ControllerConfig, ControllerLayout, iterate

SMALL = dict(width=32, height=8)


@pytest.fixture(scope="module")
def gaussian():
    r = compile_app("gaussian", sizes=SMALL, until="map")
    design, vectors = r.fpga_design()
    return r, design, vectors


def _layout(spec: dict) -> ControllerLayout:
    return ControllerLayout(spec["name"], spec["addr_widths"],
                            ControllerParams(spec["max_dims"], spec["extent_width"],
                                             spec["cycle_width"]))


def test_gaussian_design(gaussian):
    """One line-buffer RAM for the two delayed rows (the PUB's element-level form), the
    kernel's operators, one input and one output stream, the schedule's completion."""
    r, d, _ = gaussian
    s = d.summary()
    assert (s["ram"], s["in"], s["out"], s["regfile"], s["timer"]) == (1, 1, 1, 0, 0)
    assert s["pe"] == r.run("netlist").netlist.count("pe")     # the same kernel graph
    assert d.cycles_predicted == r.schedule.completion
    ram = next(n for n in d.nodes if n.kind == "ram")
    pub = r.impls["hw_input"].pubs[0]
    assert ram.params["words"] == pub.words == pub.capacity_words
    assert len(ram.params["writes"]) == 1 and len(ram.params["reads"]) == 2
    # the two reads fire in the same cycles (rows y-1 and y-2): each needs its own port
    assert ram.params["share_read"] is False and ram.params["share_write"] is True
    assert d.cycle_width == counter_width(d.cycles_predicted)


def test_controllers_replay_the_unified_buffer(gaussian):
    """Every controller's registers, replayed by the independent decoder, give the streams of
    the mapped buffer: writes at their landing cycles, reads one cycle early (the RAM's read
    latency), same addresses; the host streams fire at the ports' cycles."""
    r, d, _ = gaussian
    pub = r.impls["hw_input"].pubs[0]
    ram = next(n for n in d.nodes if n.kind == "ram")
    aw = ram.params["addr_width"]
    for spec, cfg, shift in ([(s, c, 0) for s, c in zip(ram.params["writes"], pub.writes)]
                             + [(s, c, -1) for s, c in zip(ram.params["reads"], pub.reads)]):
        cycles, addrs = decode_arrays(spec["registers"], _layout(spec))
        want = list(iterate(ControllerConfig(cfg.extents, cfg.schedule,
                                             {"addr": cfg.addresses["addr"]}), {"addr": aw}))
        assert cycles.tolist() == [c + shift for c, _ in want]
        assert addrs["addr"].tolist() == [a["addr"] for _, a in want]
    for n in d.inputs + d.outputs:
        cycles, _ = decode_arrays(n.params["controller"]["registers"],
                                  _layout(n.params["controller"]))
        assert cycles.tolist() == stream_fires(n.params["stream"])[0].tolist()


def test_host_vectors(gaussian):
    """The input words are the image in the order the input stream reads it; every output
    element is expected once, at the fire that writes it."""
    r, d, v = gaussian
    (n,) = d.inputs
    _, idx = stream_fires(n.params["stream"])
    img = np.asarray(r.inputs["input"]).astype(np.int64)
    assert v["inputs"][0] == img[idx].tolist() and len(v["inputs"][0]) == img.size
    out = np.asarray(r.golden.outputs["output"]).astype(np.int64)
    (o,) = v["outputs"]
    assert o["fires"] == out.size and len(o["expected"]) == out.size
    _, oidx = stream_fires(d.outputs[0].params["stream"])
    assert [w for _, w in o["expected"]] == [int(x) for x in out[oidx]]
    assert v["cycles_predicted"] == d.cycles_predicted and v["output_writes"] == out.size


def test_host_vectors_refuse_an_unwritten_output(gaussian):
    """Negative control: a golden output larger than what the streams write is refused."""
    r, d, _ = gaussian
    big = {"output": np.zeros(np.asarray(r.golden.outputs["output"]).shape + (2,))}
    with pytest.raises(FPGADesignError, match="written by no output stream"):
        host_vectors(d, r.inputs, big)
    with pytest.raises(FPGADesignError, match="no input array"):
        host_vectors(d, {}, r.golden.outputs)


def test_json_round_trip(gaussian):
    _, d, _ = gaussian
    again = FPGADesign.from_dict(json.loads(d.to_json()))
    assert again.to_dict() == d.to_dict()
    with pytest.raises(FPGADesignError, match="format"):
        FPGADesign.from_dict({**d.to_dict(), "format": "other"})


def test_read_too_close_to_its_write_is_refused():
    """Negative control of the dual-port timing check: the same memory block with every
    read one cycle after the write of its word (the single-port PUB would never be given
    such a schedule) is refused, naming the buffer and the cycles."""
    r = compile_app("gaussian", sizes=SMALL, until="map")
    impl = r.impls["hw_input"]
    pub = impl.pubs[0]
    w = pub.writes[0]
    close = ControllerConfig(w.extents, AffineMap(w.schedule.start + 1, w.schedule.strides),
                             dict(w.addresses))
    impl.pubs[0] = replace(pub, reads=[close, pub.reads[1]])
    s = r.scheduled
    with pytest.raises(FPGADesignError, match="buffer hw_input: .* read 0 at cycle .* two "
                                               "cycles before the read"):
        build_fpga_design(s.program, s.optimized, s.buffers, r.impls, r.arch)


def test_every_app_builds():
    """Every app of the evaluation has an FPGA design whose host vectors cover its outputs
    (the DNN layers too: register files, accumulators drained more than once, bank-select
    timers)."""
    for app, sizes in [("harris", SMALL), ("camera", SMALL), ("mobilenet", {}),
                       ("upsample", dict(width=8, height=8))]:
        r = compile_app(app, sizes=sizes, until="map")
        d, v = r.fpga_design()
        assert v["output_writes"] >= sum(np.asarray(o).size for o in r.golden.outputs.values())
        for n, words in zip(d.inputs, v["inputs"]):
            assert len(words) == int(np.prod(n.params["stream"]["extents"]))
        if app == "mobilenet":
            assert d.count("regfile") > 0
        if app == "camera":
            assert d.count("timer") > 0 and d.count("rom") > 0


@pytest.mark.parametrize("completion, bits", [
    (0, 2),         # the 2-bit floor
    (6, 4),         # counts to 7: 3 bits, one spare
    (7, 5),         # counts to 8: 4 bits, one spare
    (4103, 14),     # gaussian 64x64: counts to 4104, 13 bits, one spare
    (65535, 18),    # counts to 65536: 17 bits, one spare
])
def test_the_cycle_counter_holds_the_run_with_one_spare_bit(completion, bits):
    assert counter_width(completion) == bits
