"""The end-to-end bundle on the simulation side (docs/simulation.md): load and validate the JSON
object that ``compiler.backend.bundle.make_bundle`` writes, before anything reaches the
hardware model.

Validation checks the shape and ranges only (every field present, integers in range, addresses
inside the top's address map, no GLB word loaded or expected twice with different values); it
re-derives nothing from the compiler. The address map is the one ``ubgen.top.write_verilog``
exports next to the Verilog (``cgra_top_<arch>.json``, docs/top.md).
"""
from __future__ import annotations

import json
from pathlib import Path

__all__ = ["BundleError", "FIELDS", "load_bundle", "validate_bundle", "host_plan", "tile_spans",
           "write_only_ranges"]

FIELDS = ("app", "arch", "bitstream", "glb_inputs", "glb_outputs", "cycles_predicted",
          "done_cycle", "output_writes")


class BundleError(ValueError):
    """A malformed bundle (one line naming the field)."""


def _pairs(bundle: dict, name: str, value_bits: int, address_ok) -> list[tuple[int, int]]:
    rows = bundle[name]
    if not isinstance(rows, list):
        raise BundleError(f"bundle field '{name}' is not a list")
    out = []
    for i, row in enumerate(rows):
        if (not isinstance(row, (list, tuple)) or len(row) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in row)):
            raise BundleError(f"bundle field '{name}'[{i}] is not an [address, value] pair "
                              f"of integers: {row!r}")
        a, v = row
        if not 0 <= v < 1 << value_bits:
            raise BundleError(f"bundle field '{name}'[{i}]: value {v} does not fit "
                              f"{value_bits} bits")
        if not address_ok(a):
            raise BundleError(f"bundle field '{name}'[{i}]: address {a:#x} is outside the "
                              f"address map")
        out.append((a, v))
    return out


def _unique(pairs: list[tuple[int, int]], name: str) -> None:
    seen: dict[int, int] = {}
    for a, v in pairs:
        if seen.setdefault(a, v) != v:
            raise BundleError(f"bundle field '{name}': word {a} given two different values")


def validate_bundle(bundle: dict, address_map: dict | None = None) -> dict:
    """Check ``bundle`` (module docstring); with ``address_map`` (the top's exported map) also
    that it is for that arch and every address lies in it. Returns the bundle."""
    if not isinstance(bundle, dict):
        raise BundleError("a bundle is a JSON object")
    if "blocks" in bundle:
        return validate_blocked_bundle(bundle, address_map)
    if "tiling" in bundle:
        return validate_tiled_bundle(bundle, address_map)
    missing = [f for f in FIELDS if f not in bundle]
    if missing:
        raise BundleError(f"bundle lacks field(s) {', '.join(missing)}")
    for f in ("cycles_predicted", "done_cycle", "output_writes"):
        v = bundle[f]
        if not isinstance(v, int) or isinstance(v, bool) or v < 0 or v >= 1 << 32:
            raise BundleError(f"bundle field '{f}' is not a 32-bit unsigned integer: {v!r}")
    if bundle["done_cycle"] <= bundle["cycles_predicted"]:
        raise BundleError("bundle's done_cycle must come after cycles_predicted")
    words, tile_ok = None, lambda a: 0 <= a < 1 << 32
    if address_map is not None:
        if address_map.get("arch") != bundle["arch"]:
            raise BundleError(f"bundle is for arch {bundle['arch']}, the model is "
                              f"{address_map.get('arch')}")
        g = address_map["glb"]
        words = g["banks"] * g["bank_words"]
        base = address_map["tiles"]["base"]
        shift = address_map["tiles"]["tile_id_shift"]
        tiles = {t["tile_id"] for t in address_map["tiles"]["list"]}
        tile_ok = lambda a: (a >= base and a % 4 == 0 and (a - base) >> shift in tiles)
    glb_ok = (lambda w: 0 <= w < words) if words is not None else (lambda w: w >= 0)
    bits = _pairs(bundle, "bitstream", 32, tile_ok)
    if not bits:
        raise BundleError("bundle's bitstream is empty")
    ins = _pairs(bundle, "glb_inputs", 16, glb_ok)
    outs = _pairs(bundle, "glb_outputs", 16, glb_ok)
    if not outs:
        raise BundleError("bundle expects no output")
    _unique(ins, "glb_inputs")
    _unique(outs, "glb_outputs")
    if bundle["output_writes"] < len({a for a, _ in outs}):
        raise BundleError("bundle's output_writes is smaller than its number of output words")
    return bundle


TILED_FIELDS = ("app", "arch", "bitstream", "cycles_predicted", "done_cycle", "output_writes",
                "input_map", "output_map", "tiling")


def validate_blocked_bundle(bundle: dict, address_map: dict | None = None) -> dict:
    """A channel-blocked layer's bundle (``compiler.backend.bundle.make_blocked_bundle``):
    two tiled configurations with the same cycles, and blocks that cover the reduction in
    order."""
    configs, spec = bundle.get("configs"), bundle["blocks"]
    if not isinstance(configs, list) or len(configs) != 2:
        raise BundleError("a blocked bundle has two configurations")
    for c in configs:
        validate_tiled_bundle(c, address_map)
        if c["cycles_predicted"] != bundle["cycles_predicted"]:
            raise BundleError("the blocked bundle's configurations differ in cycles_predicted")
    ranges = spec.get("ranges") or []
    if not ranges or any(a[1] != b[0] for a, b in zip(ranges, ranges[1:])) or \
            any(lo >= hi for lo, hi in ranges) or ranges[0][0] != 0:
        raise BundleError(f"the blocked bundle's channel ranges {ranges} do not cover the "
                          f"reduction in order")
    return bundle


