"""Producers as late as possible (compiler/schedule/delay.py): cycles, SRAM words (live words of
the optimized schedule) and MEMs of every app and example, with the producers started as early
as possible (``--no-delay``) and as late as their consumers allow (the default).

    .venv/bin/python bench/late_inputs.py [APP_OR_FILE ...] [--arch A]

Prints one line per app; docs/scheduling.md ("Inputs as late as possible") quotes it.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def figures(app: str, arch, delay: bool) -> tuple[int, int, int, int]:
    """(cycles, SRAM words, SRAM words as written, MEMs) of ``app``."""
    from compiler.schedule.liveness import total_live_words
    from compiler.pipeline import compile_app
    mapped = compile_app(app, arch, delay=delay, until="map")
    res, impls = mapped.scheduled, mapped.impls
    written = compile_app(app, arch, balance=False, delay=delay, until="schedule").scheduled
    mems = sum(i.mems for i in impls.values()) if not mapped.refused else -1
    return (res.optimized.completion, total_live_words(res.live_optimized),
            total_live_words(written.live_optimized), mems)


def main(argv=None) -> int:
    from apps import NAMES
    from ubgen.arch import load_arch
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("apps", nargs="*", default=list(NAMES) + sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "examples").glob("*.py")))
    ap.add_argument("--arch", default="pub")
    args = ap.parse_args(argv)
    arch = load_arch(args.arch)
    print(f"{'app':<32} {'cycles':>17} {'SRAM words':>17} {'as written':>17} {'MEMs':>9}")
    for app in args.apps:
        a, b = figures(app, arch, False), figures(app, arch, True)
        cells = [f"{x} -> {y}" for x, y in zip(a, b)]
        print(f"{app:<32} {cells[0]:>17} {cells[1]:>17} {cells[2]:>17} {cells[3]:>9}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
