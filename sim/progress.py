"""Live progress of a simulation (docs/simulation.md "Output"): the testbench appends one JSON
line per step to a file (``sim.tb.test_e2e.Progress``: stage, done, total, clock cycle, wall
time); :class:`ProgressTail` follows that file from a thread of the parent process while the
simulator runs and shows each stage as it goes: a bar with the stage's progress, the simulated
clock cycles and cycles per second. On a terminal the bar is redrawn in place; otherwise (a
pipe, a log, pytest) a line is printed when a stage starts and ends and at most every
:data:`LINE_SECONDS` in between.
"""
from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Callable, TextIO

__all__ = ["ProgressTail", "render"]

LINE_SECONDS = 10.0
BAR = 24


def render(stage: str, done: int, total: int, cycles: int, rate: float | None) -> str:
    """One progress line: ``run       [#####.....]  2,048 / 4,151  (9,800 clock cycles,
    1,850 cycles/s)``."""
    frac = done / total if total else 1.0
    bar = "#" * round(BAR * frac) + "." * (BAR - round(BAR * frac))
    unit = "cycles" if stage == "run" else "words"
    speed = f", {rate:,.0f} cycles/s" if rate else ""
    return (f"{stage:<10} [{bar}] {done:>9,} / {total:,} {unit}  ({cycles:,} clock cycles"
            f"{speed})")


class ProgressTail(threading.Thread):
    """Follow ``path`` until :meth:`stop`; show each update on ``out`` (module docstring)."""

    def __init__(self, path: Path, out: TextIO | None = None, *,
                 tty: bool | None = None, clock: Callable[[], float] = time.monotonic):
        super().__init__(daemon=True)
        self.path, self.out = Path(path), out or sys.stderr
        self.tty = self.out.isatty() if tty is None else tty
        self.clock = clock
        self._halt = threading.Event()
        self.stage, self.first, self.last_line = None, None, 0.0
        self.lines = 0                  # updates shown

    def run(self) -> None:
        pos = 0
        while True:
            stopping = self._halt.is_set()
            if self.path.exists():
                with open(self.path) as f:
                    f.seek(pos)
                    chunk = f.read()
                complete = chunk[:chunk.rfind("\n") + 1]
                pos += len(complete.encode())
                for line in complete.splitlines():
                    self.update(json.loads(line))
            if stopping:
                break
            self._halt.wait(0.2)
        self.finish()

    def stop(self) -> None:
        self._halt.set()
        self.join()

    def update(self, p: dict) -> None:
        """Show one progress record."""
        new = p["stage"] != self.stage
        if new:
            self.finish()
            self.stage, self.first, self.last_line = p["stage"], p, 0.0
            self.complete = False
        dt = p["t"] - self.first["t"]
        rate = (p["cycle"] - self.first["cycle"]) / dt if dt > 0.05 else None
        text = render(p["stage"], p["done"], p["total"], p["cycle"] - self.first["cycle"], rate)
        self.current = text
        now = self.clock()
        if self.tty:
            self.out.write("\r  " + text)
            self.out.flush()
        elif new or (p["done"] >= p["total"] and not self.complete) \
                or now - self.last_line >= LINE_SECONDS:
            self.out.write("  " + text + "\n")
            self.out.flush()
            self.last_line = now
        self.complete = p["done"] >= p["total"]
        self.lines += 1

    def finish(self) -> None:
        """End the stage's line (a terminal's bar stays as it was last drawn)."""
        if self.tty and self.stage is not None:
            self.out.write("\n")
            self.out.flush()
        self.stage = None
