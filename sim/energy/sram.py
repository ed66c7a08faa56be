"""Energy per access of an SRAM macro (docs/energy.md "SRAM macros"): a first-order analytical
model, the access-energy decomposition of the CACTI memory model (Thoziyoor et al., CACTI 5.1,
HP Labs HPL-2008-20) evaluated with OpenRAM's FreePDK45 parameters and array organisation
(``[sram]`` and ``[technology]`` of ``ubgen/constraints/energy.toml``).

A macro of ``depth`` words of ``width`` bits is an array of ``rows`` x ``cols`` bit cells with
``words_per_row`` words on a row (column multiplexing), ``words_per_row`` the smallest power of
two that makes the row at least as long as the side of a square array (OpenRAM's 512x64 is 128
rows x 256 columns). One access of one port:

* bitlines: every column of the selected row; a read swings one line of each pair by
  ``read_swing`` x Vdd (restored by the precharge: C_bl Vdd dV); a write drives the written
  columns' line full swing (C_bl Vdd^2) and the other columns of the row see a read;
* wordline: ``cols`` cells x (two access gates + the cell's width of wire), full swing;
* precharge enable: ``precharge_gates`` PMOS gates per column, full swing;
* row decoder: the address lines (log2 depth) running the array height, ``address_activity``
  of them toggling;
* sense amplifiers (read) or write drivers (write): one per bit of the word.

Dual-port macros (one read and one write port) use the larger two-port cell; each access drives
its own port's wordline and bitlines. Energies in pJ at the technology's Vdd.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["SRAMModel", "organisation"]


def organisation(depth: int, width: int) -> tuple[int, int, int]:
    """(rows, cols, words_per_row) of a ``depth`` x ``width`` macro."""
    side = math.sqrt(depth * width)
    wpr = 1
    while width * wpr < side and wpr < depth:
        wpr *= 2
    return depth // wpr, width * wpr, wpr


@dataclass(frozen=True)
class SRAMModel:
    vdd: float
    wire_ff_per_um: float
    min_drain_ff: float
    min_gate_ff: float
    beta: float
    cell_um: dict            # kind -> (width along the wordline, height along the bitline)
    bitcell_drain_ff: float
    access_gate_ff: float
    read_swing: float
    column_drains: int
    precharge_gates: int
    sense_amp_ff: float
    write_driver_ff: float
    address_activity: float

    def parts(self, kind: str, depth: int, width: int) -> dict[str, dict[str, float]]:
        """Energy (pJ) of one read and one write access, part by part."""
        if kind not in self.cell_um:
            raise ValueError(f"no SRAM cell of kind {kind!r}")
        rows, cols, _ = organisation(depth, width)
        cw, ch = self.cell_um[kind]
        v, w = self.vdd, self.wire_ff_per_um
        c_bl = rows * (self.bitcell_drain_ff + ch * w) + self.column_drains * self.min_drain_ff
        c_wl = cols * (2 * self.access_gate_ff + cw * w)
        c_pre = cols * self.precharge_gates * self.min_gate_ff * self.beta + cols * cw * w
        abits = max(1, math.ceil(math.log2(depth)))
        c_addr = abits * rows * ch * w * self.address_activity
        fj = 1e-3
        common = {"wordline": c_wl * v * v * fj, "precharge": c_pre * v * v * fj,
                  "decoder": c_addr * v * v * fj}
        read = {"bitlines": cols * c_bl * v * v * self.read_swing * fj,
                "sense amps": width * self.sense_amp_ff * v * v * fj, **common}
        write = {"bitlines": (width * c_bl * v * v
                              + (cols - width) * c_bl * v * v * self.read_swing) * fj,
                 "write drivers": width * self.write_driver_ff * v * v * fj, **common}
        return {"read": read, "write": write}

    def access(self, kind: str, depth: int, width: int) -> tuple[float, float]:
        """(read pJ, write pJ) of one access."""
        p = self.parts(kind, depth, width)
        return sum(p["read"].values()), sum(p["write"].values())

    @classmethod
    def from_toml(cls, tech: dict, sram: dict) -> "SRAMModel":
        return cls(vdd=float(tech["vdd_v"]), wire_ff_per_um=float(tech["wire_ff_per_um"]),
                   min_drain_ff=float(tech["min_tx_drain_ff"]),
                   min_gate_ff=float(tech["min_tx_gate_ff"]), beta=float(tech["beta"]),
                   cell_um={"sp": tuple(sram["cell_sp_um"]), "dp": tuple(sram["cell_dp_um"])},
                   bitcell_drain_ff=float(sram["bitcell_drain_ff"]),
                   access_gate_ff=float(sram["access_gate_ff"]),
                   read_swing=float(sram["read_swing"]),
                   column_drains=int(sram["column_drains"]),
                   precharge_gates=int(sram["precharge_gates"]),
                   sense_amp_ff=float(sram["sense_amp_ff"]),
                   write_driver_ff=float(sram["write_driver_ff"]),
                   address_activity=float(sram["address_activity"]))
