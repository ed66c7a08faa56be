"""Buffer mapping onto dual-port SRAMs (``[mem] kind`` ``dp`` / ``dp-pe``; thesis Table 6.1,
§6.1.1): one writer and one reader per memory, the streams on the ``wr``/``rd`` controllers,
checked by the register-driven model against the unified buffer's specification. Negative
controls: a corrupted controller register, a read one cycle after its write, and a buffer with
two writers (a one-line refusal naming the buffer)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from compiler.ir.ubimpl import DPBlock
from compiler.mapping.common import Affine, MappingError
from compiler.mapping.dp_block import late_reads
from compiler.mapping.vectorize import WordStream
from compiler.mapping.pub_model import check_buffer
from compiler.pipeline import compile_app
from ubgen.arch import load_arch
from ubgen.controller import AffineMap, ControllerConfig

DP = load_arch("cgra_dp_16x32")
SIZES = {"gaussian": dict(width=32, height=16), "harris": dict(width=32, height=24),
         "upsample": dict(width=16, height=8)}


def mapped(app: str, sizes: dict | None = None, arch=DP):
    return compile_app(app, arch, SIZES[app] if sizes is None else sizes, until="map")


@pytest.mark.parametrize("app", sorted(SIZES))
def test_apps_map_onto_dual_port_memories_and_check(app):
    r = mapped(app)
    assert not r.refused
    blocks = [b for impl in r.impls.values() for b in impl.dps]
    assert blocks and not any(impl.pubs or impl.register_files for impl in r.impls.values())
    for name, impl in r.impls.items():
        if impl.dps:
            rep = check_buffer(r.buffers[name], impl, DP.pub, mem=DP.mem)
            assert rep.ok and rep.checked > 0, rep.summary()
    for b in blocks:
        assert len(b.inputs) == len(b.outputs) == 1
        assert b.configs["rd"].extents and b.configs["wr"].extents


def test_table_7_3_counts_at_full_size():
    """gaussian's two delay lines and harris's ten (thesis Table 7.3: DP+AG 2 and 11); the
    upsample buffer is one memory read by one port."""
    counts = {app: sum(i.mems for i in mapped(app, {}).impls.values())
              for app in ("gaussian", "harris", "upsample")}
    assert counts == {"gaussian": 2, "harris": 10, "upsample": 1}


def test_dual_port_schedule_is_single_word_fetch():
    """The dual-port arch schedules for one-word fetch (thesis §6.3): upsample needs no
    wide-word padding (16391 cycles; the PUB's schedule is 16403)."""
    assert mapped("upsample", {}).schedule.completion < compile_app(
        "upsample", "cgra_16x32", until="schedule").schedule.completion


def test_negative_control_corrupted_controller_register():
    """The write controller's address start moved by one: the model sees wrong words."""
    r = mapped("gaussian")
    name, impl = next((n, i) for n, i in r.impls.items() if i.dps)
    blk = impl.dps[0]
    wr = blk.configs["wr"]
    bad_wr = ControllerConfig(wr.extents, wr.schedule, {"addr": AffineMap(
        wr.addresses["addr"].start + 1, wr.addresses["addr"].strides)})
    bad = replace(impl, dps=[replace(blk, configs={**blk.configs, "wr": bad_wr})]
                  + impl.dps[1:])
    rep = check_buffer(r.buffers[name], bad, DP.pub, mem=DP.mem)
    assert not rep.ok and rep.mismatches


def test_late_reads_sees_a_read_one_cycle_after_its_write():
    w = WordStream("w", (8,), Affine(0, (1,)), Affine(0, (1,)))
    ok = WordStream("r", (8,), Affine(2, (1,)), Affine(0, (1,)))
    late = WordStream("r", (8,), Affine(1, (1,)), Affine(0, (1,)))
    assert late_reads(w, ok, 16) == []
    assert late_reads(w, late, 16) and "1 cycle(s) after its write" in late_reads(w, late, 16)[0]
    # a circular buffer too small: word 0 is overwritten by word 4 before its read at cycle 6
    far = WordStream("r", (8,), Affine(6, (1,)), Affine(0, (1,)))
    assert "overwritten" in late_reads(w, far, 4)[0]


def test_two_writers_are_refused_in_one_line():
    """A bank with two writers cannot sit on one write port: resnet's accumulator (init and
    update writes) is refused with the buffer's name."""
    r = compile_app("resnet", DP, dict(width=4, height=4, in_channels=4, out_channels=4,
                                       ic_unroll=2, oc_unroll=2), until="map")
    assert r.refused
    name, why = next(iter(r.refused.items()))
    assert why.startswith(f"buffer {name}:") and "\n" not in why
    assert "one write" in why or "write port" in why


def test_dp_block_registers_use_the_dp_regmap():
    r = mapped("gaussian")
    blk: DPBlock = next(b for i in r.impls.values() for b in i.dps)
    regs = blk.registers()[0]
    assert regs["chain_en"] == 0 and regs["wr_dim"] == 2 and regs["rd_dim"] == 2
    assert regs["rd_cycle_start"] == blk.configs["rd"].schedule.start
