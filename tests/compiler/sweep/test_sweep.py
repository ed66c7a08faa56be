"""Design-space sweeps (compiler/sweep/, ``ubc sweep``): a LocalCluster of 2 workers gives the
results of the in-process sweep, the cache serves a second run, failing points are reported,
not raised. One LocalCluster for the module (its start-up is the slow part)."""
from __future__ import annotations

import json

import pytest

from compiler.cli import main
from compiler.sweep import cache as cache_mod
from compiler.sweep import engine
from compiler.sweep.cache import Cache, point_key
from compiler.sweep.engine import SweepError, Task, grid, parse_param, run_sweep, run_tasks
from compiler.sweep.point import (PES_PENDING, STAGES, evaluate_point, fit, make_point,
                                  split_params)
from ubgen.arch import load_arch

SMALL = dict(width=16, height=12)
POINTS = [dict(SMALL, unroll=1), dict(SMALL, unroll=2)]
VOLATILE = ("seconds", "cached", "traceback")


def _stable(results: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in results]


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    import logging
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_local_cluster_matches_in_process(client, tmp_path):
    serial = run_sweep("gaussian", POINTS, workers=0, progress=False)
    distributed = run_sweep("gaussian", POINTS, client=client, progress=False)
    assert _stable(distributed) == _stable(serial)
    assert [r["unroll"] for r in serial] == [1, 2]
    for r in serial:
        assert r["status"] == "ok" and r["error"] is None and r["fits"] is True
        assert r["cycles"] > 0 and r["sram_words"] > 0 and r["mems"] is not None
        assert r["pes"] > 0 and PES_PENDING not in r["notes"]
        assert set(r["seconds"]) == {"schedule", "map", "netlist"}
    assert serial[1]["cycles"] < serial[0]["cycles"]        # two pixels per cycle


def test_cache_serves_the_second_run(client, tmp_path):
    c1 = Cache(tmp_path / "cache")
    first = run_sweep("gaussian", POINTS, client=client, cache=c1, progress=False)
    assert (c1.hits, c1.stores) == (0, 2) and not any(r["cached"] for r in first)
    c2 = Cache(tmp_path / "cache")
    extra = dict(SMALL, unroll=3)
    second = run_sweep("gaussian", POINTS + [extra], workers=0, cache=c2, progress=False)
    assert (c2.hits, c2.stores) == (2, 1)
    assert [r["cached"] for r in second] == [True, True, False]
    assert _stable(second[:2]) == _stable(first)


def test_failing_points_are_reported_not_raised(client, tmp_path):
    tasks = [Task("gaussian", dict(SMALL, unroll=0)),                  # the app refuses it
             Task("harris", {"arch": "cgra_4x4"}),                      # 5 MEMs > 4
             Task("gaussian", dict(SMALL, unroll=1))]
    cache = Cache(tmp_path / "c")
    refused, no_fit, fine = run_tasks(tasks, client=client, cache=cache, progress=False)
    assert refused["status"] == "error" and refused["error"].startswith("schedule: gaussian: ")
    assert "unroll=0" in refused["error"] and "\n" not in refused["error"]
    assert no_fit["status"] == "does-not-fit" and no_fit["fits"] is False
    assert no_fit["out_of"] == ["PE tiles", "MEM tiles"] and no_fit["error"] is None
    assert no_fit["fit"]["MEM tiles"] == {"used": 5, "available": 4}
    assert no_fit["fit"]["PE tiles"]["available"] == 12 < no_fit["pes"]
    assert fine["status"] == "ok" and fine["fits"] is True
    assert cache.stores == 3          # the app's refusal is deterministic: cached too


def test_internal_error_is_reported_and_not_cached(monkeypatch, tmp_path):
    def broken(pt):
        raise ZeroDivisionError("boom")
    monkeypatch.setitem(STAGES, "map", broken)
    cache = Cache(tmp_path)
    [r] = run_sweep("gaussian", [SMALL], workers=0, cache=cache, progress=False)
    assert r["status"] == "error" and r["error"] == "map: internal error: ZeroDivisionError: boom"
    assert r["cycles"] is not None and "schedule" in r["seconds"]
    assert cache.stores == 0


def test_results_of_other_code_are_errors_and_not_cached(monkeypatch, tmp_path):
    """A worker running another checkout (its code digest differs) gives no figure."""
    def other_code(app, params, stages):
        return dict(evaluate_point(app, params, stages), code="0" * 64)
    monkeypatch.setattr(engine, "evaluate_point", other_code)
    cache = Cache(tmp_path)
    [r] = run_sweep("gaussian", [SMALL], workers=0, cache=cache, progress=False)
    assert r["status"] == "error" and "different code" in r["error"] and cache.stores == 0
    assert r["error"].startswith("task: the worker runs different code")
    assert r["cycles"] is None and r["mems"] is None      # no figure of the other code


