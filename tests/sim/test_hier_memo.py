"""The hierarchical blocks' wrapper rewrite (sim/hier_memo.py): the rewritten ``combo_update``
evaluates the block exactly when an input changed, checked by compiling the rewritten wrapper
against a stand-in model that counts its evaluations."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from sim.hier_memo import (FALL_MARK, MARK, RISE_MARK, WrapperFormatError, memoise_build,
                           memoise_combo_update, posedge_only, skip_falling_edge,
                           skip_ico_when_asked)

# The shape of Verilator 5's DPI wrapper of a hierarchical block (`V<block>/<block>.cpp`) for a
# block ``blk`` with a 1-bit input ``a``, a 96-bit input ``w``, a clock and a 32-bit output.
WRAPPER = """\
#include "Vblk.h"
#include "verilated_dpi.h"

class Vblk_container: public Vblk {
  public:
    long long m_seqnum;
    Vblk_container(const char* scopep__V):
    Vblk(scopep__V) {}
};

extern "C" {
    void* blk_protectlib_create(const char* scopep__V) {
        Vblk_container* const handlep__V = new Vblk_container{scopep__V};
        return handlep__V;
    }

    long long blk_protectlib_combo_update(
        void* vhandlep__V,
        svLogic a,
        const svLogicVecVal* w,
        svLogicVecVal* o
    ) {
        Vblk_container* const handlep__V = static_cast<Vblk_container*>(vhandlep__V);
        handlep__V->a = (a);
        VL_SET_W_SVLV(96,  handlep__V->w, w + 0);
        handlep__V->eval();
        VL_SET_SVLV_I(32, o, handlep__V->o);
        return handlep__V->m_seqnum++;
    }

    long long blk_protectlib_seq_update(
        void* vhandlep__V,
        svLogic clk,
        svLogicVecVal* o
    ) {
        Vblk_container* const handlep__V = static_cast<Vblk_container*>(vhandlep__V);
        handlep__V->clk = (clk);
        handlep__V->eval();
        VL_SET_SVLV_I(32, o, handlep__V->o);
        return handlep__V->m_seqnum++;
    }
}
"""

# A stand-in for the Verilated model: o = a + w[0] + w[2] + state, state counts rising edges
# (detected as Verilator does, against the clock's value at the previous evaluation, which it
# keeps in its root).
ROOT = """\
#pragma once
#include "verilated.h"
struct Vblk___024root { CData __Vtrigprevexpr___TOP__clk__0 = 0; };
"""
MODEL = """\
#pragma once
#include "Vblk___024root.h"
extern "C" bool ubgen_rise_no_ico__Vblk __attribute__((weak));
struct Vblk {
    CData a = 0, clk = 0;
    VlWide<3> w{};
    IData o = 0, state = 0, in_part = 0;
    int evals = 0;
    Vblk___024root root;
    Vblk___024root* const rootp = &root;
    explicit Vblk(const char*) {}
    void eval() {
        ++evals;
        // the input-combinational region, skipped when the wrapper says so
        if (!(&ubgen_rise_no_ico__Vblk && ubgen_rise_no_ico__Vblk)) in_part = a + w[0] + w[2];
        if (clk && !rootp->__Vtrigprevexpr___TOP__clk__0) ++state;
        rootp->__Vtrigprevexpr___TOP__clk__0 = clk;
        o = in_part + state;
    }
};
"""

# Calls in the order the top makes them; prints the evaluations and outputs after each.
MAIN = """\
#include <cstdio>
#include "Vblk.h"
#include "verilated_dpi.h"
extern "C" {
void* blk_protectlib_create(const char*);
long long blk_protectlib_combo_update(void*, svLogic, const svLogicVecVal*, svLogicVecVal*);
long long blk_protectlib_seq_update(void*, svLogic, svLogicVecVal*);
}
int main() {
    void* h = blk_protectlib_create("top.blk");
    Vblk* m = static_cast<Vblk*>(h);
    svLogicVecVal w[3] = {{1, 0}, {0, 0}, {0, 0}}, o[1] = {{0, 0}};
    auto combo = [&](int a) {
        blk_protectlib_combo_update(h, a, w, o);
        std::printf("%d %u\\n", m->evals, o[0].aval);
    };
    auto seq = [&](int clk) {
        blk_protectlib_seq_update(h, clk, o);
        std::printf("%d %u\\n", m->evals, o[0].aval);
    };
    combo(0);           // first call: evaluates
    combo(0);           // same inputs: skipped
    combo(1);           // a changed
    w[2].aval = 8;      // the last word of the wide input changed
    combo(1);
    combo(1);           // same again: skipped
    seq(1);             // a clock edge always evaluates (state 1)
    combo(1);           // after it, same inputs: skipped, the state's output kept
    seq(0);             // falling edge
    w[0].aval = 2;
    combo(1);
    seq(1);             // the next rising edge (state 2)
    seq(0);
    seq(1);             // and the one after (state 3)
    return 0;
}
"""

# (evaluations so far, output) after each call of MAIN: memoised combo_update, then also
# without evaluations on a falling edge.
EXPECTED = [(1, 1), (1, 1), (2, 2), (3, 10), (3, 10), (4, 11), (4, 11), (5, 11), (6, 12),
            (7, 13), (8, 13), (9, 14)]
EXPECTED_FALL = [(1, 1), (1, 1), (2, 2), (3, 10), (3, 10), (4, 11), (4, 11), (4, 11), (5, 12),
                 (6, 13), (6, 13), (7, 14)]


def _cxx(*args: str) -> None:
    from sim.runner import setup_verilator
    include = setup_verilator() / "include"
    subprocess.run([shutil.which("g++") or "c++", "-std=c++17", "-O0", "-I", str(include),
                    "-I", str(include / "vltstd"), *args],
                   check=True, capture_output=True, text=True)


def _stand_in(d, model: str, root: str, main: str):
    """A stand-in model's headers and its calling program, compiled, in ``d``."""
    (d / "Vblk.h").write_text(model)
    (d / "Vblk___024root.h").write_text(root)
    (d / "main.cpp").write_text(main)
    _cxx("-I", str(d), "-c", str(d / "main.cpp"), "-o", str(d / "main.o"))
    return d


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """The stand-in model's headers and the calling program, compiled once."""
    return _stand_in(tmp_path_factory.mktemp("harness"), MODEL, ROOT, MAIN)


