"""Skip a hierarchical block's evaluation when its inputs did not change
(docs/simulation.md "Where the run's time goes").

Verilator calls a hierarchical block through a generated DPI wrapper (``V<block>/<block>.cpp``):
``<block>_protectlib_combo_update`` copies the block's non-clock inputs into the block's model
and calls its ``eval()``, which evaluates all of the block's input-dependent logic (its whole
``ico`` region) every time. The top calls it far more often than the inputs change: at every
top-level evaluation that touches an input of the top (both clock edges), and again every time
the mesh's combinational loops are iterated, for every tile, whether or not that tile's inputs
moved.

:func:`memoise_combo_update` rewrites the wrapper so that ``combo_update`` compares each input
with the value the model already holds and calls ``eval()`` only if one differs (or the model
was never evaluated). This is exact: a Verilated model without timing (no ``--timing``, no
delays) is a deterministic function of its inputs and its state, its state changes only inside
``eval()``, and the clock (changed only by ``seq_update``, which still always evaluates) is not
among the compared inputs; after an ``eval()`` the model has settled (Verilator iterates to a
fixed point), so an ``eval()`` with the same inputs computes the same outputs and changes no
state. The outputs returned are the model's current ones either way.

Two more rewrites, for a block whose generated code reads each of its clocks only as a
rising-edge trigger (:func:`posedge_only`): :func:`skip_falling_edge` (``seq_update`` on a
falling edge records the new clock values where the model keeps its triggers' previous values
instead of evaluating) and, with it, :func:`skip_ico_when_asked` (at a rising edge the model's
``eval()`` skips its input-combinational region, whose inputs are those of the last
evaluation). A block with several clocks (the event-counting model's tiles: ``clk`` and the
counters' ``ubgen_ck``, :mod:`sim.energy.events`) gets them only when every clock qualifies,
and a call of ``seq_update`` in which any clock rises evaluates.
"""
from __future__ import annotations

import re
from pathlib import Path

__all__ = ["memoise_combo_update", "skip_falling_edge", "skip_ico_when_asked", "posedge_only",
           "memoise_build", "WrapperFormatError"]

MARK = "ubgen: combo_update memoised"
FALL_MARK = "ubgen: no evaluation on a falling clock edge"
RISE_MARK = "ubgen: no input-combinational region on a rising clock edge"


class WrapperFormatError(RuntimeError):
    """The generated wrapper does not have the shape this rewrite knows (another Verilator)."""


_FUNC = re.compile(r"(long long (\w+)_protectlib_combo_update\((?:[^)]*)\)\s*\{)(.*?)"
                   r"(\n\s*return handlep__V->m_seqnum\+\+;)", re.S)
_SET_WIDE = re.compile(r"^([ \t]*)(VL_SET_\w_SVLV\(\d+,\s*handlep__V->(\w+),\s*\w+ \+ 0\);)$",
                       re.M)
_SET_BIT = re.compile(r"^([ \t]*)(handlep__V->(\w+) = \(\w+\);)$", re.M)
_EVAL = re.compile(r"^([ \t]*)handlep__V->eval\(\);$", re.M)
_CAST = re.compile(r"^([ \t]*)\w+\* const handlep__V = static_cast<\w+\*>\(vhandlep__V\);$", re.M)
_MEMBER = re.compile(r"^([ \t]*)long long m_seqnum;$", re.M)


def _compare(match: re.Match) -> str:
    indent, stmt, member = match.groups()
    return (f"{indent}{{ const auto ubgen_old__V = handlep__V->{member}; {stmt} "
            f"ubgen_changed__V |= std::memcmp(&ubgen_old__V, &handlep__V->{member}, "
            f"sizeof(ubgen_old__V)) != 0; }}")


def memoise_combo_update(text: str) -> str:
    """The wrapper ``text`` with ``combo_update`` evaluating only on an input change (module
    docstring). Raises :class:`WrapperFormatError` if the text is not a wrapper of the known
    shape (no ``combo_update``, no input assignment, not exactly one ``eval()`` in it, no
    container class); a text already rewritten is returned unchanged."""
    if MARK in text:
        return text
    func = _FUNC.search(text)
    if func is None:
        raise WrapperFormatError("no <block>_protectlib_combo_update ending in "
                                 "'return handlep__V->m_seqnum++;'")
    body = func.group(3)
    if len(_EVAL.findall(body)) != 1:
        raise WrapperFormatError("combo_update does not call handlep__V->eval() exactly once")
    body, wide = _SET_WIDE.subn(_compare, body)
    body, bits = _SET_BIT.subn(_compare, body)
    if wide + bits == 0:
        raise WrapperFormatError("combo_update assigns no input of the model")
    cast = _CAST.search(body)
    if cast is None:
        raise WrapperFormatError("combo_update does not declare handlep__V")
    body = (body[:cast.end()] + f"\n{cast.group(1)}// {MARK}: eval() only when an input "
            f"changed\n{cast.group(1)}bool ubgen_changed__V = !handlep__V->m_ubgen_settled;"
            + body[cast.end():])
    body = _EVAL.sub(r"\1if (ubgen_changed__V) handlep__V->eval();\n"
                     r"\1handlep__V->m_ubgen_settled = true;", body)
    text = text[:func.start(3)] + body + text[func.end(3):]
    text, members = _MEMBER.subn(r"\1long long m_seqnum;\n\1bool m_ubgen_settled = false;", text)
    if members != 1:
        raise WrapperFormatError("no container class with 'long long m_seqnum;'")
    return "#include <cstring>\n" + text


