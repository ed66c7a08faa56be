"""Place and route (compiler/backend/pad.py, place.py, route.py, bitstream.py, check.py,
pnr.py; docs/pnr.md): register padding keeps the netlist model passing, every app at small
sizes places, routes and passes the independent bitstream checker, two runs give the same
bytes, and the checker's negative controls (a corrupted write, a wrong latency, a missing
connection) fail; too-large and unroutable designs give one-line errors; ``ubc pnr``; and
the bitstream configures the generated array's RTL (Amaranth simulator) to compute the app
bit-exactly at the predicted cycle, and a corrupted one does not."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from pathlib import Path

import pytest

from compiler.backend.bitstream import Bitstream
from compiler.backend.check import check_bitstream
from compiler.backend.netlist import Netlist
from compiler.backend.pad import pad_latencies
from compiler.backend.pnr import PnRError, array_data, place_and_route
from compiler.backend.place import place
from compiler.backend.route import RouteError, route
from compiler.backend.pnr import routing_nets
from compiler.cli import main
from compiler.pipeline import compile_app
from compiler.backend.netlist_model import check_netlist
from ubgen.arch import ARCH_DIR, load_arch
from ubgen.areas import tile_areas

from ...apps.test_apps import SMALL
from .array_sim import run_bundle

BIG = ("camera", "harris", "laplacian", "mobilenet", "srcnn", "unsharp")   # do not fit cgra_8x8 at SMALL


@pytest.fixture(scope="module")
def gaussian():
    result = compile_app("gaussian", "cgra_8x8", SMALL["gaussian"])
    return result, place_and_route(result.netlist, result.arch)


def _check(pnr, bits=None, net=None):
    data = array_data(pnr.arch)
    net = net or pnr.netlist
    tiles = {n: pnr.placement.tile_id(n) for n in net.graph.nodes}
    return check_bitstream(bits or pnr.bitstream, net, tiles, data.graph, data.index)


def test_padding_keeps_the_netlist_model_passing(gaussian):
    result, _ = gaussian
    padded = pad_latencies(result.netlist, 3)
    assert max(d["latency"] for *_e, d in padded.graph.edges(data=True)) <= 3
    regs = [n for n in padded.nodes("pe") if padded.graph.nodes[n].get("register")]
    assert regs and padded.count("pe") == result.netlist.count("pe") + len(regs)
    golden = result.establish_golden().outputs
    inputs = result.inputs
    ok = check_netlist(padded, result.arch, result.program, inputs, golden)
    assert ok.ok, ok.summary()
    # negative control: one register PE without its output register is a cycle short
    broken = pad_latencies(result.netlist, 3)
    broken.graph.nodes[regs[0]]["config"]["out_reg"] = 0
    assert not check_netlist(broken, result.arch, result.program, inputs, golden).ok


def test_replicated_template_start_copies_one_lane_shape():
    """gemm's unrolled MAC lanes are copies of one template; the replicated start puts every
    lane in the first lane's shape, moved; both starts beat a random one."""
    import random
    from compiler.backend.place import _initial, _nets, lanes, site_lists
    # the streams as written (compiler.passes.stream_split off): the placer's example, four
    # MAC lanes between three IO tiles
    result = compile_app("gemm", "cgra_8x8", SMALL["gemm"], split=False)
    net, lay = result.netlist, array_data(result.arch).layout
    (group,) = lanes(net).values()
    assert len(group) == 4 and len({len(lane) for lane in group}) == 1
    nodes = sorted(net.graph.nodes)
    kinds = [net.graph.nodes[n]["kind"] for n in nodes]
    sites = site_lists(lay)
    idx = {n: i for i, n in enumerate(nodes)}

    def hpwl(pos):
        nets, _ = _nets(net, nodes)
        return sum(w * (max(pos[m][0] for m in ms) - min(pos[m][0] for m in ms)
                        + max(pos[m][1] for m in ms) - min(pos[m][1] for m in ms))
                   for w, ms in nets)
    rep = _initial(net, nodes, kinds, sites, lay, replicate=True)
    shapes = set()
    for lane in group:
        r0, c0 = rep[idx[lane[0]]]
        shapes.add(tuple((rep[idx[n]][0] - r0, rep[idx[n]][1] - c0) for n in lane))
    assert len(shapes) == 1
    rng = random.Random(0)
    free = {k: rng.sample(v, len(v)) for k, v in sites.items()}
    rand = [free[k].pop() for k in kinds]
    clus = _initial(net, nodes, kinds, sites, lay, replicate=False)
    assert 4 * max(hpwl(rep), hpwl(clus)) < 3 * hpwl(rand)


