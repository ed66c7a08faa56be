"""Area of every tile kind (docs/array.md "Area"), by the method of bench/area.py.

    .venv/bin/python bench/tile_area.py [--arch NAME ...] [--write] [--check]

The PE, MEM and IO tiles as the array builds them (``Tile(ArrayLayout(arch).specs[kind],
core)``), each synthesized by Yosys to generic CMOS gates and counted in transistors, whole
(flattened) and by part: the switch boxes, the connection boxes, the interconnect's
configuration registers, the core's configuration registers and the rest of the core. The MEM
tile's SRAM array is the modelled macro (:func:`sram_macro`: the PUB's single-port one from ``[area]
sp_512x64_um2``, the dual-port 2048 x 16 SRAM of the ``dp`` and ``dp-pe`` MEM tiles at ``[area]
dp_over_sp_ratio`` times that); every other memory (the register file) is mapped to flip-flops
and counted. um2 = transistors x ``[area]
um2_per_transistor``.

Tiles depend on the arch's tile parameters only (``ubgen.areas.tile_params``): archs that share
them are measured once. ``--write`` stores the figures in ``ubgen/data/tile_area.json`` (what the
compiler reports, ``ubgen.areas``); ``--check`` compares a new measurement with that file and
exits 1 on any difference (the regression test). Default archs: every shipped ``cgra_*``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "bench"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from area import AreaError, hierarchy, parts_vs_whole, synthesize  # noqa: E402
from ubgen.arch import ARCH_DIR, ArchError, load_arch  # noqa: E402
from ubgen.areas import DATA, fingerprint  # noqa: E402

OUT = ROOT / "build" / "bench" / "tiles"
CONFIG = ("ConfigRegisters", "BlockConfig")
STATUS = {"error", "cycle_count", "rf_error"}     # read-only registers: not configuration
KINDS = ("pe", "mem", "io")
ROWS = ("switch boxes", "connection boxes", "interconnect configuration",
        "core configuration", "core logic", "top-level glue (whole - parts)")


def default_archs() -> list[str]:
    return sorted(p.stem for p in ARCH_DIR.glob("cgra_*.toml"))


def measure_tile(arch, kind: str) -> dict:
    """One tile kind of ``arch``: transistors whole and per row of :data:`ROWS`."""
    from ubgen.array.layout import ArrayLayout
    from ubgen.array.tile import Tile
    lay = ArrayLayout(arch)
    spec = lay.specs[kind]
    tile = Tile(spec, lay.cores[kind](arch))
    subs = hierarchy(tile, depth=3)
    top = [(p, c) for p, c in subs if "." not in p]
    # the core's configuration: the outermost register blocks inside it
    cfgs = [p for p, c in subs if p.startswith("core.") and c in CONFIG]
    cfgs = [p for p in cfgs if not any(p.startswith(q + ".") for q in cfgs if q != p)]
    paths = [p for p, _ in top] + cfgs
    depth, width, _um2 = sram_macro(arch)
    counts, macros = synthesize(tile, paths, OUT / f"{fingerprint(arch)}_{kind}",
                                depth, width, f"{kind} tile")
    if macros != (1 if kind == "mem" else 0):
        raise AreaError(f"{kind} tile: found {macros} SRAM macros")
    rows = dict.fromkeys(ROWS, 0)
    for p, cls in top:
        row = {"SwitchBox": "switch boxes", "ConnectionBox": "connection boxes",
               "ConfigRegisters": "interconnect configuration"}.get(cls)
        if p == "core":
            continue
        if row is None:
            raise AreaError(f"{kind} tile: unexpected part {p} ({cls})")
        rows[row] += counts[p]
    rows["core configuration"] = sum(counts[p] for p in cfgs)
    rows["core logic"] = counts["core"] - rows["core configuration"]
    parts = sum(counts[p] for p, _ in top)
    rows["top-level glue (whole - parts)"] = counts[""] - parts
    rw = [r for r in spec.regmap.registers if r.name not in STATUS]
    return {"transistors": counts[""], "rows": rows,
            "parts": [{"unit": p, "transistors": counts[p]} for p in paths],
            "config_bits": sum(r.width for r in rw), "config_words": len(rw)}


def sram_macro(arch) -> tuple[int, int, float]:
    """The MEM tile's SRAM macro ``(depth, width, um2)`` by ``[mem] kind``: the PUB's single-port
    ``sram_depth x (fetch_width * word_width)`` scaled from ``[area] sp_512x64_um2``, or the
    dual-port SRAM's ``[dpbuf] sram_depth x word_width`` (``dp``, ``dp-pe``) at ``[area]
    dp_over_sp_ratio`` times the single-port area of the same bits (bench/area.py's DP blocks)."""
    a = arch.area
    if arch.mem.kind == "pub":
        pub = arch.pub
        words = pub.sram_depth * pub.fetch_width
        return pub.sram_depth, pub.fetch_width * pub.word_width, a.sp_512x64_um2 * words / 2048
    dp = arch.dpbuf
    um2 = a.sp_512x64_um2 * a.dp_over_sp_ratio * dp.sram_depth / 2048
    return dp.sram_depth, dp.word_width, um2


def measure_arch(arch) -> dict:
    k = arch.area.um2_per_transistor
    tiles = {}
    for kind in KINDS:
        print(f"[tile_area] {arch.name}: synthesizing the {kind} tile ...", flush=True)
        t = measure_tile(arch, kind)
        sram = sram_macro(arch)[2] if kind == "mem" else 0.0
        t.update(logic_um2=round(t["transistors"] * k, 1), sram_um2=round(sram, 1),
                 total_um2=round(t["transistors"] * k + sram, 1))
        tiles[kind] = t
    return {"fingerprint": fingerprint(arch), "archs": [arch.name], "um2_per_transistor": k,
            "tiles": tiles}


def measure(names: list[str]) -> dict:
    entries: dict[str, dict] = {}
    for name in names:
        arch = load_arch(name)
        fp = fingerprint(arch)
        if fp in entries:
            entries[fp]["archs"].append(arch.name)
            continue
        entries[fp] = measure_arch(arch)
    return {"method": "bench/tile_area.py (Yosys generic CMOS transistors, bench/area.py)",
            "entries": list(entries.values())}


def table_rows(e: dict) -> list[tuple[str, list[str]]]:
    """(label, one cell per tile kind) of one measured entry: um2 per part, then the totals and
    the configuration."""
    k, tiles = e["um2_per_transistor"], [e["tiles"][kind] for kind in KINDS]
    rows = [(row, [f"{t['rows'][row] * k:.0f}" for t in tiles]) for row in ROWS]
    for label, key in (("logic (whole tile, flattened)", "logic_um2"),
                       ("SRAM macro (modelled)", "sram_um2"), ("tile total", "total_um2"),
                       ("configuration bits", "config_bits"),
                       ("configuration words", "config_words")):
        rows.append((label, [f"{t[key]:.0f}" for t in tiles]))
    return rows


def format_tiles(data: dict) -> str:
    lines = []
    for e in data["entries"]:
        lines.append(f"tiles of {', '.join(e['archs'])} (fingerprint {e['fingerprint']}), um2:")
        head = f"  {'part':<34}" + "".join(f"{kind:>10}" for kind in KINDS)
        lines += [head, "  " + "-" * (len(head) - 2)]
        lines += [f"  {label:<34}" + "".join(f"{c:>10}" for c in cells)
                  for label, cells in table_rows(e)]
        lines.append("  " + "; ".join(
            f"{kind}: parts sum to {parts_vs_whole_tile(e['tiles'][kind]):+.1f}% of the whole"
            for kind in KINDS))
    return "\n".join(lines)


def markdown(data: dict) -> str:
    """The tables of docs/array.md "Area" (one per measured tile-parameter set)."""
    lines = []
    for e in data["entries"]:
        lines += [f"Tiles of {', '.join(f'`{a}`' for a in e['archs'])} (um2):", "",
                  "| part | " + " | ".join(f"{kind.upper()} tile" for kind in KINDS) + " |",
                  "|---|" + "---:|" * len(KINDS)]
        lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in table_rows(e)]
        lines.append("")
    return "\n".join(lines)