def _run(harness, tmp_path, wrapper: str) -> list[tuple[int, int]]:
    (tmp_path / "blk.cpp").write_text(wrapper)
    exe = tmp_path / "harness"
    _cxx("-I", str(harness), str(tmp_path / "blk.cpp"), str(harness / "main.o"), "-o", str(exe))
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return [tuple(map(int, line.split())) for line in out.splitlines()]


def test_memoised_wrapper_evaluates_exactly_when_an_input_changed(harness, tmp_path):
    got = _run(harness, tmp_path, memoise_combo_update(WRAPPER))
    assert got == EXPECTED


def test_falling_edges_are_not_evaluated_and_rising_edges_still_are(harness, tmp_path):
    got = _run(harness, tmp_path, skip_falling_edge(memoise_combo_update(WRAPPER), "blk"))
    assert got == EXPECTED_FALL


def test_rising_edges_without_the_input_region_compute_the_same(harness, tmp_path):
    wrapper = skip_falling_edge(memoise_combo_update(WRAPPER), "blk", rise_ico=True)
    got = _run(harness, tmp_path, wrapper)
    assert got == EXPECTED_FALL


def test_the_harness_sees_the_input_region_skipped_after_an_input_change(harness, tmp_path):
    """Negative control: skipping the input region on an evaluation whose inputs changed (here
    every combo_update) answers with the old inputs' values, and the harness sees it."""
    good = skip_falling_edge(memoise_combo_update(WRAPPER), "blk", rise_ico=True)
    broken = good.replace("if (ubgen_changed__V) handlep__V->eval();",
                          "if (ubgen_changed__V) { ubgen_rise_no_ico__Vblk = "
                          "handlep__V->m_ubgen_settled; handlep__V->eval(); "
                          "ubgen_rise_no_ico__Vblk = false; }")
    assert broken != good
    got = _run(harness, tmp_path, broken)
    assert got[2] == (2, 1)             # a changed, its region skipped: the old output
    assert got != EXPECTED_FALL


