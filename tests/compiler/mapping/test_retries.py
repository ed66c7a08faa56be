"""What buffer mapping and the pipeline driver do when a buffer is refused for a reason the
compiler can change (thesis §5.2, §5.5.3): readers that conflict on one single-port SRAM get a
bank each (compiler/mapping/map_buffer.py), and a read too soon after its write for the wide-
fetch SRAM gets a larger scheduling gap (compiler/pipeline.map_scheduled). Each retried point
passes the isl verifier (inside schedule_program) and the netlist model against the golden;
each retry has a negative control: without it, the same point is refused with the original
one-line reason."""
from compiler import pipeline
from compiler.mapping import map_buffer as mb
from compiler.mapping.common import SramConflict
from compiler.pipeline import check_result, compile_app

# a_mem's two readers (k_unroll = 2) fetch in the same cycles from one SRAM
GEMM = dict(m=16, n=16, k=16, k_unroll=2, n_unroll=2)
# w_mem's banks receive one of every two writes: their wide words fill twice as slowly
RESNET = dict(width=16, height=16, in_channels=8, out_channels=8, ic_unroll=2, oc_unroll=2)
ARCH = "cgra_16x32"


def test_conflicting_readers_get_a_bank_each():
    res = compile_app("gemm", ARCH, GEMM)
    notes = [n for n in res.impls["a_mem"].notes if "one bank per reader" in n]
    assert notes and res.refused == {}
    assert check_result(res).ok


def test_without_a_bank_per_reader_the_conflict_is_refused(monkeypatch):
    def no_retry(ub, arch, threshold, level, conflict):
        raise conflict
    monkeypatch.setattr(mb, "_bank_per_reader", no_retry)
    res = compile_app("gemm", ARCH, GEMM, until="map")
    assert "no conflict-free single-port SRAM schedule" in res.refused["a_mem"]


def test_a_failed_bank_per_reader_keeps_the_conflict_as_the_reason(monkeypatch):
    # the retry's own refusal (here: any MappingError) is a consequence, not the cause
    def refuse(*a, **k):
        raise mb.MappingError("needs 60 chained memories")
    real = mb._map_buffer
    calls = []

    def first_conflict(ub, arch, threshold, level, read_ports=None):
        if ub.name == "a_mem":
            calls.append(read_ports)
        if read_ports is None and ub.name == "a_mem":
            return real(ub, arch, threshold, level)
        return refuse() if ub.name == "a_mem" else real(ub, arch, threshold, level, read_ports)
    monkeypatch.setattr(mb, "_map_buffer", first_conflict)
    # the streams as written (compiler.passes.stream_split off): a_mem is mapped as written,
    # then retried once with one read port per bank
    res = compile_app("gemm", ARCH, GEMM, until="map", split=False)
    assert calls == [None, 1], calls
    assert "no conflict-free single-port SRAM schedule" in res.refused["a_mem"]
    assert "chained" not in res.refused["a_mem"]


def test_read_too_soon_gets_a_larger_gap():
    res = compile_app("resnet", ARCH, RESNET)
    info = res.scheduled.optimized.info
    assert info["gap_scale"] == {"w_mem": 2}
    assert res.refused == {}
    assert check_result(res).ok


def test_without_the_larger_gap_the_read_is_too_soon(monkeypatch):
    monkeypatch.setattr(pipeline, "MAX_GAP_SCALE", 1)
    res = compile_app("resnet", ARCH, RESNET, until="map")
    assert "too soon after its write" in res.refused["w_mem"]


def test_sram_conflict_is_a_mapping_error():
    assert issubclass(SramConflict, mb.MappingError)
