"""What every part of the FPGA flow shares: where constraints and builds live, the one-line
error, and the LUT mappings (docs/fpga.md "Mapping")."""
from __future__ import annotations

from ..paths import CONSTRAINTS_DIR as _PACKAGE_CONSTRAINTS, build_dir

__all__ = ["CONSTRAINTS_DIR", "BUILD_DIR", "FPGAError", "MAPPINGS", "DEFAULT_MAPPING",
           "check_mapping"]

CONSTRAINTS_DIR = _PACKAGE_CONSTRAINTS / "fpga"
BUILD_DIR = build_dir("fpga")


class FPGAError(RuntimeError):
    """A flow input is wrong or a tool failed; the message is one line naming the cause."""


# How ABC maps the logic onto LUTs (``--mapping``; docs/fpga.md "Mapping").
MAPPINGS = {
    "delay": "the stock synth_<target> script: ABC maps every module for its minimum delay",
    "area": "ABC maps for the clock constraint (abc9 delay target = the constraint's period, "
            "area recovered on every path below it); on ECP5 the 4:1 and 8:1 mux trees first "
            "go to the slices' PFUMX / L6MUX21 (muxcover + ubgen/constraints/fpga/ecp5_widemux.v)",
}
DEFAULT_MAPPING = "delay"     # a design's own default: FPGADesign.mapping


def check_mapping(mapping: str) -> str:
    if mapping not in MAPPINGS:
        raise FPGAError(f"unknown mapping '{mapping}' (choose from {', '.join(MAPPINGS)})")
    return mapping
