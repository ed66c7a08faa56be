"""The PUB's configuration space as data: its controllers, register map and encoder (thesis
§6.1.3, Fig. 6.4; docs/pub.md, docs/regmap.md). Amaranth-free, so the compiler reads the same
objects the generator (:mod:`ubgen.pub.pub`) builds from (docs/design.md §2).

The input side is area-optimised (docs/pub.md "The input side"):

* the aggregator fills **in order**: ``in2agg_<p>`` has an iteration domain and a schedule
  generator but no address generator; word x of a row (its level 0) goes to lane x mod FW of
  the current wide slot, and a new slot starts after lane FW-1 and after the last word of a row
  (its ``agg`` map is fixed, :func:`in_order_agg`);
* ``agg2sram_<p>`` has no schedule generator: it fires ``1 + slack`` cycles after ``in2agg``
  completes a wide word (the word's lane FW-1), ``1 + row_slack`` cycles after it ends a row on
  a partial word, and reads the aggregator's slots in order (its ``agg`` map is fixed,
  :func:`read_order_agg`); its iteration domain steps its SRAM address generator.

On the output side a fetched word goes to transpose-buffer slot ``sram mod tb_depth``, the low
bits of its SRAM address (``sram2tb``'s ``tb`` map is fixed, :func:`tb_slot_of_sram`): full-rate
transposes keep working with a row pitch of an odd number of wide words.

The compiler still speaks the affine form for every controller (``ControllerConfig`` with the
``agg`` maps and the ``agg2sram`` schedule); :func:`encode_pub` checks that those are what the
hardware does and encodes the rest.
"""
from __future__ import annotations

import numpy as np

from ..params import PUBParams, _clog2
from ..controller import (AffineMap, ControllerConfig, ControllerLayout, EncodeError,
                          encode_controller, fit_levels)
from ..regmap import RegisterMap

__all__ = ["pub_layouts", "pub_regmap", "encode_pub", "in_order_agg", "read_order_agg",
           "tb_slot_of_sram", "agg_slacks", "agg_events", "PUB_STATUS"]

PUB_STATUS = ("error", "cycle_count")


def pub_layouts(params: PUBParams) -> dict[str, ControllerLayout]:
    """The controllers of a PUB, in register-map order, with their address-generator widths
    (``fixed``: computed by the PUB, no registers; ``agg2sram`` untimed)."""
    sram = params.sram_addr_width + params.chain_bits
    c = params.controller
    agg = frozenset({"agg"})
    out = {}
    for p in range(params.input_ports):
        out[f"in2agg_{p}"] = ControllerLayout(f"in2agg_{p}", {"agg": _clog2(params.agg_words)},
                                              c.for_kind("in2agg"), fixed=agg)
    for p in range(params.input_ports):
        out[f"agg2sram_{p}"] = ControllerLayout(
            f"agg2sram_{p}", {"agg": _clog2(params.agg_depth), "sram": sram},
            c.for_kind("agg2sram"), fixed=agg, timed=False)
    for q in range(params.output_ports):
        out[f"sram2tb_{q}"] = ControllerLayout(
            f"sram2tb_{q}", {"sram": sram, "tb": _clog2(params.tb_depth)}, c.for_kind("sram2tb"),
            fixed=frozenset({"tb"}))
    for q in range(params.output_ports):
        out[f"tb2out_{q}"] = ControllerLayout(f"tb2out_{q}", {"tb": _clog2(params.tb_words)},
                                              c.for_kind("tb2out"))
    return out


