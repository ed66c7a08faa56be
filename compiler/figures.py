"""The published figures the project measures itself against (docs/design.md §7), transcribed
once: the paper's Tables IV-VII and the thesis's chapter-7 tables. The evaluation
(``compiler.sweep.evaluate``), ``make sim``'s summary and the benchmarks read them here; they
are references to compare with, never inputs of the compiler or thresholds of a check.
"""
from __future__ import annotations

# paper Table IV (CGRA usage): app -> (PEs, MEMs)
PAPER_IV = {"gaussian": (19, 1), "harris": (83, 5), "upsample": (0, 1), "unsharp": (56, 6),
            "camera": (397, 8), "resnet": (128, 81), "mobilenet": (114, 7)}
# paper Table VI: app -> (sequential cycles, optimized cycles)
PAPER_VI = {"gaussian": (27159, 4102), "harris": (92227, 4120), "upsample": (53247, 16387),
            "unsharp": (49279, 4119), "camera": (92013, 4122), "resnet": (44876, 15614),
            "mobilenet": (22463, 1026)}
# paper Table VII: app -> (sequential SRAM words, final SRAM words)
PAPER_VII = {"gaussian": (11784, 128), "harris": (41080, 640), "upsample": (20480, 67),
             "unsharp": (23584, 834), "camera": (37972, 518), "resnet": (14048, 14048),
             "mobilenet": (9136, 1240)}
# thesis Table 7.2: row -> (MEM area um2, SRAM area %)
THESIS_7_2 = {"Buffet": (14.3e3, 86), "DP SRAM + PEs": (31.1e3, 40),
              "DP SRAM + AG": (16.7e3, 74), "4 Wide SP SRAM +AGG +TB +AGs (PUB)": (13.7e3, 42)}
# thesis Table 7.3 (memories) and 7.4 (RTL latency): app -> (PUB, DP+AG, Buffet)
THESIS_7_3 = {"upsample": (1, 2, 2), "gaussian": (1, 2, 6), "harris": (5, 11, 23),
              "resnet": (80, 80, 80)}
THESIS_7_4 = {"upsample": (16399, 16383, 16401), "gaussian": (4095, 4095, 4100),
              "harris": (4095, 4095, 4139), "resnet": (9807, 8739, 8751)}
# thesis Table 7.5: app -> (extra PEs for address generation, the same with PEs optimised for
# it, PEs for computation)
THESIS_7_5 = {"gaussian": (156, 19, 19), "harris": (768, 91, 103), "upsample": (66, 15, 0),
              "unsharp": (612, 72, 101), "camera": (656, 146, 331), "laplacian": (660, 100, 89),
              "resnet": (755, 237, 128), "mobilenet": (918, 268, 96), "gemm": (508, 353, 223)}
# thesis Table 7.8: app -> (original MEMs, MEMs after, registers added)
THESIS_7_8 = {"gaussian": (9, 1, 6), "harris": (67, 5, 30), "unsharp": (66, 6, 40),
              "camera": (158, 25, 26), "resnet": (136, 81, 0)}
# thesis §7.3.1 (Fig. 7.5 text): the unroll a designer would pick on the 16x32 array (384 PEs,
# 128 MEMs); the figure's own points are only in the plots. Paper Table V sch3/sch4 give harris
# at unroll 1 and 2: (PEs, MEMs, cycles).
FIG_7_5_CHOICE = {"gaussian": 16, "harris": 3, "unsharp": 3, "resnet": 8, "gemm": 8}
PAPER_V_HARRIS = {1: (83, 5, 4146), 2: (194, 10, 2154)}

# thesis Table 7.2, the 3x3 convolution's buffer: area (um2) and SRAM share (%) of the PUB and
# the dual-port SRAM with address generators (bench/area.py)
THESIS_7_2_AREA = {"pub_um2": THESIS_7_2["4 Wide SP SRAM +AGG +TB +AGs (PUB)"][0],
                   "pub_sram_pct": THESIS_7_2["4 Wide SP SRAM +AGG +TB +AGs (PUB)"][1],
                   "dp_um2": THESIS_7_2["DP SRAM + AG"][0],
                   "dp_sram_pct": THESIS_7_2["DP SRAM + AG"][1]}

# thesis Table 7.2, energy columns: row -> (MEM energy pJ per access, SRAM energy %) (16 nm
# gate-level simulation); the PUB / DP+AG ratio is the figure to explain (bench/energy.py)
THESIS_7_2_ENERGY_ROWS = {"Buffet": (3.9, 84), "DP SRAM + PEs": (4.8, 70),
                          "DP SRAM + AG": (3.6, 92),
                          "4 Wide SP SRAM +AGG +TB +AGs (PUB)": (2.5, 61)}
THESIS_7_2_ENERGY = {**THESIS_7_2_ENERGY_ROWS,
                     "ratio": (THESIS_7_2_ENERGY_ROWS["4 Wide SP SRAM +AGG +TB +AGs (PUB)"][0]
                               / THESIS_7_2_ENERGY_ROWS["DP SRAM + AG"][0])}
# thesis Table 7.6 (PEs without / with compute sharing) and Table 7.7 (memories without / with
# sharing, and the extra memory tiles used as bank selection controllers)
THESIS_7_6 = {"gpyr": (16, 6), "srcnn": (656, 182)}
THESIS_7_7 = {"gpyr": (3, 12, 8), "srcnn": (48, 48, 24)}
# thesis §7.3.1-7.3.2: Figures 7.6-7.9 are plots; their text gives these changes
THESIS_FIG_TEXT = {
    "7.6": "gpyr: sharing nearly doubles the PEs' temporal occupancy; latency about +40%",
    "7.7": "SR-CNN: sharing improves the PEs' temporal occupancy by 40%; latency about 2x",
    "7.8": "ResNet layers: occupancy rises with double buffering (DB), loop optimizations (LO) "
           "add about 10% (more for the early layers), a quad-port single-fetch memory about "
           "10% more than the 4-wide PUB",
    "7.9": "ResNet layers: the PUB's two-in/two-out ports give about +50% occupancy over a "
           "dual-port (1 read, 1 write) memory, except the first (7x7) layer",
}
