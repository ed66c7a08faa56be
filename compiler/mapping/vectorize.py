"""Vectorization for the wide-fetch single-port SRAM (thesis §5.5, Figs. 5.5–5.8; paper Fig. 9).

Input: the streams of one physical buffer (at most ``input_ports`` writers and ``output_ports``
readers), each a :class:`WordStream`: a box iteration domain, an affine cycle and an affine
*linear word address* (after :mod:`.linearize`). Output: the affine configuration of every PUB
controller (:class:`ubgen.controller.ControllerConfig`), named like ``ubgen.pub.pub_layouts``.

Write side (§5.5.1). The innermost dimension is strip-mined, ``x -> (x % FW, x / FW)``:
``in2agg`` keeps the port's domain and schedule and writes AGG word ``x % FW`` of slot
``(word number) mod agg_depth``; ``agg2sram`` iterates ``(x / FW, outer...)`` and writes the wide
word ``address / FW`` once the last lane has arrived (one cycle later: the AGG write of cycle
``c`` is visible at ``c + 1``). A row whose length is not a multiple of FW is padded by one
partial wide word whose extra lanes fall into the padded row pitch (:func:`.linearize
.offset_vector`).

Read side (§5.5.2). The fetched dimension ``v`` is the innermost one with address stride 1 such
that everything inside it stays within the TB's *usable capacity* (``TB words - FW``): inner
loops (the window of a sliding-window read, example A of Fig. 5.7) are served from the TB and
disappear from the SRAM read domain. ``sram2tb`` iterates ``(v_o, outer...)`` over
``F = floor((a0 % FW + E_v - 1 + span) / FW) + 1`` wide words per row (one extra, padded, fetch
when the window is not aligned: eqs. 5.25–5.32), each into TB slot ``word mod tb_depth``;
``tb2out`` reads TB word ``address mod TB words``. Dimensions outside ``v`` must advance by
whole wide words plus a lane shift: a row shifted by an outer loop (example B of Fig. 5.7, the
window loop ``dx`` outside the row ``x``; reuse distance 31 > usable capacity 4) is fetched
again for every ``dx`` with ``F`` fetches from the row's first word, padded for the largest
shift (Fig. 5.8: 9 fetches of a 32-word row for ``dx`` in [0, 5)), and read from the TB at
``(x + dx) mod TB words`` -- the linearization ``(1, 36) mod 8 = (1, 4)`` of §5.6. The thesis
starts the fetches of ``dx >= 4`` one word later (eq. 5.36, ``SRAM(x_o + dx_o)``); an affine
controller over the box ``(x, dx)`` cannot, so the shift stays in the TB address (eq. 5.41). The
shift plus the window must fit the usable TB; the exact checks below decide.

Scheduling (§5.5.3). ``agg2sram`` fires ``1 + d_w`` cycles after its word's last AGG write and
``sram2tb`` fires ``2 + d_r`` cycles before the first TB read of its word (the TB write lands at
the end of the cycle after the SRAM read). The slacks ``d_w, d_r >= 0`` are searched, writes first
(by total slack) then reads greedily, smallest first, so that no two SRAM accesses share a cycle
(the SRAM has one port) and every TB read finds its word (:func:`unserved_reads`); both are
checked exactly over all fires.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ubgen.arch import PUBParams
from ubgen.controller import AffineMap, ControllerConfig, EncodeError, fit_levels
from ubgen.pub import pub_layouts
from ubgen.pub.spec import agg_slacks

from .common import Affine, MappingError, NotWideWord, SramConflict, TooSoon


@dataclass(frozen=True)
class WordStream:
    """One port of a physical buffer: ``extents`` innermost first, cycle and linear word
    address as affine functions of the iteration."""
    name: str
    extents: tuple[int, ...]
    time: Affine
    addr: Affine
    elem: Affine | None = None      # element identity (unreduced linear address), for checks

    @property
    def element(self) -> Affine:
        return self.elem if self.elem is not None else self.addr

    def squeeze(self) -> "WordStream":
        """Drop dimensions of extent 1 (they only shift the start)."""
        keep = [d for d, e in enumerate(self.extents) if e > 1]
        if not keep:
            keep = [0]
        pick = lambda a: Affine(a.start, tuple(a.strides[d] for d in keep))   # noqa: E731
        return WordStream(self.name, tuple(self.extents[d] for d in keep), pick(self.time),
                          pick(self.addr), None if self.elem is None else pick(self.elem))


def enumerate_affine(extents, aff: Affine) -> np.ndarray:
    """Values of ``aff`` over the box, in iteration order (innermost fastest)."""
    vals = np.full(1, aff.start, dtype=np.int64)
    for e, s in reversed(list(zip(extents, aff.strides))):
        vals = (vals[:, None] + s * np.arange(e, dtype=np.int64)[None, :]).ravel()
    return vals


def reuse_distance(ws: WordStream) -> int:
    """§5.5.2: the largest number of iterations between an access and the previous access of
    the same address (0 when no address is read twice). Fig. 5.7: 4 (A) and 31 (B)."""
    a = enumerate_affine(ws.extents, ws.addr)
    order = np.lexsort((np.arange(len(a)), a))
    sa, idx = a[order], order
    same = sa[1:] == sa[:-1]
    if not same.any():
        return 0
    return int((idx[1:] - idx[:-1])[same].max())


@dataclass(frozen=True)
class FetchPlan:
    """How an output stream is served from the SRAM (the choice of §5.5.2).

    Fetch ``v_o`` (of ``fetches`` per step of the outer dimensions) reads wide word
    ``a0 // FW + word_step * v_o`` and is due at the first read of that word, at step
    ``per * v_o - lead`` of dimension ``dim`` (inner dimensions at 0)."""
    dim: int            # fetched dimension v
    span: int           # address span of the loops inside v (served by the TB)
    fetches: int
    word_step: int
    per: int
    lead: int


def split_lanes(ws: WordStream, fw: int) -> WordStream:
    """Strip-mine every dimension with a sub-word stride ``r`` (``fw % r == 0``) and an extent
    that is a multiple of ``fw / r`` into ``(fw / r, extent * r / fw)``: the inner part stays
    inside a wide word, the outer part steps by whole wide words. The order of the iterations
    is unchanged (``i = (fw / r) * i_out + i_in``)."""
    ext, ts, rs, es = [], [], [], []
    for e, t, r, el in zip(ws.extents, ws.time.strides, ws.addr.strides, ws.element.strides):
        k = fw // r if 0 < r < fw and fw % r == 0 else 0
        if k and e > k and e % k == 0:
            ext += [k, e // k]
            ts += [t, k * t]
            rs += [r, k * r]
            es += [el, k * el]
        else:
            ext.append(e)
            ts.append(t)
            rs.append(r)
            es.append(el)
    return WordStream(ws.name, tuple(ext), Affine(ws.time.start, tuple(ts)),
                      Affine(ws.addr.start, tuple(rs)), Affine(ws.element.start, tuple(es)))


def _plan(ws: WordStream, fw: int, tb_words: int) -> FetchPlan | None:
    R, E = ws.addr.strides, ws.extents
    if any(r < 0 for r in R):
        return None
    lane0 = ws.addr.start % fw
    usable = tb_words - fw
    if not any(R):
        # one element for the whole stream (a weight after full banking): a single fetch
        return FetchPlan(len(E) - 1, 0, 1, 0, 1, 0)
    for v in range(len(E)):
        outer = range(v + 1, len(E))
        shift = lane0 + sum((R[d] % fw) * (E[d] - 1) for d in outer)  # largest start lane
        span = sum(R[j] * (E[j] - 1) for j in range(v))
        # the TB must hold a fetched word from the first read of the most shifted row to the
        # last read of the unshifted one: the window plus the shift within the usable capacity
        # (a shift of a whole word or more: example B's dx = 4, fetched again from the row's
        # first word, §5.5.2 and Fig. 5.8)
        if R[v] == 1 and span <= usable and (shift < fw or shift + span <= usable):
            return FetchPlan(v, span, (shift + E[v] - 1 + span) // fw + 1, 1, fw, shift + span)
        if R[v] > 0 and R[v] % fw == 0 and shift + span < fw:
            return FetchPlan(v, span, E[v], R[v] // fw, 1, 0)
    return None


def plan_fetch(ws: WordStream, fw: int, tb_words: int) -> tuple[WordStream, FetchPlan]:
    """Sequential fetch along a unit-stride dimension ``v`` (§5.5.2: the TB holds the window
    of the loops inside ``v``; fetches are padded to a uniform count when the start lane
    varies), or one fetch per step of a dimension that advances by whole wide words while the
    rest of the access stays inside one wide word (a column walk, a transposed read; dimensions
    are split with :func:`split_lanes` when that helps). Outer dimensions contribute whole wide
    words plus a lane shift that must keep every fetch inside one word. Returns the (possibly
    strip-mined) stream and the plan."""
    ws = ws.squeeze()
    for cand in (ws, split_lanes(ws, fw)):
        plan = _plan(cand, fw, tb_words)
        if plan is not None:
            return cand, plan
    raise NotWideWord(
        f"output {ws.name}: access pattern {ws.addr} over extents {ws.extents} cannot be "
        f"vectorized for the wide-fetch SRAM (needs a unit-stride dimension whose inner window "
        f"fits the {tb_words - fw}-word usable TB, or whole-wide-word steps; reuse distance "
        f"{reuse_distance(ws)}): read it with its unit-stride dimension innermost (reorder the "
        f"consumer's loops) or keep the buffer in registers (store_in('REG'))")


def _check_write(ws: WordStream, fw: int) -> None:
    R = ws.addr.strides
    if R[0] != 1 and ws.extents[0] > 1 or ws.addr.start % fw or any(r % fw for r in R[1:]):
        raise NotWideWord(f"input {ws.name}: write addresses {ws.addr} over extents "
                           f"{ws.extents} are not wide-word aligned (unit inner stride, "
                           f"rows in whole wide words): write it with its unit-stride "
                           f"dimension innermost (reorder the producer's loops to the order "
                           f"its readers use) and rows of a multiple of {fw} words")


def write_configs(ws: WordStream, fw: int, agg_depth: int, slack: int = 0
                  ) -> tuple[ControllerConfig, ControllerConfig]:
    """``in2agg`` and ``agg2sram`` of one input stream (§5.5.1, paper Fig. 9 AGG/SRAM)."""
    ws = ws.squeeze()
    _check_write(ws, fw)
    E, T = ws.extents, ws.time
    nw = -(-E[0] // fw)
    seq, q = [], nw                  # wide-word numbers per step of each outer dimension
    for e in E[1:]:
        seq.append(q)
        q *= e
    agg_words = agg_depth * fw
    in2agg = ControllerConfig(E, AffineMap(T.start, T.strides),
                              {"agg": AffineMap(0, (1,) + tuple(fw * q % agg_words
                                                                for q in seq))})
    cyc = T.start + T.strides[0] * (fw - 1) + 1 + slack
    agg2sram = ControllerConfig(
        (nw,) + E[1:], AffineMap(cyc, (fw * T.strides[0],) + T.strides[1:]),
        {"agg": AffineMap(0, (1,) + tuple(q % agg_depth for q in seq)),
         "sram": AffineMap(ws.addr.start // fw, (1,) + tuple(r // fw for r in ws.addr.strides[1:]))})
    return in2agg, agg2sram


def read_configs(ws: WordStream, fw: int, tb_depth: int, slack: int = 0
                 ) -> tuple[ControllerConfig, ControllerConfig]:
    """``sram2tb`` and ``tb2out`` of one output stream (§5.5.2, paper Fig. 9 SRAM/TB)."""
    tb_words = tb_depth * fw
    ws, plan = plan_fetch(ws, fw, tb_words)
    v, E, T, A = plan.dim, ws.extents, ws.time, ws.addr
    w0 = A.start // fw
    outer = range(v + 1, len(E))
    # fetch v_o is due at the first read of its word: v-step per*v_o - lead, inner loops at 0
    cyc = T.start - T.strides[v] * plan.lead - 2 - slack
    sram = AffineMap(w0, (plan.word_step,) + tuple(A.strides[d] // fw for d in outer))
    # (outer lane shifts stay inside the word: the plan checked shift + span < fw)
    sram2tb = ControllerConfig(
        (plan.fetches,) + tuple(E[d] for d in outer),
        AffineMap(cyc, (plan.per * T.strides[v],) + tuple(T.strides[d] for d in outer)),
        {"sram": sram, "tb": AffineMap(w0 % tb_depth, tuple(s % tb_depth for s in sram.strides))})
    tb2out = ControllerConfig(E, AffineMap(T.start, T.strides),
                              {"tb": AffineMap(A.start % tb_words,
                                               tuple(r % tb_words for r in A.strides))})
    return sram2tb, tb2out


def compact_read_configs(ws: WordStream, fw: int, tb_depth: int, slack: int = 0
                         ) -> tuple[ControllerConfig, ControllerConfig] | None:
    """``sram2tb`` and ``tb2out`` of a read whose rows are not padded (``None`` when the
    stream is not such a read): the innermost dimension walks a row of ``E`` words with unit
    stride, one read per cycle step, the next dimension starts the next row right after it,
    and the row's ``F`` fetches take the two-level pattern of
    :func:`compiler.schedule.fetch_pad.compact_fetch` (the scheduler left the row unpadded
    because it exists). Each row's fetches start its own start lane earlier (an outer
    dimension that moves the lane by ``g`` has its fetch stride ``g`` steps shorter, and the
    scheduler gave it ``g`` steps more, :func:`compiler.schedule.fetch_pad.shift_gaps`); when
    the rows' pitch is ``F`` words and ``groups x period = E``, the groups continue from row to
    row in one dimension. The exact checks (:func:`unserved_reads`, :func:`late_reads`)
    decide whether the configuration is used."""
    from ..schedule.fetch_pad import compact_fetch, fetches_per_row
    ws = ws.squeeze()
    E, T, A = ws.extents, ws.time, ws.addr
    if len(E) < 2 or A.strides[0] != 1 or any(r < 0 for r in A.strides):
        return None
    tv, lane0 = T.strides[0], A.start % fw
    outer = range(1, len(E))
    shift = lane0 + sum((A.strides[d] % fw) * (E[d] - 1) for d in outer)
    pitch = A.strides[1] // fw if A.strides[1] % fw == 0 else None
    if shift >= fw or T.strides[1] != E[0] * tv or pitch is None:
        return None
    f = fetches_per_row(E[0], shift, fw)
    cf = compact_fetch(E[0], shift, fw, tb_depth, pitch)
    if cf is None:
        return None
    start = T.start - tv * (lane0 + cf.lead + slack)
    out_t = [T.strides[d] - tv * (A.strides[d] % fw) for d in outer]
    out_a = [A.strides[d] // fw for d in outer]
    if pitch == f and cf.period * cf.groups == E[0]:
        ext = (cf.inner, cf.groups * E[1]) + E[2:]
        times = (cf.step * tv, cf.period * tv) + tuple(out_t[1:])
        words = (1, cf.inner) + tuple(out_a[1:])
    else:
        ext = (cf.inner, cf.groups) + E[1:]
        times = (cf.step * tv, cf.period * tv) + tuple(out_t)
        words = (1, cf.inner) + tuple(out_a)
    w0 = A.start // fw
    sram2tb = ControllerConfig(ext, AffineMap(start, times), {
        "sram": AffineMap(w0, words),
        "tb": AffineMap(w0 % tb_depth, tuple(w % tb_depth for w in words))})
    tb_words = tb_depth * fw
    tb2out = ControllerConfig(E, AffineMap(T.start, T.strides),
                              {"tb": AffineMap(A.start % tb_words,
                                               tuple(r % tb_words for r in A.strides))})
    return sram2tb, tb2out


def read_view(ws: WordStream, fw: int, tb_words: int) -> WordStream:
    """The stream whose reads the checks enumerate: as the fetch plan strip-mines it
    (:func:`plan_fetch`), or squeezed when no plain plan exists (a compact read,
    :func:`compact_read_configs`). Both list the same reads in one consistent order."""
    try:
        return plan_fetch(ws.squeeze(), fw, tb_words)[0]
    except MappingError:
        return ws.squeeze()


def read_variant(ws: WordStream, fw: int, tb_depth: int, slack: int, compact: bool
                 ) -> tuple[ControllerConfig, ControllerConfig] | None:
    """The read configuration to try at ``slack``: the fetch plan of §5.5.2
    (:func:`read_configs`), or (``compact``) the compact fetch of an unpadded row
    (:func:`compact_read_configs`); ``None`` when it does not exist."""
    if compact:
        return compact_read_configs(ws, fw, tb_depth, slack)
    try:
        return read_configs(ws, fw, tb_depth, slack)
    except MappingError:
        return None


def unserved_reads(ws: WordStream, sram2tb: ControllerConfig, fw: int, tb_depth: int) -> int:
    """Exact TB check: the number of reads whose TB slot does not hold their wide word at the
    read cycle (the latest fetch into the slot visible by then, at fetch cycle + 2, must be of
    that word)."""
    return int((serving_fetch(ws, sram2tb, fw, tb_depth) < 0).sum())


def serving_fetch(ws: WordStream, sram2tb: ControllerConfig, fw: int, tb_depth: int
                  ) -> np.ndarray:
    """Per read (iteration order), the cycle of the fetch whose TB word it reads, or -1 when
    its slot holds another word at that cycle."""
    ws = read_view(ws, fw, tb_depth * fw)
    t_r = enumerate_affine(ws.extents, ws.time)
    w_r = enumerate_affine(ws.extents, ws.addr) // fw
    s = sram2tb.addresses["sram"]
    c_f = fire_cycles(sram2tb)
    w_f = enumerate_affine(sram2tb.extents, Affine(s.start, s.strides))
    out = np.full(len(t_r), -1, dtype=np.int64)
    for slot in range(tb_depth):
        sel = (w_f % tb_depth) == slot
        cyc, words = c_f[sel], w_f[sel]
        order = np.argsort(cyc, kind="stable")
        cyc, words = cyc[order], words[order]
        rsel = np.nonzero((w_r % tb_depth) == slot)[0]
        k = np.searchsorted(cyc + 2, t_r[rsel], side="right") - 1
        ok = (k >= 0) & (words[np.maximum(k, 0)] == w_r[rsel])
        out[rsel[ok]] = cyc[k[ok]]
    return out


def late_reads(ins: list[WordStream], outs: list[WordStream], cfgs: dict, fw: int,
               tb_depth: int, sram_wrap: int | None = None) -> int:
    """Exact SRAM check: reads whose element reaches the SRAM (``agg2sram``) in or after the
    cycle of the fetch that serves them, whose SRAM word was overwritten by another SRAM write
    to the same physical word (word address mod ``sram_wrap``, the circular buffer of §5.6)
    between the two, or whose AGG slot was overwritten before it was written to the SRAM
    (``agg2sram`` later than the first write of the word two ahead)."""
    t_w, e_w, c_w = [], [], []
    sw_c, sw_a = [], []
    for p, ws in enumerate(ins):
        ws = ws.squeeze()
        E = ws.extents
        n = np.arange(int(np.prod(E)), dtype=np.int64)
        nw = -(-E[0] // fw)
        fire = (n % E[0]) // fw + nw * (n // E[0])
        a2s = fire_cycles(cfgs[f"agg2sram_{p}"])
        tw = enumerate_affine(E, ws.time)
        first = np.full(len(a2s), np.iinfo(np.int64).max)
        np.minimum.at(first, fire, tw)
        if len(a2s) > 2 and np.any(a2s[:-2] > first[2:]):
            return 1
        t_w.append(tw)
        e_w.append(enumerate_affine(E, ws.element))
        c_w.append(a2s[fire])
        s = cfgs[f"agg2sram_{p}"].addresses["sram"]
        sw_c.append(a2s)
        sw_a.append(enumerate_affine(cfgs[f"agg2sram_{p}"].extents, Affine(s.start, s.strides)))
    if not ins:
        return 0
    t_w, e_w, c_w = np.concatenate(t_w), np.concatenate(e_w), np.concatenate(c_w)
    # SRAM writes by (physical word, cycle), to find the last one before each fetch
    sw_c, sw_a = np.concatenate(sw_c), np.concatenate(sw_a)
    if sram_wrap:
        sw_a = sw_a % sram_wrap
    sbig = int(max(sw_c.max(initial=0), 0)) + 2
    skey = np.sort(sw_a * sbig + sw_c)
    big = int(max(t_w.max(), max(enumerate_affine(o.extents, o.time).max() for o in outs))) + 1
    key = e_w * big + t_w
    order = np.argsort(key, kind="stable")
    key, e_s, c_s = key[order], e_w[order], c_w[order]
    bad = 0
    for q, ws in enumerate(outs):
        f = serving_fetch(ws, cfgs[f"sram2tb_{q}"], fw, tb_depth)
        ws2 = read_view(ws, fw, tb_depth * fw)
        t_r = enumerate_affine(ws2.extents, ws2.time)
        e_r = enumerate_affine(ws2.extents, ws2.element)
        k = np.searchsorted(key, e_r * big + t_r, side="right") - 1
        has = (k >= 0) & (e_s[np.maximum(k, 0)] == e_r)
        c_el = c_s[np.maximum(k, 0)]
        bad += int((has & ((f < 0) | (c_el >= f))).sum())
        # the last SRAM write to the fetched word before the fetch must be the element's own
        ok = has & (f >= 0) & (c_el < f)
        w_r = enumerate_affine(ws2.extents, ws2.addr) // fw
        if sram_wrap:
            w_r = w_r % sram_wrap
        j = np.searchsorted(skey, w_r * sbig + np.minimum(f, sbig - 1) - 1, side="right") - 1
        last = skey[np.maximum(j, 0)] - w_r * sbig
        bad += int((ok & (j >= 0) & (last != c_el)).sum())
    return bad


def fire_cycles(cfg: ControllerConfig) -> np.ndarray:
    if not cfg.extents:
        return np.zeros(0, dtype=np.int64)
    return enumerate_affine(cfg.extents, Affine(cfg.schedule.start, cfg.schedule.strides))


def pub_configs(ins: list[WordStream], outs: list[WordStream], pub: PUBParams, name: str,
                max_slack: int | None = None, sram_wrap: int | None = None
                ) -> dict[str, ControllerConfig]:
    """All PUB controller configs of one physical buffer (§5.5.3 scheduling included).
    ``sram_wrap``: the SRAM words that word addresses wrap at (an unchained PUB's depth)."""
    fw = pub.fetch_width
    if len(ins) > pub.input_ports or len(outs) > pub.output_ports:
        raise MappingError(f"buffer {name}: {len(ins)} inputs / {len(outs)} outputs exceed the "
                           f"PUB's {pub.input_ports} / {pub.output_ports} ports: lower the "
                           f"unroll that multiplies its ports, or give each group of readers "
                           f"its own buffer")
    max_slack = 4 * fw if max_slack is None else max_slack
    layouts = pub_layouts(pub)
    cfgs = {n: ControllerConfig.disabled() for n in layouts}
    # candidates per stream: (slack, configs, SRAM cycles), smallest slack first
    wcands = _write_candidates(ins, pub, layouts, name, max_slack)
    rcands = _read_candidates(outs, pub, layouts, name, max_slack)
    combos = sorted(itertools.product(*[range(len(c)) for c in wcands]),
                    key=lambda ix: sum(wcands[p][i][0] for p, i in enumerate(ix)))
    late = False
    for ix in combos[:64]:
        chosen_w = [wcands[p][i] for p, i in enumerate(ix)]
        busy = np.concatenate([c[2] for c in chosen_w] + [np.zeros(0, dtype=np.int64)])
        if len(np.unique(busy)) != len(busy):
            continue
        chosen_r = []
        for lst in rcands:
            for cand in lst:
                if not np.isin(cand[2], busy).any():
                    chosen_r.append(cand)
                    busy = np.concatenate([busy, cand[2]])
                    break
            else:
                break
        if len(chosen_r) == len(rcands):
            for p, c in enumerate(chosen_w):
                cfgs[f"in2agg_{p}"], cfgs[f"agg2sram_{p}"] = c[1]
            for q, c in enumerate(chosen_r):
                cfgs[f"sram2tb_{q}"], cfgs[f"tb2out_{q}"] = c[1]
            if not late_reads(ins, outs, cfgs, fw, pub.tb_depth, sram_wrap):
                return cfgs
            late = True
    if late:
        raise TooSoon(f"buffer {name}: some read comes too soon after its write for the "
                           f"wide-fetch SRAM (AGG -> SRAM -> TB takes at least "
                           f"{fw + 3} cycles; thesis §5.5.3 asks the scheduler for 2 x FW), "
                           f"or its SRAM word is overwritten before it is fetched: keep the "
                           f"buffer in shift registers or registers (a larger --threshold, "
                           f"store_in('REG')) or let the consumer start later")
    raise SramConflict(f"buffer {name}: no conflict-free single-port SRAM schedule within "
                       f"{max_slack} cycles of slack: its writes and reads need more SRAM "
                       f"cycles than one single-port memory has; fewer ports on the buffer "
                       f"(a lower unroll) or one walking order for its writers and readers "
                       f"leave it free cycles")


def _fits(cfg: ControllerConfig, layout) -> bool:
    """Whether the controller ``layout``'s loop levels hold ``cfg`` (after
    :func:`ubgen.controller.fit_levels` drops and fuses what it can)."""
    return fit_levels(cfg, layout).dims <= layout.params.max_dims


def _write_candidates(ins: list[WordStream], pub: PUBParams, layouts: dict, name: str,
                      max_slack: int) -> list[list[tuple]]:
    """Per input stream, its ``(slack, (in2agg, agg2sram), SRAM write cycles)`` candidates
    whose AGG -> SRAM writes the delay line holds, smallest slack first (thesis §5.5.3)."""
    fw = pub.fetch_width
    wcands = []
    for p, ws in enumerate(ins):
        lst = []
        for slack in range(min(max_slack, pub.max_agg_slack) + 1):
            in2agg, a2s = write_configs(ws, fw, pub.agg_depth, slack)
            cyc = fire_cycles(a2s)
            try:      # the AGG -> SRAM delay line holds it (a row's partial word waits longer)
                agg_slacks(fit_levels(in2agg, layouts[f"in2agg_{p}"]), a2s, pub,
                           f"agg2sram_{p}")
            except EncodeError:
                continue
            if len(np.unique(cyc)) == len(cyc):
                lst.append((slack, (in2agg, a2s), cyc))
        if not lst:
            raise MappingError(f"buffer {name}: input {ws.name}: no AGG -> SRAM write time "
                               f"within the {pub.max_agg_slack + 1}-cycle delay line "
                               f"(agg2sram_{p}_slack / agg2sram_{p}_row_slack)")
        wcands.append(lst)
    return wcands


def _read_candidates(outs: list[WordStream], pub: PUBParams, layouts: dict, name: str,
                     max_slack: int) -> list[list[tuple]]:
    """Per output stream, its ``(slack, (sram2tb, tb2out), SRAM read cycles)`` candidates that
    keep the transpose buffer's words in time and whose fetch the ``sram2tb`` controller's
    levels hold, smallest slack first (thesis §5.5.3)."""
    fw = pub.fetch_width
    rcands = []
    for q, ws in enumerate(outs):
        if read_variant(ws, fw, pub.tb_depth, 0, False) is None \
                and read_variant(ws, fw, pub.tb_depth, 0, True) is None:
            plan_fetch(ws, fw, pub.tb_depth * fw)      # no plan at all: its one-line error
        lst, deep = [], False
        # the plain fetch first; the compact one only for a row the plain one cannot serve
        for compact in (False, True):
            for slack in range(max_slack + 1):
                pair = read_variant(ws, fw, pub.tb_depth, slack, compact)
                if pair is None:
                    continue
                s2t, t2o = pair
                if s2t.schedule.start < 0:
                    break                       # the fetch would precede cycle 0
                cyc = fire_cycles(s2t)
                if len(np.unique(cyc)) != len(cyc) or unserved_reads(ws, s2t, fw, pub.tb_depth):
                    continue
                if _fits(s2t, layouts[f"sram2tb_{q}"]):
                    lst.append((slack, (s2t, t2o), cyc))
                else:
                    deep = True
            if lst:
                break
        if not lst and deep:
            raise MappingError(f"buffer {name}: the SRAM fetch of {ws.name} needs more loop "
                               f"levels than the sram2tb_{q} controller has "
                               f"({layouts[f'sram2tb_{q}'].params.max_dims})")
        if not lst:
            raise MappingError(f"buffer {name}: no SRAM fetch schedule for {ws.name} keeps its "
                               f"transpose-buffer words in time: read it in the order it is "
                               f"written (reorder the consumer's loops) or keep the buffer in "
                               f"registers (store_in('REG'))")
        rcands.append(lst)
    return rcands