def test_cache_key_covers_every_input(monkeypatch):
    base = point_key("gaussian", {"unroll": 2}, ("schedule", "map"))
    assert base == point_key("gaussian", {"unroll": 2}, ("schedule", "map"))
    others = [point_key("harris", {"unroll": 2}, ("schedule", "map")),
              point_key("gaussian", {"unroll": 4}, ("schedule", "map")),
              point_key("gaussian", {"unroll": 2, "arch": "cgra_8x8"}, ("schedule", "map")),
              point_key("gaussian", {"unroll": 2}, ("schedule",))]
    monkeypatch.setattr(cache_mod, "code_digest", lambda: "another compiler")
    others.append(point_key("gaussian", {"unroll": 2}, ("schedule", "map")))
    monkeypatch.undo()
    monkeypatch.setattr(cache_mod, "tool_version", lambda: "9.9")
    others.append(point_key("gaussian", {"unroll": 2}, ("schedule", "map")))
    assert len(set(others)) == len(others) and base not in others


def test_parse_param_and_grid():
    assert parse_param("unroll=1,2,4") == (("unroll",), [1, 2, 4])
    assert parse_param("arch=cgra_8x8,cgra_16x32") == (("arch",), ["cgra_8x8", "cgra_16x32"])
    tied = parse_param("ic_unroll+oc_unroll=1,8")
    assert grid([tied, parse_param("width=4,6")]) == [
        {"ic_unroll": 1, "oc_unroll": 1, "width": 4}, {"ic_unroll": 1, "oc_unroll": 1, "width": 6},
        {"ic_unroll": 8, "oc_unroll": 8, "width": 4}, {"ic_unroll": 8, "oc_unroll": 8, "width": 6}]
    for bad in ("unroll", "unroll=", "=1,2", "un roll=1", "unroll=1,,2", "unroll=1,1"):
        with pytest.raises(SweepError):
            parse_param(bad)
    with pytest.raises(SweepError, match="twice"):
        grid([parse_param("unroll=1"), parse_param("unroll=2")])


def test_params_are_checked():
    assert split_params("gaussian", {"unroll": 2, "arch": "cgra_8x8"}) == (
        {"unroll": 2}, {"arch": "cgra_8x8"})
    for params, needle in (({"unrol": 2}, "no size 'unrol'"), ({"unroll": "two"}, "integer"),
                           ({"cycles": 1}, "reserved"), ({"backend": "sram"}, "backend"),
                           ({"threshold": -1}, "non-negative")):
        with pytest.raises(ValueError, match=needle):
            split_params("gaussian", params)
    with pytest.raises(ValueError, match="power of two"):
        make_point("gaussian", {"fetch_width": 3})
    r = evaluate_point("gaussian", {"unrol": 2})
    assert r["status"] == "error" and r["error"].startswith("params: ")


def test_fit_against_the_array():
    arch = load_arch("cgra_16x32")
    ok = fit(arch, {"mems": 128, "glb_words": 100})
    assert ok["fits"] is True and ok["fit"]["pes"] == {"used": None, "available": 384}
    over = fit(arch, {"mems": 129, "pes": 385, "glb_words": 16 * 16384 + 1})
    assert over["fits"] is False and over["out_of"] == ["pes", "mems", "glb_words"]
    assert fit(load_arch("pub"), {"mems": 1})["fits"] is None          # no [array] section
    assert fit(arch, {})["fits"] is None
    net = fit(arch, {"mems": 1}, {"PE tiles": (400, 384), "MEM tiles": (1, 128)})
    assert net["fits"] is False and net["out_of"] == ["PE tiles"]


def test_without_the_netlist_stage_pes_are_pending():
    r = evaluate_point("gaussian", SMALL, ("schedule", "map"))
    assert r["status"] == "ok" and r["pes"] is None and PES_PENDING in r["notes"]
    assert r["fits"] is True and r["fit"]["pes"]["used"] is None      # mapping-based check


def test_pnr_stage_places_and_routes_what_fits():
    r = evaluate_point("gaussian", dict(SMALL, arch="cgra_8x8"),
                       ("schedule", "map", "netlist", "pnr"))
    assert r["status"] == "ok" and r["pnr_check"] == "pass", r
    assert r["wirelength"] > 0 and r["bitstream_words"] > 0 and "pnr" in r["seconds"]
    big = evaluate_point("harris", {"arch": "cgra_4x4"}, ("schedule", "map", "netlist", "pnr"))
    assert big["status"] == "does-not-fit" and big.get("place_seconds") is None
    assert "pnr: not run: the netlist does not fit the array" in big["notes"]
    r = evaluate_point("gaussian", SMALL, ("schedule", "map", "pnr"))
    assert r["status"] == "error" and "needs the netlist stage" in r["error"]