_SEQ = re.compile(r"(long long (\w+)_protectlib_seq_update\((?:[^)]*)\)\s*\{)(.*?)"
                  r"(\n\s*return handlep__V->m_seqnum\+\+;)", re.S)
# The only uses of the clock a posedge-only model makes (Verilator 5's generated code): the
# posedge trigger, the trigger's previous value, the debug check of the clock's width.
_CLOCK_USES = (r"\(\(IData\)\(vlSelfRef\.{c}\)\s*&\s*\(~\s*\(IData\)\(vlSelfRef\."
               r"__Vtrigprevexpr___TOP__{c}__0\)\)\)",
               r"vlSelfRef\.__Vtrigprevexpr___TOP__{c}__0 = vlSelfRef\.{c};",
               r"\(\(vlSelfRef\.{c} & 0xfeU\)\)")


def posedge_only(model_sources: dict[str, str], clock: str) -> bool:
    """Whether the Verilated model whose evaluation code is ``model_sources`` (file name ->
    text of ``V<block>___024root__*.cpp``, not the ``__Slow`` construction code) uses
    ``clock`` only as a rising-edge trigger: exactly one ``posedge`` trigger on it, and no other
    read of it (no falling-edge or both-edge trigger, no logic reading it as data)."""
    text = "\n".join(model_sources.values())
    trigger, prev, width = (re.compile(u.format(c=re.escape(clock))) for u in _CLOCK_USES)
    if len(trigger.findall(text)) != 1 or len(prev.findall(text)) != 1:
        return False
    for use in (trigger, prev, width):
        text = use.sub("", text)
    return re.search(rf"(vlSelfRef\.|vlSelf->|TOP\.){re.escape(clock)}\b", text) is None


def skip_falling_edge(text: str, block: str, rise_ico: bool = False) -> str:
    """The wrapper ``text`` (already :func:`memoise_combo_update`-d) with ``seq_update`` not
    evaluating the model on a call where no clock rises and one falls: it records each
    clock's new value where the model keeps its trigger's previous value
    (``rootp->__Vtrigprevexpr___TOP__<clk>__0``), which is all that evaluation would change
    when the model uses every clock only at its rising edge (:func:`posedge_only`, checked by
    the caller for each clock) and its other inputs are the ones it was last evaluated with
    (the memoised ``combo_update`` evaluates on every change). ``seq_update`` sets one clock,
    or several (the event-counting model's tiles have their counters' clock ``ubgen_ck``
    beside ``clk``): a call in which any of them rises evaluates. With ``rise_ico`` that
    evaluation skips the model's input-combinational region (:func:`skip_ico_when_asked` on
    the model's code): the inputs it computes from are the ones of the last evaluation and,
    the model reading its clocks only at their rising edges, it would compute the same values
    again. Raises :class:`WrapperFormatError` on an unknown shape."""
    if FALL_MARK in text:
        return text
    if MARK not in text:
        raise WrapperFormatError("seq_update is rewritten only after combo_update")
    func = _SEQ.search(text)
    if func is None:
        raise WrapperFormatError("no <block>_protectlib_seq_update")
    body = func.group(3)
    sets = _SET_BIT.findall(body)
    if not sets or len(_EVAL.findall(body)) != 1:
        raise WrapperFormatError("seq_update does not set its clocks and evaluate once")
    clocks, indent = [c[2] for c in sets], sets[0][0]
    rises = " || ".join(f"(!handlep__V->{c} && (svLogic)({c}))" for c in clocks)
    falls = " || ".join(f"(handlep__V->{c} && !(svLogic)({c}))" for c in clocks)
    fall = f"handlep__V->m_ubgen_settled && !({rises}) && ({falls})"
    head = [f"// {FALL_MARK}"]
    if rise_ico:
        head += [f"// {RISE_MARK}", f"const bool ubgen_rise__V = {rises};"]
    head.append(f"const bool ubgen_fall__V = {fall};")
    first = re.search(rf"^{re.escape(indent)}handlep__V->{clocks[0]} = \({clocks[0]}\);$",
                      body, re.M)
    if first is None:
        raise WrapperFormatError(f"seq_update does not assign {clocks[0]} on a line of its own")
    body = body[:first.start()] + "".join(f"{indent}{h}\n" for h in head) + body[first.start():]
    skip = "{ " + " ".join(f"handlep__V->rootp->__Vtrigprevexpr___TOP__{c}__0 = "
                           f"handlep__V->{c};" for c in clocks) + " }"
    flag = f"ubgen_rise_no_ico__V{block}"
    rise = (f"{{ {flag} = ubgen_rise__V && handlep__V->m_ubgen_settled; "
            f"handlep__V->eval(); {flag} = false; }}" if rise_ico else "handlep__V->eval();")
    body = _EVAL.sub(
        lambda m: f"{m.group(1)}if (ubgen_fall__V) {skip}\n"
                  f"{m.group(1)}else {rise}\n{m.group(1)}handlep__V->m_ubgen_settled = true;",
        body)
    text = text[:func.start(3)] + body + text[func.end(3):]
    if rise_ico:
        text = f'extern "C" {{ bool {flag} = false; }}\n' + text
    return f'#include "V{block}___024root.h"\n' + text


