"""Tile areas as data (docs/array.md "Area"): the measured area of every tile kind, for the
compiler's reports (``ubc pnr``, the evaluation) without Amaranth or Yosys.

The figures come from ``bench/tile_area.py`` (Yosys generic synthesis of the generated tiles,
the method of ``bench/area.py``: transistors x ``[area] um2_per_transistor``, the MEM tile's SRAM
macro modelled by ``[area] sp_512x64_um2``, times ``dp_over_sp_ratio`` for the dual-port SRAM of
the ``dp`` and ``dp-pe`` MEM tiles) and are committed in ``ubgen/data/tile_area.json``;
a regression test (``tests/ubgen/test_tile_area.py``, ``make regress``) synthesizes them again
and compares. An entry is found by the :func:`fingerprint` of the parameters the tiles are built
from, so an arch file that changes a tile (tracks, PUB sizes, controller widths, ...) has no
figures until it is measured, and one that only resizes the array shares its tiles' figures.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from .arch import Arch

__all__ = ["DATA", "AreaDataError", "fingerprint", "tile_params", "tile_areas", "app_area"]

DATA = Path(__file__).resolve().parent / "data" / "tile_area.json"


class AreaDataError(LookupError):
    """No measured tile areas for an arch (one line, naming the arch and the fix)."""


def tile_params(arch: Arch) -> dict:
    """The parameters a tile is built from: everything but the array's size and layout, the
    GLB's bank count and the schedulers' latencies (a tile looks the same in a bigger array);
    ``[dpbuf]`` for the dual-port MEM tiles (``[mem] kind`` ``dp`` / ``dp-pe``) only."""
    array = {k: v for k, v in asdict(arch.array).items()
             if k not in ("rows", "columns", "mem_period")}
    mem = asdict(arch.mem)
    params = {"pub": asdict(arch.pub), "mem": mem, "array": array,
              "glb_bank_words": arch.glb.bank_words, "area": asdict(arch.area)}
    for part, key in ((array, "pe_contexts"), (mem, "rf_contexts")):
        if part.get(key) == 1:      # no contexts: the tile measured before they existed
            del part[key]
    if mem.get("kind") == "pub":    # the PUB MEM tile, measured before [mem] kind existed
        del mem["kind"]
    else:                           # a dual-port MEM tile is built from [dpbuf]
        params["dpbuf"] = asdict(arch.dpbuf)
    return params


def fingerprint(arch: Arch) -> str:
    """SHA-256 (first 16 hex digits) of :func:`tile_params`."""
    text = json.dumps(tile_params(arch), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _load(path: Path = DATA) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise AreaDataError(f"{path}: no tile-area data; run bench/tile_area.py --write") from None


def tile_areas(arch: Arch, path: Path = DATA) -> dict:
    """The measured tile kinds of ``arch``: ``{kind: {"total_um2", "logic_um2", "sram_um2",
    "rows", "config_words", ...}}`` (``bench/tile_area.py``). Raises :class:`AreaDataError`
    when the arch's tiles were never measured."""
    fp = fingerprint(arch)
    for entry in _load(path)["entries"]:
        if entry["fingerprint"] == fp:
            return entry["tiles"]
    raise AreaDataError(f"arch {arch.name}: no measured tile areas for its tile parameters "
                        f"(fingerprint {fp}); run bench/tile_area.py --arch {arch.name} --write")


def app_area(arch: Arch, tiles: dict[str, int], path: Path = DATA) -> dict:
    """The area of the tiles an application occupies (``tiles``: kind -> count, e.g. a
    placement's PE, MEM and IO tiles): ``{"tile_area_um2": total, "tile_area_by_kind": {kind:
    um2}}``, or ``{"tile_area_um2": None, "tile_area_note": reason}`` when the arch has no
    measured figures (a report must not fail for want of them)."""
    try:
        kinds = tile_areas(arch, path)
    except AreaDataError as e:
        return {"tile_area_um2": None, "tile_area_note": str(e)}
    by_kind = {k: round(n * kinds[k]["total_um2"], 1) for k, n in sorted(tiles.items()) if n}
    return {"tile_area_um2": round(sum(by_kind.values()), 1), "tile_area_by_kind": by_kind}