def test_the_model_runs_its_input_region_only_when_not_asked_to_skip():
    model = """void Vblk___024root___eval(Vblk___024root* vlSelf) {
    // Body
    __VicoIterCount = 0U;
    vlSelfRef.__VicoFirstIteration = 1U;
    do {
        vlSelfRef.__VicoPhaseResult = Vblk___024root___eval_phase__ico(vlSelf);
    } while (vlSelfRef.__VicoPhaseResult);
    __VnbaIterCount = 0U;
}
"""
    new = skip_ico_when_asked(model, "blk")
    assert new.count("if (!ubgen_rise_no_ico__Vblk) {") == 1
    assert new.index("if (!ubgen_rise_no_ico__Vblk)") < new.index("__VicoIterCount = 0U;")
    assert new.index("} while (vlSelfRef.__VicoPhaseResult);\n    }\n") < new.index(
        "__VnbaIterCount")
    assert RISE_MARK in new and skip_ico_when_asked(new, "blk") == new
    with pytest.raises(WrapperFormatError, match="no Vother___024root___eval"):
        skip_ico_when_asked(model, "other")
    with pytest.raises(WrapperFormatError, match="no input-combinational loop"):
        skip_ico_when_asked(model.replace("__VicoIterCount = 0U;", ""), "blk")


def test_the_harness_sees_a_falling_edge_skip_that_loses_the_edge(harness, tmp_path):
    """Negative control: skipping the falling edge without recording the clock where the model
    detects edges makes the model miss the next rising edge."""
    good = skip_falling_edge(memoise_combo_update(WRAPPER), "blk")
    broken = good.replace("if (ubgen_fall__V) { handlep__V->rootp->__Vtrigprevexpr___TOP__clk__0"
                          " = handlep__V->clk; }", "if (ubgen_fall__V) ;")
    assert broken != good
    got = _run(harness, tmp_path, broken)
    assert got[11] == (7, 13)           # a rising edge right after a skipped fall: missed
    assert got != EXPECTED_FALL


def test_the_harness_sees_a_wrapper_that_misses_an_input(harness, tmp_path):
    """Negative control: a rewrite that does not compare the wide input answers with a stale
    output after that input changed, and the harness sees it."""
    broken = memoise_combo_update(WRAPPER).replace(
        "ubgen_changed__V |= std::memcmp(&ubgen_old__V, &handlep__V->w,",
        "ubgen_changed__V |= 0 * std::memcmp(&ubgen_old__V, &handlep__V->w,")
    assert broken != memoise_combo_update(WRAPPER)
    got = _run(harness, tmp_path, broken)
    assert got[3] == (2, 2)             # w changed, not evaluated: the old output
    assert got != EXPECTED


def test_the_unrewritten_wrapper_evaluates_on_every_call():
    """What the rewrite replaces: every combo_update calls eval() unconditionally."""
    new = memoise_combo_update(WRAPPER)
    assert WRAPPER.count("handlep__V->eval();") == 2
    assert new.count("if (ubgen_changed__V) handlep__V->eval();") == 1
    assert new.count("        handlep__V->eval();") == 1          # seq_update's, unchanged
    assert new.count("std::memcmp(") == 2                           # a and w
    assert memoise_combo_update(new) == new                         # idempotent
    assert MARK in new


@pytest.mark.parametrize("mangle, why", [
    (lambda t: t.replace("_protectlib_combo_update(", "_protectlib_other("), "no <block>"),
    (lambda t: t.replace("        handlep__V->eval();\n        VL_SET_SVLV_I(32, o, "
                         "handlep__V->o);\n        return handlep__V->m_seqnum++;\n    }\n\n"
                         "    long long blk_protectlib_seq",
                         "        VL_SET_SVLV_I(32, o, handlep__V->o);\n        return "
                         "handlep__V->m_seqnum++;\n    }\n\n    long long blk_protectlib_seq", 1),
     "exactly once"),
    (lambda t: t.replace("        handlep__V->a = (a);\n        VL_SET_W_SVLV(96,  handlep__V->w,"
                         " w + 0);\n", ""), "assigns no input"),
    (lambda t: t.replace("long long m_seqnum;", "long m_seqnum;"), "container class"),
])
def test_an_unknown_wrapper_shape_is_refused(mangle, why):
    text = mangle(WRAPPER)
    assert text != WRAPPER
    with pytest.raises(WrapperFormatError, match=why):
        memoise_combo_update(text)