_ICO_LOOP = re.compile(r"^([ \t]*)__VicoIterCount = 0U;\n.*?\n[ \t]*\} while "
                       r"\(vlSelfRef\.__VicoPhaseResult\);\n", re.S | re.M)


def skip_ico_when_asked(model: str, block: str) -> str:
    """The model's evaluation code ``model`` (the file holding ``V<block>___024root___eval``)
    with its input-combinational loop run only when ``ubgen_rise_no_ico__V<block>`` (set by the
    wrapper, :func:`skip_falling_edge` with ``rise_ico``) is false. Raises
    :class:`WrapperFormatError` if the function or its loop is not found."""
    head = f"void V{block}___024root___eval(V{block}___024root* vlSelf) {{"
    start = model.find(head)
    if start < 0 or RISE_MARK in model:
        if RISE_MARK in model:
            return model
        raise WrapperFormatError(f"no V{block}___024root___eval")
    loop = _ICO_LOOP.search(model, start)
    if loop is None or model.find("\n}\n", start) < loop.start():
        raise WrapperFormatError(f"V{block}___024root___eval has no input-combinational loop")
    ind = loop.group(1)
    body = loop.group(0)
    return (f'// {RISE_MARK}\nextern "C" bool ubgen_rise_no_ico__V{block};\n'
            + model[:loop.start()] + f"{ind}if (!ubgen_rise_no_ico__V{block}) {{\n" + body
            + f"{ind}}}\n" + model[loop.end():])


def memoise_build(build_dir: Path, blocks: list[str], falling: bool = True,
                  rise_ico: bool = False) -> list[Path]:
    """Rewrite the wrappers of the hierarchical ``blocks`` Verilated into ``build_dir``
    (``V<block>/<block>.cpp``) before they are compiled (:func:`memoise_combo_update`, and with
    ``falling`` :func:`skip_falling_edge` for each block whose model :func:`posedge_only`
    allows, with ``rise_ico`` also :func:`skip_ico_when_asked`); returns the files rewritten.
    Raises :class:`WrapperFormatError` naming the file if
    one is missing or of an unknown shape."""
    done = []
    for block in blocks:
        path = Path(build_dir) / f"V{block}" / f"{block}.cpp"
        if not path.exists():
            raise WrapperFormatError(f"{path}: no wrapper of hierarchical block {block}")
        try:
            new = memoise_combo_update(path.read_text())
            if falling:
                new = _skip_falling_if_posedge_only(new, block, path.parent, rise_ico)
        except WrapperFormatError as e:
            raise WrapperFormatError(f"{path}: {e}") from None
        path.write_text(new)
        done.append(path)
    return done


def _skip_falling_if_posedge_only(text: str, block: str, model_dir: Path,
                                  rise_ico: bool) -> str:
    """``text`` with :func:`skip_falling_edge` when every clock ``seq_update`` sets is read
    by the block's model only as a rising-edge trigger (:func:`posedge_only`), else as it is
    (the memoised ``combo_update`` alone)."""
    seq = _SEQ.search(text)
    clocks = [c[2] for c in _SET_BIT.findall(seq.group(3))] if seq else []
    if not clocks:
        raise WrapperFormatError("seq_update sets no clock")
    sources = {p.name: p.read_text() for p in sorted(model_dir.glob(f"V{block}_*.cpp"))
               if "__Slow" not in p.name}
    if not sources:
        raise WrapperFormatError(f"no evaluation code V{block}___024root__*.cpp")
    if not all(posedge_only(sources, c) for c in clocks):
        return text
    if rise_ico:
        head = f"void V{block}___024root___eval(V{block}___024root* vlSelf) {{"
        name = next((n for n, t in sources.items() if head in t), None)
        if name is None:
            raise WrapperFormatError(f"no V{block}___024root___eval in the model's code")
        (model_dir / name).write_text(skip_ico_when_asked(sources[name], block))
    return skip_falling_edge(text, block, rise_ico)