def test_cli_json_plot_and_errors(tmp_path, capsys):
    plot = tmp_path / "sweep.png"
    args = ["sweep", "gaussian", "--size", "width=16", "--size", "height=12", "--param",
            "unroll=1,2", "--workers", "0", "--no-cache", "--quiet"]
    assert main(args + ["--json", "--plot", str(plot)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["unroll"] for p in out] == [1, 2]
    for p in out:
        assert {"unroll", "pes", "mems", "sram_words", "cycles", "fits", "seconds",
                "error"} <= set(p)
    assert plot.read_bytes()[:4] == b"\x89PNG"
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "2 points: 0 from the cache, 2 computed" in text
    for bad, needle in ((["--param", "unroll"], "NAME=V1,V2"),
                        (["--param", "unrol=1"], "no size 'unrol'"),
                        (["--param", "arch=cgra_1x1"], "unknown arch 'cgra_1x1'; shipped archs: cgra_16x32"),
                        (["--stages", "schedule,simulate"], "unknown stage"),
                        (["--stages", "schedule,sim"], "the sim stage needs the pnr stage"),
                        (["--workers", "-1"], "--workers"),
                        (["--plot", str(tmp_path / "no" / "p.png")], "does not exist")):
        assert main(["sweep", "gaussian", "--workers", "0", "--no-cache"] + bad) == 2
        err = capsys.readouterr().err
        assert err.startswith("ubc: error: ") and err.count("\n") == 1 and needle in err, err
    assert not (tmp_path / "no").exists()


def test_unreachable_scheduler_is_a_one_line_error():
    with pytest.raises(SweepError, match="cannot connect to the Dask scheduler at tcp://"):
        with engine.dask_client("tcp://127.0.0.1:9", timeout="1s"):
            pass


# --- a point whose whole program does not fit one run: runs of one output tile (docs/tiling.md)

TILED = dict(width=24, height=20, cycle_width=8)     # 488 cycles whole, the counter's max 255


def test_a_point_past_the_cycle_counter_runs_as_tiles():
    r = evaluate_point("gaussian", dict(TILED, arch="cgra_8x8"))
    assert r["status"] == "ok" and r["fits"] is True and r["error"] is None, r
    assert r["runs"] == 3 and r["tile"] == [22, 6]
    assert r["cycles_per_run"] == r["cycles_predicted"] <= 255
    assert r["cycles"] == r["runs"] * r["cycles_per_run"]
    assert r["notes"][0].startswith("tiled: whole program: schedule of gaussian needs 488 "
                                    "cycles, beyond the 8-bit cycle counter")
    assert "tiling" in r["seconds"]


def test_a_point_that_fits_one_run_is_not_tiled():
    r = evaluate_point("gaussian", dict(TILED, arch="cgra_8x8", cycle_width=9, width=12))
    assert r["status"] == "ok" and "runs" not in r and "tiling" not in r["seconds"]


def test_negative_control_a_tile_short_of_array_resources_does_not_fit():
    """Tiling cures the counter, not a lack of hardware: on cgra_4x4 every tile of the same
    point needs 13 PE tiles of 12; the point is "does-not-fit" naming them, not tiled."""
    r = evaluate_point("gaussian", dict(TILED, arch="cgra_4x4"))
    assert r["status"] == "does-not-fit" and r["out_of"] == ["PE tiles"], r
    assert r["fit"]["PE tiles"] == {"used": 13, "available": 12}
    assert "runs" not in r and r["error"] is None
    assert "tiled: gaussian: no tile fits cgra_4x4" in r["notes"][0]


def test_a_reduction_past_the_counter_runs_as_channel_blocks():
    """One output element of 128 input channels: no output tile is smaller than the whole,
    so the sweep runs the layer as channel blocks (docs/tiling.md "Channel blocks"): the
    largest block whose run fits the 10-bit counter (64 and 32 do not)."""
    r = evaluate_point("resnet", dict(width=1, height=1, in_channels=128, out_channels=1,
                                      ic_unroll=1, oc_unroll=1, arch="cgra_4x4",
                                      cycle_width=10))
    assert r["status"] == "ok" and r["fits"] is True, r
    assert r["channel_blocks"] == r["runs"] == 8 and r["tile"] is None
    assert r["cycles_per_run"] == r["cycles_predicted"] <= 1023
    assert r["cycles"] == 8 * r["cycles_per_run"]
    assert "8 channel blocks of 16 in_channels" in r["notes"][0]


@pytest.mark.regress
def test_a_buffer_the_mapping_refuses_for_its_size_runs_as_tiles():
    """A line buffer of 2 x 70,000 words needs 206 chained memories, the chain bits address
    16: the mapping refuses the whole program, the point runs as output tiles (``make
    regress``: about 90 s)."""
    r = evaluate_point("gaussian", dict(width=70000, height=6, arch="cgra_8x8"))
    assert r["status"] == "ok" and r["fits"] is True, r
    assert r["runs"] == 103 and r["tile"] == [680, 4]
    assert "needs 206 chained memories" in r["notes"][0]
