# ubgen — every target creates the project's virtual environment (all from PyPI) when missing.
PY      := .venv/bin/python
UBC     := .venv/bin/ubc
UBGEN   := .venv/bin/ubgen
STAMP   := .venv/.installed
APP     ?= gaussian
ARCH    ?= pub
TARGET  ?= ecp5
DESIGN  ?= pub
JOBS    ?= 2
BENCH_ARCHS ?= cgra_4x4 cgra_4x16 cgra_8x8 cgra_16x32

WORKERS ?= 2
EVAL_ARGS ?=

.PHONY: setup verilog sim test regress fpga bench evaluate clean help

help:
	@echo "make sim APP=gaussian [ARCH=cgra_8x8] [SIZE=\"width=16 height=12\"] [LEVEL=pub]"
	@echo "                        compile, place and route the app, run it on the generated"
	@echo "                        cgra_top in Verilator (data in AXI4 bursts), check it bit-exactly and"
	@echo "                        its cycles (WAVES=1: FST waveform; docs/simulation.md); without"
	@echo "                        ARCH, the smallest shipped array the app fits and routes on;"
	@echo "                        ENERGY=1: also its energy (RTL toggles priced by the arch's"
	@echo "                        gate-level tile characterisation; ENERGY=gate: the whole"
	@echo "                        gate-level cgra_top, about an hour to build; docs/energy.md);"
	@echo "                        BLOCK=N: a layer as channel blocks of N reduction channels"
	@echo "                        (docs/tiling.md)"
	@echo "make test               the test suite (what CI runs)"
	@echo "make regress [WORKERS=2] every app at its Table 7.1 size end to end on the RTL, one"
	@echo "                        Dask point each (EVAL_ARGS=\"--scheduler tcp://H:P\" for a"
	@echo "                        cluster; table into docs/simulation.md), then the large"
	@echo "                        tests (pytest -m regress)"
	@echo "make verilog [ARCH=pub] write generated Verilog and register maps to rtl/"
	@echo "                        (ARCH=cgra_4x4|cgra_4x16|cgra_8x8|cgra_16x32: the whole"
	@echo "                        accelerator too)"
	@echo "make fpga APP=gaussian [TARGET=ecp5|ice40] [SIZE=...]"
	@echo "                        the app as its own FPGA design: checked in Verilator (bit-"
	@echo "                        exact, cycles), then Yosys + nextpnr: LUT4, FF, BRAM, DSP,"
	@echo "                        Fmax, time per output value (ubc fpga; docs/fpga.md)"
	@echo "make fpga TARGET=ice40|ecp5 DESIGN=pub|dpbuf|pe|pe_tile|mem_tile|cgra_2x2|cgra_4x4"
	@echo "                        Yosys + nextpnr report under build/fpga/ (docs/fpga.md)"
	@echo "make fpga BITSTREAM=build/.../<app>-<arch>.bitstream.json [TARGET=ecp5]"
	@echo "                        the array configured for one app, folded, checked, routed"
	@echo "make bench              benchmarks: PUB vs DP area; Verilator build time and cycles/s of"
	@echo "                        the arrays in BENCH_ARCHS (default: cgra_4x4 cgra_4x16 cgra_8x8"
	@echo "                        cgra_16x32; ~30 min; docs/array.md)"
	@echo "make evaluate [WORKERS=2]  the thesis/paper evaluation on the sweep engine (Dask,"
	@echo "                        WORKERS local processes; EVAL_ARGS=\"--scheduler tcp://H:P\" for a"
	@echo "                        cluster): writes docs/evaluation.md and docs/img/fig7_*.png,"
	@echo "                        prints the wall time; points cached in build/sweep/cache"
	@echo "                        (docs/sweep.md)"
	@echo "make setup | clean"

$(STAMP): pyproject.toml
	python3 -m venv .venv
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[halide]"
	touch $(STAMP)

setup: $(STAMP)

verilog: $(STAMP)
	$(UBGEN) verilog --arch $(ARCH) --out rtl

# ARCH defaults to pub for `make verilog`; sim uses its own default (the smallest shipped array
# the app fits and routes on, docs/cli.md) unless ARCH is given on the command line.
SIM_ARGS = $(APP) $(if $(filter command line,$(origin ARCH)),--arch $(ARCH)) \
           $(foreach s,$(SIZE),--size $(s)) $(if $(LEVEL),--level $(LEVEL)) \
           $(if $(SEED),--seed $(SEED)) \
           $(if $(filter gate,$(ENERGY)),--energy gate,$(if $(filter-out 0,$(ENERGY)),--energy)) \
           $(if $(BLOCK),--block $(BLOCK))

sim: $(STAMP)
	$(UBC) sim $(SIM_ARGS)

test: $(STAMP)
	$(PY) -m pytest -n $(JOBS) -q

regress: $(STAMP)
	$(UBC) regress --workers $(WORKERS) --doc $(EVAL_ARGS); status=$$?; \
	$(PY) -m pytest -n $(JOBS) -q -m regress -o addopts="" && exit $$status

# make fpga APP=<app|file.py> [TARGET=ecp5|ice40] [SIZE=...]: the app's own FPGA design
# (ubc fpga: Verilator check, Yosys, nextpnr); make fpga DESIGN=<block|tile|cgra_4x4>: a
# generated block (ubgen fpga). APP given on the command line wins over the DESIGN default.
# make fpga BITSTREAM=<file>: the array configured by a bitstream `ubc pnr APP --out DIR` wrote.
FPGA_APP := $(if $(filter command line,$(origin DESIGN)),,$(filter command line,$(origin APP)))

fpga: $(STAMP)
ifneq ($(BITSTREAM),)
	$(UBGEN) fpga --target $(TARGET) --bitstream $(BITSTREAM)
else ifneq ($(FPGA_APP),)
	$(UBC) fpga $(APP) --target $(TARGET) $(foreach s,$(SIZE),--size $(s))
else
	$(UBGEN) fpga --target $(TARGET) --design $(DESIGN)
endif

bench: $(STAMP)
	$(PY) bench/area.py
	$(PY) bench/cgra.py --arch $(BENCH_ARCHS)
	$(PY) bench/pnr.py
	$(PY) bench/e2e.py

evaluate: $(STAMP)
	$(UBC) evaluate --workers $(WORKERS) $(EVAL_ARGS)

clean:
	rm -rf build rtl/*.v rtl/*.json .pytest_cache .hypothesis