def test_exact_latencies_on_a_synthetic_netlist():
    """Every latency from 0 to the route limit on 16-bit and 1-bit edges, a fan-out whose
    sinks want different latencies, and a PE feeding itself back (a route that leaves the tile
    and comes back): each sink gets exactly its latency, and the checker agrees."""
    from compiler.backend.netlist import GLBLayout
    from ubgen.pe.ops import PEOp
    net = Netlist("synthetic", "cgra_8x8")
    glb = GLBLayout("x", (0,), (1,), (16,)).to_dict()
    net.add_node("in", "io", {}, stream="glb2f", glb=glb)
    net.add_node("out", "io", {}, stream="f2glb", glb=glb)
    for k in range(6):
        net.add_node(f"p{k}", "pe", {"op": int(PEOp.ADD), "out_reg": 1})
        net.add_edge("in", "io2f_16", f"p{k}", "data0", k)          # one net, six latencies
        net.add_edge("in", "io2f_1", f"p{k}", "bit0", 5 - k, width=1)
    net.add_edge("p0", "res", "p0", "data1", 3)                      # a loop back into p0
    for k in range(1, 6):
        net.add_edge(f"p{k - 1}", "res_p", f"p{k}", "bit1", k - 1, width=1)
    net.add_edge("p5", "res", "out", "f2io_16", 4)
    pnr = place_and_route(net, "cgra_8x8", max_route_latency=5)
    assert pnr.padded.count("pe") == 6                               # no register PE needed
    for nr in pnr.routing.nets.values():
        for sink, lat in nr.sinks:
            assert nr.latency(sink) == lat
    assert pnr.check.ok, pnr.check.summary()
    assert pnr.check.edges == net.graph.number_of_edges()


def test_gaussian_places_routes_and_checks(gaussian):
    result, pnr = gaussian
    s = pnr.summary()
    assert s["check"] == "pass", s["check_detail"]
    assert s["register_pes"] > 0 and s["pipeline_registers"] > 0
    # every routed sink sees exactly its edge's latency
    for nr in pnr.routing.nets.values():
        for sink, lat in nr.sinks:
            assert nr.latency(sink) == lat
    banks = pnr.io_banks()
    assert set(banks) == set(result.netlist.nodes("io"))
    assert len({b["bank"] for b in banks.values()}) == len(banks)
    items = pnr.bitstream.to_list()
    assert items == sorted(items) and len({a for a, _ in items}) == len(items)
    assert all(a >= 0x8000_0000 and a % 4 == 0 for a, _ in items)


def test_two_runs_give_the_same_bitstream(gaussian):
    result, pnr = gaussian
    again = place_and_route(compile_app("gaussian", "cgra_8x8", SMALL["gaussian"]).netlist,
                            result.arch)
    assert again.bitstream.to_bytes() == pnr.bitstream.to_bytes()
    other = place_and_route(result.netlist, result.arch, seed=1)
    assert other.check.ok
    assert other.bitstream.sha256() != pnr.bitstream.sha256()


@pytest.mark.parametrize("app", sorted(a for a in SMALL if a not in BIG))
def test_small_apps_on_cgra_8x8(app):
    result = compile_app(app, "cgra_8x8", SMALL[app])
    pnr = place_and_route(result.netlist, result.arch)
    assert pnr.check.ok, pnr.check.summary()
    assert pnr.check.edges == result.netlist.graph.number_of_edges()