def parts_vs_whole_tile(t: dict) -> float:
    """:func:`area.parts_vs_whole` for a tile (its top-level parts)."""
    top = [p for p in t["parts"] if "." not in p["unit"]]
    return parts_vs_whole({"parts": top, "logic_transistors": t["transistors"]})


def compare(measured: dict, committed: dict) -> list[str]:
    """The archs whose measured tiles differ from (or are missing in) ``committed``."""
    have = {e["fingerprint"]: e for e in committed["entries"]}
    return [", ".join(e["archs"]) for e in measured["entries"]
            if have.get(e["fingerprint"], {}).get("tiles") != e["tiles"]]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", action="append", help="arch name (repeatable; default: every "
                                                    "cgra_* arch)")
    ap.add_argument("--write", action="store_true", help=f"store the figures in {DATA}")
    ap.add_argument("--check", action="store_true",
                    help=f"compare with {DATA}; exit 1 when they differ")
    ap.add_argument("--out", default=str(OUT.parent / "tile_area.json"), help="JSON output")
    ap.add_argument("--markdown", action="store_true",
                    help=f"print the tables of docs/array.md from {DATA} (no synthesis)")
    args = ap.parse_args(argv)
    if args.markdown:
        print(markdown(json.loads(DATA.read_text())))
        return 0
    try:
        data = measure(args.arch or default_archs())
    except (ArchError, AreaError, RuntimeError) as e:
        print(f"tile_area: error: {e}", file=sys.stderr)
        return 1
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(format_tiles(data))
    if args.check:
        bad = compare(data, json.loads(DATA.read_text()))
        if bad:
            print(f"tile_area: {'; '.join(bad)}: differs from {DATA}", file=sys.stderr)
            return 1
        print(f"matches {DATA.relative_to(ROOT)}")
    if args.write:
        DATA.parent.mkdir(parents=True, exist_ok=True)
        DATA.write_text(text)
        print(f"wrote {DATA.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
