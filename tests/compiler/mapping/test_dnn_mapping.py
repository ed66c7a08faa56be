"""resnet, srcnn and gemm buffers through the mapping passes (thesis §5.2.1 Fig. 5.3, §7.3
Table 7.8).

Every buffer maps and passes the register-driven model check (issue 4's "done" for the DNN
apps, here at CI sizes; the full sizes run under ``-m regress`` in test_apps_mapping.py). The
weight buffer is banked by the GCD heuristic into one bank per (input channel lane, output
channel lane) without duplication (Fig. 5.3, eqs. 5.14-5.21); the input buffer is one bank per
input-channel lane, read once per lane and broadcast to the output-channel engines (Table 7.8
text: "instantiates a single memory and broadcasts values"); the accumulator is one bank per
output-channel lane whose PUB has the four operations of thesis §7.3.2 on its 2 + 2 ports:
initialization and update write, update read and drain.
"""
import time

import pytest

from apps import get_app
from compiler.mapping.map_buffer import map_buffers
from compiler.mapping.port_sharing import share_output_ports
from compiler.mapping.pub_model import check_buffer
from compiler.schedule.report import schedule_program

RESNET = dict(width=4, height=4, in_channels=8, out_channels=8, ic_unroll=4, oc_unroll=4)
SRCNN = dict(width=6, height=6, c_in=8, c_mid=4, c_out=8, unroll=4)
GEMM = dict(m=8, n=16, k=16, k_unroll=4, n_unroll=4)


def _map_and_check(app: str, sizes: dict, check: set[str] | None = None):
    """Map every buffer; model-check the mapped on-chip ones (those in ``check`` if given)."""
    res = schedule_program(get_app(app).build(**sizes))
    t0 = time.perf_counter()
    impls, refused = map_buffers(res.buffers, "pub")
    seconds = time.perf_counter() - t0
    for name, reason in refused.items():
        assert reason.startswith(f"buffer {name}:") and "\n" not in reason
    for name, impl in impls.items():
        if impl.level == "GLB" or (check is not None and name not in check):
            continue
        rep = check_buffer(res.buffers[name], impl)
        assert rep.ok and rep.checked > 0, rep.summary()
    return res, impls, refused, seconds


def test_resnet_small_maps_and_checks():
    # two output-channel tiles: out_mem is double buffered (two storage copies, thesis §4.2.4)
    res, impls, refused, seconds = _map_and_check("resnet", RESNET)
    assert not refused, refused
    assert seconds < 30
    assert res.optimized.info["tiles"] == 2
    assert res.optimized.info["storage_copies"]["out_mem"] == 2
    icu, ocu = RESNET["ic_unroll"], RESNET["oc_unroll"]
    w = impls["w_mem"]
    # Fig. 5.3: constant channel lane -> fully partitioned, k lane stride -> GCD; no copies
    assert any(f"banking factors [{icu}, {ocu}, 1, 1]" == n for n in w.notes), w.notes
    assert not any("duplicated" in n for n in w.notes)
    banks = len(w.pubs) + len(w.register_files)
    assert banks == icu * ocu
    # input-channel reuse: one read per input channel lane, broadcast to the ocu engines
    ub = res.buffers["in_mem"]
    shares = share_output_ports(ub, [p.name for p in ub.outputs])
    assert len({s.leader for s in shares}) == icu
    assert len(shares) == icu * (ocu - 1) and all(s.delay == 0 for s in shares)
    inm = impls["in_mem"]
    assert inm.mems == icu and all(len(p.inputs) == 1 and len(p.outputs) == 1
                                   for p in inm.pubs)
    # one accumulator PUB per output-channel lane: init_k and conv_k in, conv_k and drain_k out
    out = impls["out_mem"]
    assert out.mems == ocu and not out.shift_registers
    for k, pub in enumerate(out.pubs):
        assert pub.inputs == [f"init_{k}_st", f"conv_{k}_st"]
        assert pub.outputs == [f"conv_{k}_ld{2 * icu}", f"drain_{k}_ld0"]


def test_resnet_io_lanes_ablation():
    """``io_lanes=0`` (one input, init and drain word per cycle, channel innermost) is slower,
    and with two input-channel blocks per lane its input stream fills each lane's bank
    block-innermost while the convolution reads it pixel-innermost (a transpose: every read a
    wide fetch of its own, sharing the single SRAM port with the writes): in_mem is refused
    with a one-line reason; the other buffers map and check."""
    sizes = dict(RESNET, io_lanes=0)
    res, _impls, refused, _s = _map_and_check("resnet", sizes)
    lanes = schedule_program(get_app("resnet").build(**RESNET))
    assert set(refused) == {"in_mem"}
    assert lanes.optimized.completion < res.optimized.completion


def test_srcnn_small_maps_and_checks():
    _res, impls, refused, seconds = _map_and_check("srcnn", SRCNN)
    assert not refused, refused
    assert seconds < 30
    u = SRCNN["unroll"]
    assert impls["l1"].mems == u and impls["a1"].mems == u
    # the input lanes start when the first layer reads them (compiler.schedule.delay): each
    # value goes straight to its readers, nothing waits in a memory; started as early as
    # possible they wait in one memory per lane
    assert impls["in_mem"].mems == 0 and not impls["in_mem"].register_files
    # (the input copy as written: split over IO tiles, compiler.passes.stream_split, its four
    # lanes keep pace with their readers and need no memory either way)
    early = schedule_program(get_app("srcnn").build(**SRCNN), delay=False, split=False)
    assert map_buffers({"in_mem": early.buffers["in_mem"]}, "pub")[0]["in_mem"].mems == u


def test_gemm_small_accumulator_per_column_lane():
    _res, impls, refused, _s = _map_and_check("gemm", GEMM)
    assert not refused, refused
    c = impls["c_mem"]
    assert c.mems == GEMM["n_unroll"]
    # lane r's memory: its initialization and its update write it, the update reads it; the
    # drain, split per lane (compiler.passes.stream_split), takes each final value as it lands
    assert [(p.inputs, p.outputs) for p in c.pubs] == [
        ([f"init_{r}_st", f"update_{r}_st"], [f"update_{r}_ld8"]) for r in range(4)]
    assert [(s.src, s.dst, s.delay) for s in c.shift_registers] == [
        (f"update_{r}_st", f"drain_{r}_ld0", 0) for r in range(4)]
    # the streams as written: one initialization and one drain read every lane's memory
    plain = schedule_program(get_app("gemm").build(**GEMM), split=False)
    c = map_buffers({"c_mem": plain.buffers["c_mem"]}, "pub")[0]["c_mem"]
    assert c.mems == GEMM["n_unroll"]
    assert all(len(p.inputs) == 2 and len(p.outputs) == 2 for p in c.pubs)


@pytest.mark.regress
@pytest.mark.parametrize("app", ["resnet", "srcnn"])
def test_full_size_mapping_time(app):
    """Issue 4: `ubc map resnet` did not finish in 15 minutes; now the passes take seconds."""
    res = schedule_program(get_app(app).build())
    t0 = time.perf_counter()
    map_buffers(res.buffers, "pub")
    assert time.perf_counter() - t0 < 120