@pytest.mark.parametrize("app", BIG)
def test_small_apps_that_need_cgra_16x32(app):
    result = compile_app(app, "cgra_16x32", SMALL[app])
    assert not compile_app(app, "cgra_8x8", SMALL[app]).fits()[0]
    pnr = place_and_route(result.netlist, result.arch)
    assert pnr.check.ok, pnr.check.summary()


def _corrupt(bits: Bitstream, pred, change) -> Bitstream:
    writes = list(bits.writes)
    i = next(i for i, (a, v) in enumerate(writes) if pred(a, v))
    writes[i] = (writes[i][0], change(writes[i][1]))
    return Bitstream(bits.arch, writes)


def test_checker_catches_corrupted_writes(gaussian):
    _, pnr = gaussian
    data = array_data(pnr.arch)
    dec = data.index.decode
    assert _check(pnr).ok
    # a connection-box select that reads nothing (its constant-0 input: the connection is
    # gone); reading another track is not always wrong: it may be another route's track that
    # carries the very source
    bad = _corrupt(pnr.bitstream, lambda a, v: dec(a)[1].startswith("cb_") and v, lambda v: 0)
    assert not _check(pnr, bad).ok
    # a pipeline register switched off: some edge is one cycle short
    bad = _corrupt(pnr.bitstream, lambda a, v: dec(a)[1].endswith("_pipe") and v == 1,
                   lambda v: 0)
    rep = _check(pnr, bad)
    assert not rep.ok and "latency" in rep.summary()
    # a PE's op changed
    bad = _corrupt(pnr.bitstream, lambda a, v: dec(a)[1] == "op" and v, lambda v: v + 1)
    rep = _check(pnr, bad)
    assert not rep.ok and "register op" in " ".join(rep.errors)
    # a switch-box select changed
    bad = _corrupt(pnr.bitstream, lambda a, v: dec(a)[1].endswith("_sel")
                   and dec(a)[1].startswith("sb"), lambda v: v ^ 1)
    assert not _check(pnr, bad).ok
    # a write dropped: a connection disappears or a register goes back to reset
    assert not _check(pnr, Bitstream(pnr.bitstream.arch, pnr.bitstream.writes[1:])).ok
    # a select written on a switch-box output no route uses, to a track instead of the
    # constant 0: it would pass a neighbour's traffic on
    g = data.graph
    written = {dec(a)[:2] for a, _v in pnr.bitstream.writes}
    mux = next(n for n, d in sorted(g.nodes(data=True)) if d["kind"] == "sb_mux"
               and (d["tile"], f"sb{d['width']}_{d['side']}_{d['track']}_sel") not in written)
    d = g.nodes[mux]
    name = f"sb{d['width']}_{d['side']}_{d['track']}_sel"
    stray = Bitstream(pnr.bitstream.arch, sorted(pnr.bitstream.writes + [
        (data.index.address(d["tile"], name), 0)]))
    rep = _check(pnr, stray)
    assert not rep.ok and "no route uses" in rep.summary(), rep.summary()
    zero = Bitstream(pnr.bitstream.arch, sorted(pnr.bitstream.writes + [
        (data.index.address(d["tile"], name), d["zero_sel"])]))
    assert _check(pnr, zero).ok                     # writing its constant 0 is fine
    # a write outside the register map
    assert not _check(pnr, Bitstream(pnr.bitstream.arch,
                                     pnr.bitstream.writes + [(0x4000_0000, 1)])).ok


def test_checker_catches_a_wrong_latency_in_the_netlist(gaussian):
    _, pnr = gaussian
    net = Netlist.from_dict(pnr.netlist.to_dict())
    u, v, k, d = sorted(net.graph.edges(keys=True, data=True))[0]
    net.graph.edges[u, v, k]["latency"] = d["latency"] + 1
    rep = _check(pnr, net=net)
    assert not rep.ok and f"{v}.{k}" in rep.summary() and "latency" in rep.summary()