def test_a_missing_wrapper_is_refused(tmp_path):
    (tmp_path / "Vblk").mkdir()
    (tmp_path / "Vblk" / "blk.cpp").write_text(WRAPPER)
    assert memoise_build(tmp_path, ["blk"], falling=False) == [tmp_path / "Vblk" / "blk.cpp"]
    assert "if (ubgen_changed__V)" in (tmp_path / "Vblk" / "blk.cpp").read_text()
    with pytest.raises(WrapperFormatError, match="no wrapper of hierarchical block other"):
        memoise_build(tmp_path, ["other"])


POSEDGE_MODEL = """\
    vlSelfRef.__VactTriggered[0U] = (QData)((IData)(
                                                    ((IData)(vlSelfRef.clk) 
                                                     & (~ (IData)(vlSelfRef.__Vtrigprevexpr___TOP__clk__0)))));
    vlSelfRef.__Vtrigprevexpr___TOP__clk__0 = vlSelfRef.clk;
    if (VL_UNLIKELY(((vlSelfRef.clk & 0xfeU)))) {
"""


@pytest.mark.parametrize("extra, expected", [
    ("", True),
    # negative controls: a falling-edge trigger, the clock read as data
    ("    x = ((~ (IData)(vlSelfRef.clk)) & (IData)(vlSelfRef.__Vtrigprevexpr___TOP__clk__0));\n",
     False),
    ("    vlSelfRef.q = vlSelfRef.clk;\n", False),
])
def test_only_a_posedge_only_model_gets_the_falling_edge_skip(tmp_path, extra, expected):
    sources = {"Vblk___024root__0.cpp": POSEDGE_MODEL + extra}
    assert posedge_only(sources, "clk") is expected
    assert posedge_only({"Vblk___024root__0.cpp": ""}, "clk") is False     # no trigger at all
    (tmp_path / "Vblk").mkdir()
    (tmp_path / "Vblk" / "blk.cpp").write_text(WRAPPER)
    (tmp_path / "Vblk" / "Vblk___024root__0.cpp").write_text(POSEDGE_MODEL + extra)
    (tmp_path / "Vblk" / "Vblk___024root__0__Slow.cpp").write_text("vlSelf->clk = 0;\n")
    memoise_build(tmp_path, ["blk"], falling=True)
    text = (tmp_path / "Vblk" / "blk.cpp").read_text()
    assert MARK in text
    assert (FALL_MARK in text) is expected


# The event-counting model's tiles (sim/energy/events.py) have two clocks: ``clk`` and the
# counters' ``ubgen_ck`` (the same net at the top). A stand-in with a counter clocked by the
# second clock that adds the input region's value at each of its rising edges, as the event
# counters sample the signals at each edge.
WRAPPER2 = WRAPPER.replace(
    "        svLogic clk,\n        svLogicVecVal* o\n",
    "        svLogic ubgen_ck,\n        svLogic clk,\n        svLogicVecVal* o\n").replace(
    "        handlep__V->clk = (clk);\n",
    "        handlep__V->ubgen_ck = (ubgen_ck);\n        handlep__V->clk = (clk);\n")
ROOT2 = """\
#pragma once
#include "verilated.h"
struct Vblk___024root { CData __Vtrigprevexpr___TOP__clk__0 = 0,
                              __Vtrigprevexpr___TOP__ubgen_ck__0 = 0; };
"""
MODEL2 = MODEL.replace("CData a = 0, clk = 0;", "CData a = 0, clk = 0, ubgen_ck = 0;").replace(
    "IData o = 0, state = 0, in_part = 0;", "IData o = 0, state = 0, in_part = 0, events = 0;"
).replace(
    "        rootp->__Vtrigprevexpr___TOP__clk__0 = clk;\n        o = in_part + state;\n",
    "        if (ubgen_ck && !rootp->__Vtrigprevexpr___TOP__ubgen_ck__0) events += in_part;\n"
    "        rootp->__Vtrigprevexpr___TOP__clk__0 = clk;\n"
    "        rootp->__Vtrigprevexpr___TOP__ubgen_ck__0 = ubgen_ck;\n"
    "        o = in_part + state + 1000 * events;\n")
