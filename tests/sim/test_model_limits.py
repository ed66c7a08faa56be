"""The Verilator model's limits against C++ functions too large to compile
(sim/array_run.py ``ModelOptions.split_cfuncs``, ``big_file_bytes`` / ``opt_big``): the options
reach Verilator and the model's key, the oversized files are found in a Verilated model's class
lists, and make compiles exactly those at the lower level (checked with GNU make on a makefile of
Verilator's shape)."""
from __future__ import annotations

import os
import subprocess
from dataclasses import replace

import pytest

from sim.array_run import (OVERSIZED_MK, ModelOptions, model_key, oversized_files,
                           oversized_rules)

CLASSES = """\
# Generated module classes, fast-path, compile with highest optimization
VM_CLASSES_FAST += \\
  Vtop \\
  Vtop___024root__0 \\
  Vtop___024root__1 \\

# Generated module classes, non-fast-path, compile with low/medium optimization
VM_CLASSES_SLOW += \\
  Vtop___024root__0__Slow \\

"""

# verilated.mk's compile rule of the evaluation code (its shape: the precompiled header given
# by VK_PCH_I_FAST, OPT_FAST first), printing the flags instead of compiling
MAKEFILE = """\
VK_PCH_H = Vtop__pch.h
VK_PCH_I_FAST = $(CFG_CXXFLAGS_PCH_I) Vtop__pch.h.fast
OBJS = Vtop___024root__0.o Vtop___024root__1.o
all: $(OBJS)
$(OBJS): %.o: %.cpp
\t@echo "$@ $(OPT_FAST) $(VK_PCH_I_FAST)"
"""


def _model_dir(tmp_path, sizes):
    d = tmp_path / "model"
    (d / "Vblk").mkdir(parents=True)
    (d / "Vtop_classes.mk").write_text(CLASSES)
    (d / "Vblk" / "Vblk_classes.mk").write_text(CLASSES.replace("Vtop", "Vblk"))
    for name, size in sizes.items():
        (d / name).write_bytes(b"x" * size)
    return d


def test_the_limits_reach_verilator_and_the_key():
    base = ModelOptions()
    assert "--output-split-cfuncs" not in base.verilator_args()
    split = replace(base, split_cfuncs=2000)
    args = split.verilator_args()
    assert args[args.index("--output-split-cfuncs") + 1] == "2000"
    big = replace(base, big_file_bytes=4_000_000, opt_big="-O1")
    keys = {model_key("v", o, False) for o in (base, split, big,
                                               replace(big, opt_big="-O0"))}
    assert len(keys) == 4
    # off, the options stay out of the key: the models built before them keep theirs
    assert model_key("v", replace(base, split_cfuncs=0), False) == model_key("v", base, False)


def test_inconsistent_limits_are_refused():
    with pytest.raises(ValueError, match="go together"):
        ModelOptions(big_file_bytes=4_000_000)
    with pytest.raises(ValueError, match="go together"):
        ModelOptions(opt_big="-O1")
    with pytest.raises(ValueError, match="AST nodes"):
        ModelOptions(split_cfuncs=-1)


def test_oversized_files_are_the_large_evaluation_files(tmp_path):
    d = _model_dir(tmp_path, {"Vtop.cpp": 10, "Vtop___024root__0.cpp": 5000,
                              "Vtop___024root__1.cpp": 100,
                              "Vtop___024root__0__Slow.cpp": 9000,     # construction code
                              "Vblk/Vblk___024root__1.cpp": 4001, "Vblk/Vblk.cpp": 4000})
    found = [str(f.relative_to(d)) for f in oversized_files(d, 4000)]
    assert found == ["Vtop___024root__0.cpp", "Vblk/Vblk___024root__1.cpp"]
    assert oversized_files(d, 10_000) == []


def test_make_compiles_only_the_oversized_file_at_the_lower_level(tmp_path):
    d = _model_dir(tmp_path, {"Vtop___024root__0.cpp": 5000, "Vtop___024root__1.cpp": 100})
    (d / "Vtop.mk").write_text(MAKEFILE)
    rules = d / OVERSIZED_MK
    rules.write_text(oversized_rules(oversized_files(d, 4000), "-O1"))
    cmd = ["make", "-s", "-C", str(d), "-f", "Vtop.mk", "OPT_FAST=-O2",
           "CFG_CXXFLAGS_PCH_I=-include"]

    def flags(env):
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
        return dict(line.split(" ", 1) for line in out.splitlines())

    with_rules = flags(dict(os.environ, MAKEFILES=str(rules)))
    assert with_rules == {"Vtop___024root__0.o": "-O1 -include Vtop__pch.h",
                          "Vtop___024root__1.o": "-O2 -include Vtop__pch.h.fast"}
    # the negative control: without the rules both files get the command line's level
    env = {k: v for k, v in os.environ.items() if k != "MAKEFILES"}
    assert flags(env) == {"Vtop___024root__0.o": "-O2 -include Vtop__pch.h.fast",
                          "Vtop___024root__1.o": "-O2 -include Vtop__pch.h.fast"}