def test_too_large_is_a_one_line_error():
    result = compile_app("harris", "cgra_16x32", SMALL["harris"])
    with pytest.raises(PnRError, match="needs 78 PE tiles; cgra_4x4 has 12"):
        place_and_route(result.netlist, "cgra_4x4")


def test_unroutable_names_the_congested_switch_box(tmp_path):
    arch = tmp_path / "one_track.toml"
    arch.write_text((ARCH_DIR / "cgra_8x8.toml").read_text().replace(
        "tracks = 5 ", "tracks = 1 "))
    assert load_arch(arch).array.tracks == 1
    result = compile_app("gemm", "cgra_8x8", SMALL["gemm"])
    with pytest.raises(PnRError) as exc:
        place_and_route(result.netlist, load_arch(arch), max_route_latency=5)
    msg = str(exc.value)
    assert "\n" not in msg and "switch box of tile" in msg and "1 tracks per side" in msg


def test_router_reports_congestion_after_the_iteration_limit(gaussian):
    result, _ = gaussian
    data = array_data(result.arch)
    padded = pad_latencies(result.netlist, 5)
    placement = place(padded, data.layout, 0)
    nets = routing_nets(padded, placement)
    # every net twice: the copies fight for the same ports' tracks forever
    doubled = nets + [((k[0] + "'", k[1]), s, sinks) for k, s, sinks in nets]
    with pytest.raises(RouteError, match="switch box of tile"):
        route(doubled, data.rgraph, max_iterations=3)


def test_cli_pnr_json_plot_and_out(tmp_path, capsys):
    plot, out = tmp_path / "g.png", tmp_path / "bits"
    args = ["pnr", "gaussian", "--arch", "cgra_8x8", "--size", "width=16", "--size",
            "height=12"]
    assert main(args + ["--json", "--plot", str(plot), "--out", str(out)]) == 0
    s = json.loads(capsys.readouterr().out)
    for key in ("app", "arch", "pes", "mems", "ios", "wirelength", "pipeline_registers",
                "max_comb_hops", "bitstream_words", "bitstream_sha256", "check",
                "place_seconds", "route_seconds"):
        assert key in s
    assert s["check"] == "pass" and s["app"] == "gaussian" and s["arch"] == "cgra_8x8"
    # the area of the tiles it occupies, from ubgen's measured tile areas (docs/array.md)
    kinds = tile_areas(load_arch("cgra_8x8"))
    want = {k: s[k + "s"] * kinds[k]["total_um2"] for k in ("pe", "mem", "io")}
    assert s["tile_area_by_kind"] == pytest.approx({k: v for k, v in want.items() if v})
    assert s["tile_area_um2"] == pytest.approx(sum(want.values())) and s["tile_area_um2"] > 0
    assert plot.stat().st_size > 10000
    bits = json.loads((out / "gaussian-cgra_8x8.bitstream.json").read_text())
    assert len(bits["writes"]) == s["bitstream_words"]
    assert (out / "gaussian-cgra_8x8.bitstream.bin").stat().st_size == 8 * s["bitstream_words"]
    assert main(args + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["bitstream_sha256"] == s["bitstream_sha256"]


def test_cli_json_sha_is_the_same_in_two_processes():
    """Two processes with different hash seeds (set and dict orders) give the same bytes."""
    shas = []
    for hash_seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-m", "compiler", "pnr", "gaussian", "--arch",
                              "cgra_8x8", "--json"], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": hash_seed})
        shas.append(json.loads(out.stdout)["bitstream_sha256"])
    assert shas[0] == shas[1]