MAIN2 = MAIN.replace(
    "long long blk_protectlib_seq_update(void*, svLogic, svLogicVecVal*);",
    "long long blk_protectlib_seq_update(void*, svLogic, svLogic, svLogicVecVal*);").replace(
    "blk_protectlib_seq_update(h, clk, o);", "blk_protectlib_seq_update(h, clk, clk, o);")


@pytest.fixture(scope="module")
def harness2(tmp_path_factory):
    """The two-clock stand-in's headers and calling program, compiled once."""
    return _stand_in(tmp_path_factory.mktemp("harness2"), MODEL2, ROOT2, MAIN2)


def test_two_clocks_rewritten_answer_as_verilators_wrapper_with_fewer_evaluations(harness2,
                                                                                   tmp_path):
    """Both clocks' triggers recorded on a skipped falling edge: every call answers what
    Verilator's own wrapper answers (the counter clocked by ``ubgen_ck`` included), with one
    evaluation per input change and per rising edge."""
    assert WRAPPER2 != WRAPPER and MODEL2 != MODEL and MAIN2 != MAIN
    reference = _run(harness2, tmp_path, WRAPPER2)
    # o = the input region + clk's rising edges + 1000 x the sum of the input region's values
    # at ubgen_ck's rising edges (10, then 11 twice)
    assert [o for _, o in reference] == [1, 1, 2, 10, 10, 10011, 10011, 10011, 10012, 21013,
                                         21013, 32014]
    for rise_ico in (False, True):
        wrapper = skip_falling_edge(memoise_combo_update(WRAPPER2), "blk", rise_ico=rise_ico)
        assert wrapper.count("__Vtrigprevexpr___TOP__ubgen_ck__0 = handlep__V->ubgen_ck;") == 1
        got = _run(harness2, tmp_path, wrapper)
        assert [o for _, o in got] == [o for _, o in reference]
        assert [n for n, _ in got] == [n for n, _ in EXPECTED_FALL]
    assert [n for n, _ in reference] == list(range(1, 13))    # Verilator's: every call


def test_the_harness_sees_a_skipped_fall_that_forgets_the_second_clock(harness2, tmp_path):
    """Negative control: a rewrite that records only ``clk`` on a skipped falling edge makes the
    model miss the counters' next rising edge, and the outputs differ from Verilator's
    wrapper's."""
    good = skip_falling_edge(memoise_combo_update(WRAPPER2), "blk")
    broken = good.replace(" handlep__V->rootp->__Vtrigprevexpr___TOP__ubgen_ck__0 = "
                          "handlep__V->ubgen_ck;", "")
    assert broken != good
    got = _run(harness2, tmp_path, broken)
    reference = _run(harness2, tmp_path, WRAPPER2)
    assert got[11] == (7, 21014)        # the rising edge right after a skipped fall: missed
    assert reference[11] == (12, 32014)


@pytest.mark.parametrize("extra, expected", [
    ("", True),
    # negative control: the counters' clock read as data
    ("    vlSelfRef.q = vlSelfRef.ubgen_ck;\n", False),
])
def test_a_two_clock_block_gets_the_skip_only_when_both_clocks_qualify(tmp_path, extra,
                                                                       expected):
    model = POSEDGE_MODEL + POSEDGE_MODEL.replace("clk", "ubgen_ck") + extra
    assert posedge_only({"m.cpp": model}, "clk") is True
    assert posedge_only({"m.cpp": model}, "ubgen_ck") is expected
    (tmp_path / "Vblk").mkdir()
    (tmp_path / "Vblk" / "blk.cpp").write_text(WRAPPER2)
    (tmp_path / "Vblk" / "Vblk___024root__0.cpp").write_text(model)
    memoise_build(tmp_path, ["blk"], falling=True)
    text = (tmp_path / "Vblk" / "blk.cpp").read_text()
    assert MARK in text
    assert (FALL_MARK in text) is expected


def test_a_clock_assigned_from_another_name_is_refused():
    """Negative control of the falling-edge rewrite's shape check: a ``seq_update`` whose clock
    member is assigned from an argument of another name is not a shape it knows."""
    text = memoise_combo_update(WRAPPER).replace("handlep__V->clk = (clk);",
                                                 "handlep__V->clk = (clock);")
    assert text != memoise_combo_update(WRAPPER)
    with pytest.raises(WrapperFormatError, match="does not assign clk on a line of its own"):
        skip_falling_edge(text, "blk")