def validate_tiled_bundle(bundle: dict, address_map: dict | None = None) -> dict:
    """A tiled bundle (``compiler.backend.bundle.make_tiled_bundle``): the fields, the GLB
    words of both maps inside the global buffer, every map index inside its tile buffer's box
    at every tile's ``lows`` and inside the whole buffer, and each tile's box inside the whole
    output."""
    missing = [f for f in TILED_FIELDS if f not in bundle]
    if missing:
        raise BundleError(f"tiled bundle lacks field(s) {', '.join(missing)}")
    for f in ("cycles_predicted", "done_cycle", "output_writes"):
        v = bundle[f]
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < 1 << 32:
            raise BundleError(f"bundle field '{f}' is not a 32-bit unsigned integer: {v!r}")
    if bundle["done_cycle"] <= bundle["cycles_predicted"]:
        raise BundleError("bundle's done_cycle must come after cycles_predicted")
    words = None
    if address_map is not None:
        if address_map.get("arch") != bundle["arch"]:
            raise BundleError(f"bundle is for arch {bundle['arch']}, the model is "
                              f"{address_map.get('arch')}")
        words = address_map["glb"]["banks"] * address_map["glb"]["bank_words"]
    t = bundle["tiling"]
    shapes = t.get("shapes", {})
    if not t.get("tiles"):
        raise BundleError("tiled bundle has no tiles")
    for name in ("input_map", "output_map"):
        for b, pairs in bundle[name].items():
            if b not in shapes:
                raise BundleError(f"bundle field '{name}': buffer {b} has no whole shape")
            for w, idx in pairs:
                if not (isinstance(w, int) and w >= 0 and (words is None or w < words)):
                    raise BundleError(f"bundle field '{name}': GLB word {w} is outside the "
                                      f"global buffer")
                if len(idx) != len(shapes[b]):
                    raise BundleError(f"bundle field '{name}': {b}{idx} has the wrong rank")
            if not pairs:
                continue
            lo = [min(i[d] for _w, i in pairs) for d in range(len(shapes[b]))]
            hi = [max(i[d] for _w, i in pairs) for d in range(len(shapes[b]))]
            for tile in t["tiles"]:
                at = tile["lows"][b]
                if not all(0 <= a + l and a + h < n for a, l, h, n in
                           zip(at, lo, hi, shapes[b])):
                    raise BundleError(f"bundle field '{name}': {b} at a tile's lows {at} "
                                      f"reaches outside {shapes[b]}")
    for tile in t["tiles"]:
        for b in t["outputs"]:
            if not all(0 <= lo <= hi < n for (lo, hi), n in zip(tile["box"], shapes[b])):
                raise BundleError(f"tile box {tile['box']} is outside output {b} {shapes[b]}")
    if not bundle["bitstream"]:
        raise BundleError("bundle's bitstream is empty")
    return bundle


def load_bundle(path: str | Path, address_map: dict | None = None) -> dict:
    """Read and validate a bundle file."""
    try:
        bundle = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise BundleError(f"cannot read bundle {path}: {e}") from None
    return validate_bundle(bundle, address_map)


def tile_spans(address_map: dict) -> dict[int, int]:
    """Tile id -> the number of register offsets it answers (its registers and windows; the
    rest of its address range is SLVERR, docs/top.md)."""
    kinds = address_map["tiles"]["kinds"]
    span = {k: max([r["offset"] + 1 for r in v["registers"]]
                   + [w["offset"] + w["size"] for w in v["windows"]] + [0])
            for k, v in kinds.items()}
    return {t["tile_id"]: span[t["kind"]] for t in address_map["tiles"]["list"]}


def host_plan(address_map: dict) -> dict:
    """What the host testbench needs from the top's address map: the control registers'
    addresses and access, the GLB base and size, and the tiles' address ranges
    (sim/tb/host.py's ``plan``)."""
    t = address_map["tiles"]
    return {"control": {r["name"]: r["address"] for r in address_map["control"]},
            "control_access": {r["name"]: r["access"] for r in address_map["control"]},
            "glb_base": address_map["glb"]["base"],
            "glb_rows_base": address_map["glb_rows"]["base"],
            "glb_words": address_map["glb"]["banks"] * address_map["glb"]["bank_words"],
            "tile_base": t["base"], "tile_id_shift": t["tile_id_shift"],
            "tile_spans": {str(k): v for k, v in tile_spans(address_map).items()},
            "write_only": write_only_ranges(address_map)}


def write_only_ranges(address_map: dict) -> list[list[int]]:
    """``[first byte address, last byte address]`` of every tile's windows (storage such as a
    MEM tile's SRAM, written through the configuration port while stopped and not readable
    through it, docs/top.md): a host does not read the configuration back there."""
    t = address_map["tiles"]
    kinds = t["kinds"]
    return [[tile["base"] + 4 * w["offset"], tile["base"] + 4 * (w["offset"] + w["size"] - 1)]
            for tile in t["list"] for w in kinds[tile["kind"]]["windows"]]
