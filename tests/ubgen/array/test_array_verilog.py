"""Verilog output of the array: one module per tile kind plus the array that instantiates
them (ubgen.array.write_verilog)."""
from __future__ import annotations

import re
import time

import pytest

from ubgen.arch import load_arch
from ubgen.array import ARRAY_MODULE, tile_module, write_verilog
from ubgen.array.layout import ArrayLayout


def check_array_verilog(arch, out):
    t = time.perf_counter()
    paths = write_verilog(arch, out)
    elapsed = time.perf_counter() - t
    names = sorted(p.name for p in paths)
    assert names == sorted([f"{ARRAY_MODULE}.v"] + [f"{tile_module(k)}.v"
                                                    for k in ("io", "pe", "mem")])
    assert not list(out.glob("*.tmp"))
    top = (out / f"{ARRAY_MODULE}.v").read_text()
    assert re.search(rf"^module {ARRAY_MODULE}\(", top, re.M)
    lay = ArrayLayout(arch)
    for kind in ("io", "pe", "mem"):
        n = sum(1 for p in lay.positions() if p.kind == kind)
        assert len(re.findall(rf"^\s*{tile_module(kind)} ", top, re.M)) == n, kind
        text = (out / f"{tile_module(kind)}.v").read_text()
        assert re.search(rf"^module {tile_module(kind)}\(", text, re.M)
    return elapsed


def test_cgra_4x4_verilog(tmp_path):
    check_array_verilog(load_arch("cgra_4x4"), tmp_path)
    before = {p: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    write_verilog(load_arch("cgra_4x4"), tmp_path)           # unchanged files are not rewritten
    assert {p: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before


@pytest.mark.regress
def test_cgra_16x32_verilog(tmp_path):
    elapsed = check_array_verilog(load_arch("cgra_16x32"), tmp_path)
    print(f"cgra_16x32 Verilog: {elapsed:.1f} s")
    assert elapsed < 600