def _aligned(n: int, size: int) -> int:
    return -(-n // size) * size


def pub_regmap(params: PUBParams) -> RegisterMap:
    """The PUB's configuration space (docs/design.md §2: the compiler reads this same object)."""
    rm = RegisterMap("pub")
    rm.add("mode", 1, doc="0: unified buffer, 1: ROM (lookup table read at data_in[0])")
    rm.add("chain_en", 1, doc="chaining on: SRAM accesses only when the address's high bits "
                              "equal tile_id; unowned outputs pass chain_in through")
    rm.add("tile_id", params.chain_bits, doc="this tile's ID in a chain")
    for layout in pub_layouts(params).values():
        layout.add_registers(rm)
        if not layout.timed:
            n = layout.name
            rm.add(f"{n}_slack", params.agg_slack_width,
                   doc="the SRAM write waits 1 + slack cycles after in2agg fills a wide word")
            rm.add(f"{n}_row_slack", params.agg_slack_width,
                   doc="... 1 + row_slack cycles after in2agg ends a row on a partial word")
    rm.add("error", 1, doc="read-only status: sticky SRAM port conflict; write 1 to clear")
    rm.add("cycle_count", params.controller.cycle_width,
           doc="read-only status: unstalled cycles since run went high (held at 0 "
               "while no controller is configured, ROM and register-file modes aside)")
    size = params.capacity_words
    rm.add_window("sram", _aligned(len(rm.registers), size), size, params.word_width,
                  doc="SRAM contents, one word per address (writes only, while run = 0)")
    return rm


# --- the fixed input side ---------------------------------------------------------------------

def _enumerate(extents, amap: AffineMap) -> np.ndarray:
    """Values of ``amap`` over the box ``extents`` in iteration order (innermost fastest)."""
    vals = np.full(1, amap.start, dtype=np.int64)
    for e, s in reversed(list(zip(extents, amap.strides))):
        vals = (vals[:, None] + s * np.arange(e, dtype=np.int64)[None, :]).ravel()
    return vals


def in_order_agg(extents, params: PUBParams) -> AffineMap:
    """The aggregator word ``in2agg`` writes, as an affine map over its (encoded) levels: word x
    of level 0 at lane x mod FW, each level-0 loop from a new wide slot (so level d >= 1 steps
    FW x the wide words of the loops inside it), modulo the aggregator's words."""
    fw, words = params.fetch_width, params.agg_words
    strides, span = [1], -(-extents[0] // fw)       # wide words per level-0 loop
    for e in extents[1:]:
        strides.append(fw * span % words)
        span *= e
    return AffineMap(0, tuple(strides))


def read_order_agg(extents, params: PUBParams) -> AffineMap:
    """The aggregator slot ``agg2sram`` reads: its fires in order, modulo the slots."""
    strides, n = [], 1
    for e in extents:
        strides.append(n % params.agg_depth)
        n *= e
    return AffineMap(0, tuple(strides))


def tb_slot_of_sram(cfg: ControllerConfig, params: PUBParams) -> AffineMap:
    """The transpose-buffer slot ``sram2tb`` writes: its SRAM address modulo the slots."""
    s = cfg.addresses["sram"]
    return AffineMap(s.start % params.tb_depth, tuple(x % params.tb_depth for x in s.strides))


def _same_map(got: AffineMap, want: AffineMap, extents, width: int) -> bool:
    mod = 1 << width
    return (got.start - want.start) % mod == 0 and all(
        e == 1 or (g - w) % mod == 0 for e, g, w in zip(extents, got.strides, want.strides))


def agg_events(extents, fw: int, fires: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For the fires of an ``in2agg`` with (encoded) ``extents``: which complete a wide word
    (lane FW-1, or the last word of a level-0 loop) and which of those fill lane FW-1 (the others
    end a row on a partial word). Returns ``(event, full)`` boolean arrays over the fires."""
    n = int(np.prod(extents)) if fires is None else fires
    x = np.arange(n, dtype=np.int64) % extents[0]
    lane_last = x % fw == fw - 1
    return lane_last | (x == extents[0] - 1), lane_last


def agg_slacks(in2agg: ControllerConfig, agg2sram: ControllerConfig, params: PUBParams,
               name: str) -> tuple[int, int]:
    """``(slack, row_slack)`` of ``agg2sram`` (``name``): its affine schedule must fire, for the
    k-th wide word ``in2agg`` completes, ``1 + slack`` cycles after a full word's last write
    and ``1 + row_slack`` after a row's partial last word (each one value for the whole
    stream, within the delay line). ``in2agg`` is the encoded (fitted) configuration.
    Raises :class:`EncodeError` naming the register otherwise."""
    if not agg2sram.extents:
        return 0, 0
    if not in2agg.extents:
        raise EncodeError(f"{name}: fires {agg2sram.fires} times but in2agg is disabled "
                          f"(the AGG -> SRAM write fires when the aggregator fills)")
    event, full = agg_events(in2agg.extents, params.fetch_width)
    fill = _enumerate(in2agg.extents, in2agg.schedule)[event]
    full = full[event]
    fires = _enumerate(agg2sram.extents, agg2sram.schedule)
    if len(fires) != len(fill):
        raise EncodeError(f"{name}: fires {len(fires)} times, but in2agg fills {len(fill)} wide "
                          f"words (one SRAM write per word)")
    wait = fires - fill - 1
    top = params.max_agg_slack
    out = []
    for reg, sel in (("slack", full), ("row_slack", ~full)):
        vals = np.unique(wait[sel])
        if len(vals) > 1 or len(vals) and not 0 <= vals[0] <= top:
            got = (f"{int(vals[0])}..{int(vals[-1])}" if len(vals) > 1 else str(int(vals[0])))
            raise EncodeError(f"{name}: the SRAM write waits {got} cycles after the aggregator "
                              f"fills a {'word' if reg == 'slack' else 'row'}; the AGG -> SRAM "
                              f"path waits one fixed 0..{top} ({name}_{reg})")
        out.append(int(vals[0]) if len(vals) else 0)
    return out[0], out[1]


def encode_pub(configs: dict[str, ControllerConfig], params: PUBParams) -> dict[str, int]:
    """Register values of every PUB controller for the affine ``configs`` (controller name ->
    configuration; absent: disabled), with the fixed parts checked against the hardware (module
    docstring): the ``agg`` maps must be the in-order ones, ``sram2tb``'s ``tb`` map the SRAM
    address's low bits and ``agg2sram``'s schedule the fill schedule (:func:`agg_slacks`). Raises :class:`EncodeError` naming the controller
    and the register. ``mode``, ``chain_en`` and ``tile_id`` are the caller's."""
    unknown = sorted(set(configs) - set(pub_layouts(params)))
    if unknown:
        raise EncodeError(f"pub: no controller {unknown[0]}")
    regs: dict[str, int] = {}
    fitted: dict[str, ControllerConfig] = {}
    for name, layout in pub_layouts(params).items():
        cfg = configs.get(name, ControllerConfig.disabled())
        regs.update(encode_controller(cfg, layout))
        fitted[name] = fit_levels(cfg, layout) if cfg.extents else cfg
        for ag in sorted(layout.fixed) if cfg.extents else ():
            cfg = fitted[name]
            kind = name.rsplit("_", 1)[0]
            want = {"in2agg": lambda: in_order_agg(cfg.extents, params),
                    "agg2sram": lambda: read_order_agg(cfg.extents, params),
                    "sram2tb": lambda: tb_slot_of_sram(cfg, params)}[kind]()
            if not _same_map(cfg.addresses[ag], want, cfg.extents, layout.addr_widths[ag]):
                what = {"in2agg": "the aggregator fills in order (word x of a row at lane x mod "
                                  "FW, each row from a new slot)",
                        "agg2sram": "the aggregator is read in fill order",
                        "sram2tb": "a fetched word goes to the transpose-buffer slot of its "
                                   "SRAM address's low bits"}[kind]
                raise EncodeError(f"{name}: {what}: {ag} {want} over extents {cfg.extents}, "
                                  f"not {cfg.addresses[ag]} ({name}_{ag})")
    for p in range(params.input_ports):
        n = f"agg2sram_{p}"
        # agg2sram has no schedule registers, so fitting may fuse levels whose fire times are
        # not one loop; its fires are the given configuration's (the same order, fitted or not)
        regs[f"{n}_slack"], regs[f"{n}_row_slack"] = agg_slacks(
            fitted[f"in2agg_{p}"], configs.get(n, ControllerConfig.disabled()), params, n)
    return regs
