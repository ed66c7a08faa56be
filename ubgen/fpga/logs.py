"""Parsers of the tools' reports: nextpnr's utilisation and Fmax, Yosys's cell statistics."""
from __future__ import annotations

import re

__all__ = ["parse_nextpnr_log", "overflow", "parse_yosys_stat", "last_error"]


_UTIL_RE = re.compile(r"^Info:\s+([A-Za-z0-9_$]+):\s+(\d+)/\s*(\d+)\s+\d+%", re.M)
_FMAX_RE = re.compile(r"Max frequency for clock\s+'([^']+)':\s+([\d.]+)\s+MHz\s+"
                      r"\((PASS|FAIL) at ([\d.]+) MHz\)")


def parse_nextpnr_log(text: str) -> dict:
    """Utilisation (bel type -> used/available, from the last "Device utilisation" block) and
    the final "Max frequency for clock" line of a nextpnr log."""
    util: dict[str, dict[str, int]] = {}
    blocks = text.split("Device utilisation:")
    if len(blocks) > 1:
        last = blocks[-1]
        # the block ends at the first line that is not a utilisation row
        rows = []
        for line in last.splitlines()[1:]:
            mo = _UTIL_RE.match(line)
            if not mo:
                if line.strip() in ("Info:", "") and not rows:
                    continue
                break
            rows.append(mo)
        for mo in rows:
            util[mo.group(1)] = {"used": int(mo.group(2)), "available": int(mo.group(3))}
    fmax = None
    clocks = {}
    for mo in _FMAX_RE.finditer(text):
        clocks[mo.group(1)] = {"fmax_mhz": float(mo.group(2)), "pass": mo.group(3) == "PASS",
                               "constraint_mhz": float(mo.group(4))}
    if clocks:
        fmax = min(c["fmax_mhz"] for c in clocks.values())
    return {"utilisation": util, "clocks": clocks, "fmax_mhz": fmax}


def overflow(parsed: dict) -> list[str]:
    """``"<bel> used/available"`` for every resource a parsed nextpnr log over-uses."""
    return [f"{bel} {u['used']}/{u['available']}" for bel, u in parsed["utilisation"].items()
            if u["used"] > u["available"]]


def parse_yosys_stat(stat: dict) -> dict[str, int]:
    """Cell type -> count of the top module from ``stat -json`` output."""
    design = stat.get("design") or next(iter(stat["modules"].values()))
    return {k: int(v) for k, v in design["num_cells_by_type"].items()}


def last_error(log: str) -> str:
    """The last error line of a tool's log (else its last line)."""
    for line in reversed(log.splitlines()):
        if "ERROR" in line or "error:" in line.lower():
            return line.strip()
    lines = [l for l in log.splitlines() if l.strip()]
    return lines[-1].strip() if lines else "no output"
