"""The simulation side of the end-to-end bundle (sim/bundle.py) and the run's verdict
(sim/array_run.verdict), without Verilator: a well-formed bundle validates against the top's
exported address map, each malformed one is refused with a one-line error naming the field, and
the verdict passes only bit-exact, on-time, complete, error-free observations."""
from __future__ import annotations

import copy
import json

import pytest

from sim.array_run import verdict
from sim.bundle import BundleError, host_plan, load_bundle, tile_spans, validate_bundle
from ubgen.arch import load_arch
from ubgen.top.cgra_top import CONTROL, top_address_map, tile_address

ARCH = load_arch("cgra_4x4")
AMAP = json.loads(json.dumps(top_address_map(ARCH)))


def good() -> dict:
    return {"app": "t", "arch": ARCH.name,
            "bitstream": [[tile_address(0, 1), 5], [tile_address(3, 0), 1]],
            "glb_inputs": [[0, 7], [1, 0xFFFF]], "glb_outputs": [[4096, 3], [4097, 4]],
            "cycles_predicted": 10, "done_cycle": 11, "output_writes": 2}


def test_good_bundle_validates_and_loads(tmp_path):
    assert validate_bundle(good(), AMAP)["app"] == "t"
    p = tmp_path / "b.json"
    p.write_text(json.dumps(good()))
    assert load_bundle(p, AMAP) == good()


@pytest.mark.parametrize("mutate,words", [
    (lambda b: b.pop("glb_outputs"), "lacks field"),
    (lambda b: b.update(done_cycle=10), "done_cycle"),
    (lambda b: b.update(cycles_predicted=-1), "cycles_predicted"),
    (lambda b: b["bitstream"].append([tile_address(999, 0), 1]), "outside the address map"),
    (lambda b: b["bitstream"].append([tile_address(0, 1) + 2, 1]), "outside the address map"),
    (lambda b: b["glb_inputs"].append([0, 8]), "two different values"),
    (lambda b: b["glb_inputs"].append([2, 1 << 16]), "does not fit 16 bits"),
    (lambda b: b["glb_outputs"].append([ARCH.glb.banks * ARCH.glb.bank_words, 0]),
     "outside the address map"),
    (lambda b: b["bitstream"].append([1, 2, 3]), "pair"),
    (lambda b: b.update(output_writes=1), "output_writes"),
    (lambda b: b.update(arch="cgra_8x8"), "arch"),
    (lambda b: b.update(bitstream=[]), "empty"),
])
def test_malformed_bundles_are_refused_in_one_line(mutate, words):
    b = good()
    mutate(b)
    with pytest.raises(BundleError) as exc:
        validate_bundle(b, AMAP)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_unreadable_bundle_file_is_one_line(tmp_path):
    p = tmp_path / "b.json"
    p.write_text("{not json")
    with pytest.raises(BundleError, match="cannot read bundle"):
        load_bundle(p)


def test_host_plan_from_the_address_map():
    plan = host_plan(AMAP)
    assert plan["control"]["LAST_WRITE"] == 4 * next(r.index for r in CONTROL
                                                      if r.name == "LAST_WRITE")
    assert plan["control_access"]["WRITES"] == "ro" and plan["control_access"]["START"] == "rw"
    spans = tile_spans(AMAP)
    assert len(spans) == len(AMAP["tiles"]["list"])
    pe = next(t["tile_id"] for t in AMAP["tiles"]["list"] if t["kind"] == "pe")
    assert spans[pe] == len(AMAP["tiles"]["kinds"]["pe"]["registers"])


def observed(**kw) -> dict:
    res = {"completed": True, "readback_mismatches": 0, "readback_first": [],
           "output_mismatches": 0, "output_first": [], "writes": 2, "first_write": 4,
           "last_write": 10, "error": 0, "cycles_predicted": 10, "output_writes": 2}
    res.update(kw)
    return res


def test_verdict_passes_a_clean_run():
    v = verdict(observed())
    assert v == {"match": True, "cycles_measured": 10, "passed": True, "failures": []}


@pytest.mark.parametrize("kw,words", [
    (dict(output_mismatches=1, output_first=["GLB word 4096"]), "output words differ"),
    (dict(readback_mismatches=1, readback_first=["0x80000004"]), "read back differently"),
    (dict(last_write=11), "cycles measured 11 != predicted 10"),
    (dict(writes=3), "GLB writes 3 != 2"),
    (dict(writes=0), "cycles measured None"),
    (dict(error=2), "ERROR register = 2"),
    (dict(completed=False, abort="bus hang: x"), "bus hang"),
    (dict(stress_mismatches=1, stress_first=["read 0x0 response"]), "random traffic"),
])
def test_verdict_fails_each_wrong_observation(kw, words):
    v = verdict(observed(**kw))
    assert not v["passed"] and any(words in f for f in v["failures"]), v


def test_windows_are_write_only_ranges_of_the_host_plan():
    """MEM tiles' SRAM windows are written through the configuration port and not read back
    (docs/top.md): the host plan lists one range per MEM tile, covering exactly the window."""
    from sim.bundle import write_only_ranges
    from sim.tb.test_e2e import readable
    ranges = write_only_ranges(AMAP)
    mems = [t for t in AMAP["tiles"]["list"] if t["kind"] == "mem"]
    win = AMAP["tiles"]["kinds"]["mem"]["windows"][0]
    assert len(ranges) == len(mems) > 0
    first = mems[0]["base"] + 4 * win["offset"]
    assert [first, first + 4 * (win["size"] - 1)] in ranges
    ok = readable(host_plan(AMAP))
    assert not ok(first) and not ok(first + 4 * (win["size"] - 1))
    assert ok(first - 4) and ok(first + 4 * win["size"]) and ok(tile_address(0, 0))
