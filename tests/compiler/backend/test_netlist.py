"""The netlist (compiler/backend/build.py, netlist.py) and its model (model.py) through
compiler.pipeline: counts against paper Table IV, exact latencies, JSON round trip, fits, and
the netlist model on every app at small sizes (every app at thesis Table 7.1 sizes under
``-m regress``), with negative controls: a changed PE op, an edge one cycle short, a shifted
IO schedule."""
from __future__ import annotations

import json

import numpy as np
import pytest

from apps import NAMES
from compiler.backend.netlist_model import check_netlist, simulate_netlist
from compiler.backend.netlist import GLBLayout, Netlist
from compiler.cli import main
from compiler.pipeline import FitError, check_result, compile_app, require_fit
from ubgen.arch import ARCH_DIR
from ubgen.pe.ops import PEOp

from ...apps.test_apps import SMALL


@pytest.fixture(scope="module")
def gaussian():
    return compile_app("gaussian", "cgra_8x8")


def test_gaussian_fits_in_21_pes_and_2_mems(gaussian):
    """Paper Table IV: gaussian 19 PEs / 1 MEM; the reference flow: 21 / 2."""
    rep = gaussian.report
    assert rep["pes"] <= 21 and rep["mems"] <= 2 and rep["ios"] == 2
    assert rep["fits"] and rep["cycles_predicted"] == 4104
    net = gaussian.netlist
    assert all(d["latency"] >= 0 for _u, _v, d in net.graph.edges(data=True))
    io_in = [n for n in net.nodes("io") if net.graph.nodes[n]["stream"] == "glb2f"]
    lay = GLBLayout.from_dict(net.graph.nodes[io_in[0]]["glb"])
    assert lay.words == 4096 and lay.offset((3, 2)) == 2 * 64 + 3


def test_netlist_model_passes_and_json_round_trips(gaussian):
    check = check_result(gaussian)
    assert check.ok, check.summary()
    assert check.cycles_netlist == 4104 and check.writes == 62 * 62
    data = gaussian.netlist.to_dict()
    again = Netlist.from_dict(json.loads(json.dumps(data)))
    assert again.to_dict() == data


def _mutated(result, edit):
    net = Netlist.from_dict(result.netlist.to_dict())
    edit(net)
    golden = result.establish_golden().outputs
    return check_netlist(net, result.arch, result.program, result.inputs, golden)


def test_model_catches_a_changed_pe_op(gaussian):
    def edit(net):
        node = next(n for n in net.nodes("pe") if net.graph.nodes[n]["config"]["op"] == PEOp.ADD)
        net.graph.nodes[node]["config"]["op"] = int(PEOp.SUB)
    check = _mutated(gaussian, edit)
    assert not check.ok and "expected" in check.mismatches[0]


def test_model_catches_a_delay_one_cycle_short(gaussian):
    def edit(net):
        u, v, k = next((u, v, k) for u, v, k, d in net.graph.edges(keys=True, data=True)
                       if d["latency"] > 0 and net.graph.nodes[v]["kind"] == "pe")
        net.graph.edges[u, v, k]["latency"] -= 1
    assert not _mutated(gaussian, edit).ok


def test_model_catches_a_late_output_stream(gaussian):
    def edit(net):
        out = next(n for n in net.nodes("io") if net.graph.nodes[n]["stream"] == "f2glb")
        net.graph.nodes[out]["config"]["f2glb_cycle_start"] += 1
    check = _mutated(gaussian, edit)
    assert not check.ok


@pytest.mark.parametrize("app", NAMES)
def test_netlist_model_small(app):
    """Every app at its small size: bit-exact against the interpreter, last write at the
    schedule's predicted cycle."""
    result = compile_app(app, "cgra_16x32", SMALL[app])
    check = check_result(result)
    assert check.ok, check.summary()


def test_long_streams_split_over_banks(tmp_path):
    """An input stream longer than a GLB bank is read by several IO tiles merged on their valid
    bits; an output stream is written by several."""
    text = (ARCH_DIR / "cgra_8x8.toml").read_text()
    arch = tmp_path / "small_glb.toml"
    arch.write_text(text.replace("bank_words = 4096", "bank_words = 64"))
    result = compile_app("brighten_blur", arch, SMALL["brighten_blur"])
    ios = result.netlist.nodes("io")
    assert len(ios) > 2
    assert all(result.netlist.graph.nodes[n]["glb"]["words"] <= 64 for n in ios)
    check = check_result(result)
    assert check.ok, check.summary()


def test_fit_errors_name_the_resource():
    result = compile_app("harris", "cgra_4x4", SMALL["harris"])
    ok, why = result.fits()
    assert not ok and "PE tiles" in why and "cgra_4x4 has 12" in why
    with pytest.raises(FitError, match="needs 78 PE tiles"):
        require_fit(result)


def test_cli_netlist_json_and_dump(tmp_path, capsys):
    assert main(["netlist", "gaussian", "--arch", "cgra_8x8", "--size", "width=16",
                 "--size", "height=12", "--json", "--dot", str(tmp_path / "g.dot")]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("app", "arch", "pes", "mems", "ios", "registers", "fits", "cycles_predicted",
                "cycles_netlist", "netlist_model", "compile_seconds"):
        assert key in out
    assert out["netlist_model"] == "pass" and out["cycles_netlist"] == out["cycles_predicted"]
    assert (tmp_path / "g.dot").read_text().startswith('digraph "gaussian"')
    assert main(["compile", "cascade", "--size", "width=12", "--size", "height=10",
                 "--dump", str(tmp_path / "d")]) == 0
    assert {"netlist.json", "ubimpls.json", "schedule.json", "report.json"} <= {
        p.name for p in (tmp_path / "d").iterdir()}


def test_cli_bad_input_is_one_line(tmp_path, capsys):
    assert main(["netlist", "gausian"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["netlist", "gaussian", "--dot", str(tmp_path / "no" / "x.dot")]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.regress
@pytest.mark.parametrize("app", NAMES)
def test_netlist_model_full_size(app):
    """Thesis Table 7.1 sizes: every app's netlist model is bit-exact and cycle-exact."""
    check = check_result(compile_app(app, "cgra_16x32"))
    assert check.ok, check.summary()
