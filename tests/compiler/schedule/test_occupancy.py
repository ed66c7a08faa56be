"""Compute occupancy (compiler.schedule.occupancy, thesis Figs. 7.6-7.9), the ResNet-18 layers
(apps.resnet.resnet18_layer: kernel size and stride) and the Fig. 7.8 ablation policies."""
from __future__ import annotations

import numpy as np
import pytest

from apps import resnet
from compiler.backend.kernel_map import map_kernel
from compiler.interp import run
from compiler.ir.hw import HwParams
from compiler.schedule.occupancy import instances, occupancy
from compiler.schedule.report import schedule_only
from compiler.sweep.point import evaluate_point

SMALL = dict(width=5, height=4, in_channels=4, out_channels=4, ic_unroll=2, oc_unroll=2)


@pytest.mark.parametrize("ksize,stride", [(3, 2), (7, 2), (1, 1)])
def test_strided_layer_matches_reference(ksize, stride):
    sizes = dict(SMALL, ksize=ksize, stride=stride)
    inputs = resnet.make_inputs(**sizes)
    got, want = run(resnet.build(**sizes), inputs), resnet.reference(inputs, **sizes)
    assert np.array_equal(got["output"], want["output"])
    # negative control: the stride-1 reference over the same input differs
    other = resnet.reference(inputs, **dict(sizes, stride=1))
    assert stride == 1 or not np.array_equal(got["output"], other["output"])


def test_resnet18_layers_are_blocked_8x8():
    assert len(resnet.RESNET18_LAYERS) == 8
    conv1 = resnet.resnet18_layer("conv1")
    assert (conv1["ksize"], conv1["stride"], conv1["in_channels"]) == (7, 2, 8)
    c5 = resnet.resnet18_layer("conv5_1", blocks=2)
    assert c5["in_channels"] == c5["out_channels"] == 16 and c5["ic_unroll"] == 8
    assert resnet.in_size(7, 3, 2) == 15


def occ(policy: str, sizes: dict = SMALL):
    program, sched = schedule_only(resnet.build(**sizes), HwParams(), policy)
    pes = {op.name: map_kernel(op.kernel, 1).pes for op in program.ops()}
    return occupancy(program, sched, pes), program, sched


def test_occupancy_counts_issues_over_pe_cycles():
    o, program, sched = occ("dnn")
    assert 0 < o.value <= 1 and o.cycles == sched.completion
    conv = [op for op in program.ops() if op.name.startswith("conv_")]
    assert conv and all(o.units[op.compute_unit][1] == instances(sched.ops[op.name])
                        for op in conv)
    assert o.busy == sum(p * n for p, n in o.units.values())
    # negative control: PE counts of zero leave nothing to count
    assert occupancy(program, sched, {}).value == 0.0


def test_ablation_policies_order_occupancy():
    """The sequential (HLS) schedule drains every pipeline; double buffering and the loop
    optimizations only shorten the schedule over the same issues (thesis Fig. 7.8)."""
    hls, db, lo = (occ(p)[0] for p in ("hls", "dnn-db", "dnn"))
    assert hls.busy == db.busy == lo.busy and hls.pes == lo.pes
    assert hls.cycles > db.cycles >= lo.cycles
    assert hls.value < db.value <= lo.value


def test_occupancy_point_and_bad_ports():
    r = evaluate_point("resnet", dict(SMALL, policy="dnn", arch="cgra_8x8"), ("occupancy",))
    assert r["status"] == "ok" and 0 < r["occupancy"] <= 1 and r["compute_pes"] > 0
    bad = evaluate_point("resnet", dict(SMALL, ports=3, arch="cgra_8x8"), ("occupancy",))
    assert bad["status"] == "error" and "ports must be 1 or 2" in bad["error"]