def test_cli_pnr_errors_leave_nothing(tmp_path, capsys):
    plot = tmp_path / "h.png"
    assert main(["pnr", "harris", "--arch", "cgra_4x4", "--plot", str(plot)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ubc: error: ") and "PE tiles" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
    assert main(["pnr", "gaussian", "--plot", str(tmp_path / "no" / "x.png")]) == 2
    assert "does not exist" in capsys.readouterr().err


def _array_run(app: str, arch: str, corrupt=None):
    result = compile_app(app, arch, SMALL.get(app, {}), until="bundle")
    pnr, bundle = result.pnr, result.bundle
    assert pnr.check.ok, pnr.check.summary()
    if corrupt is not None:
        bundle["bitstream"] = corrupt(bundle["bitstream"], array_data(result.arch).index)
    cols = [b["column"] for b in pnr.io_banks().values()]
    return bundle, run_bundle(result.arch, bundle, cols)


BAYER_RATIO = str(Path(__file__).resolve().parents[2] / "data" / "apps" / "bayer_ratio.py")


@pytest.mark.parametrize("app", ["brighten_blur", BAYER_RATIO])
def test_bitstream_runs_bit_exact_on_the_simulated_array(app):
    """The bitstream configures the generated array's RTL (Amaranth simulator, real tiles):
    the outputs are bit-exact and the last GLB write is at the predicted cycle. The app file
    exercises loop phases (schedule generators) and the PE's divider."""
    bundle, run = _array_run(app, "cgra_4x4")
    assert run.mismatches(bundle) == []
    assert len(run.writes) == bundle["output_writes"]
    assert run.last_write == bundle["cycles_predicted"]


def test_simulated_array_sees_a_corrupted_pipeline_register():
    """Negative control: one enabled pipeline register switched off in the bitstream."""
    def corrupt(bits, index):
        i = next(i for i, (a, v) in enumerate(bits) if v == 1
                 and index.decode(a)[1].endswith("_pipe"))
        return bits[:i] + [[bits[i][0], 0]] + bits[i + 1:]
    bundle, run = _array_run("brighten_blur", "cgra_4x4", corrupt)
    assert run.mismatches(bundle) or run.last_write != bundle["cycles_predicted"]


@pytest.mark.regress
@pytest.mark.parametrize("app", ["cascade", "gemm", "gpyr", "resnet", "upsample"])
def test_more_small_apps_run_on_the_simulated_array(app):
    arch = next(a for a in ("cgra_4x4", "cgra_4x16", "cgra_8x8")
                if compile_app(app, a, SMALL[app]).fits()[0])
    bundle, run = _array_run(app, arch)
    assert run.mismatches(bundle) == []
    assert run.last_write == bundle["cycles_predicted"]


@pytest.mark.regress
def test_full_size_srcnn_is_a_one_line_error():
    """srcnn at its Table 7.1 size fits no shipped array: placing it on the largest is a
    one-line error naming the resource. (The other apps' full-size place and route, RTL run and
    cycles are the application half of ``make regress``, ``compiler/sweep/regress.py``.)"""
    result = compile_app("srcnn", "cgra_16x32")
    assert not result.fits()[0]
    with pytest.raises(PnRError, match="needs \\d+ (PE|MEM|IO) tiles") as exc:
        place_and_route(result.netlist, result.arch)
    assert "\n" not in str(exc.value)


def test_placement_and_routing_round_trip_through_json(gaussian):
    """Placement and routing serialise (``ubc compile --dump`` writes them) and read back
    equal; a changed site or a dropped pipeline register reads back different."""
    from compiler.backend.place import Placement
    from compiler.backend.route import Routing
    _result, pnr = gaussian
    p = json.loads(json.dumps(pnr.placement.to_dict()))
    r = json.loads(json.dumps(pnr.routing.to_dict()))
    assert Placement.from_dict(p) == pnr.placement and Routing.from_dict(r) == pnr.routing
    node = next(iter(p["sites"]))
    p["sites"][node][1] += 1
    assert Placement.from_dict(p) != pnr.placement
    net = next(n for n in r["nets"] if n["registers"])
    net["registers"].pop()
    assert Routing.from_dict(r) != pnr.routing
