"""Run an application's FPGA design in Verilator and check it (docs/fpga.md "Applications on
the FPGA"), the same kind of verdict as ``make sim`` (docs/simulation.md).

``run_design(design, vectors) -> dict``:

1. the design's Verilog from its description (``ubgen.fpga.app.AppDesign``; the description
   and the host vectors are the compiler's artifacts, ``compiler.fpga``);
2. a Verilog testbench for its ports: the host side of every stream. An input stream's words
   (``vectors["inputs"][k]``) are offered one at a time, the next one after each cycle in which
   the design takes one (a first-word-fall-through FIFO, as a DMA engine would feed it); every
   output word is logged with its stream; the run ends when the design says ``done`` (or
   after ``limit`` cycles) and the testbench logs the design's ``last_write`` and ``writes``
   counters and how many words each input stream took;
3. one Verilator model per design (``build/sim/fpga/<app>-<sha16>/``: the Verilog's SHA-256;
   a second run of the same design reuses it);
4. the verdict: ``passed`` when every output stream gave exactly its number of words, every
   word the host keeps (``vectors["outputs"][k]["expected"]``: the last write of each element,
   from the golden) is bit-exact, every input stream took exactly its words, the design
   finished, ``writes`` equals the number of output words and ``cycles_measured`` (the
   design's ``last_write`` counter: the unstalled cycle of its last output write) equals the
   schedule's ``cycles_predicted``.

``python -m sim.fpga_run DIR`` runs ``DIR/design.json`` with ``DIR/vectors.json`` and writes
``DIR/sim.json``; exit status 0 on a pass, 1 on a failed check, 2 on bad input.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .runner import BUILD, build_model, locked

__all__ = ["run_design", "model_for_design", "testbench", "verdict", "FPGA_BUILD", "RunError"]

FPGA_BUILD = BUILD / "fpga"
TOP = "tb"


class RunError(RuntimeError):
    """The simulation could not run (bad input, build failure, crash): one line."""


def _ports(design: dict) -> tuple[int, int]:
    ins = sum(n["kind"] == "in" for n in design["nodes"])
    outs = sum(n["kind"] == "out" for n in design["nodes"])
    return ins, outs


def testbench(design: dict, lengths: list[int]) -> str:
    """The Verilog testbench of ``design`` (module docstring); ``lengths[k]``: the words of
    input stream ``k`` (read from ``in<k>.hex`` in the working directory)."""
    ins, outs = _ports(design)
    cw = int(design["cycle_width"])
    lines = ["`timescale 1ns/1ps", f"module {TOP};",
             "  reg clk = 0;", "  reg rst = 1;", "  reg run = 0;", "  always #5 clk = ~clk;",
             f"  wire [{cw - 1}:0] cycle, last_write;", "  wire [31:0] writes;", "  wire done;"]
    conn = [".clk(clk)", ".rst(rst)", ".run(run)", ".cycle(cycle)", ".last_write(last_write)",
            ".writes(writes)", ".done(done)"]
    for k in range(ins):
        n = max(1, lengths[k])
        lines += [f"  reg [15:0] in{k}_mem [0:{n - 1}];", f"  integer in{k}_i = 0;",
                  f"  wire [15:0] in{k}_data = (in{k}_i < {lengths[k]}) ? in{k}_mem[in{k}_i] "
                  f": 16'd0;", f"  wire in{k}_take;"]
        conn += [f".in{k}_data(in{k}_data)", f".in{k}_take(in{k}_take)"]
    for k in range(outs):
        lines += [f"  wire [15:0] out{k}_data;", f"  wire out{k}_valid;"]
        conn += [f".out{k}_data(out{k}_data)", f".out{k}_valid(out{k}_valid)"]
    lines += ["  app dut (" + ", ".join(conn) + ");",
              "  integer fo, limit, ticks = 0, quiet = 0;",
              "  initial begin",
              "    if (!$value$plusargs(\"limit=%d\", limit)) limit = 1000000;"]
    lines += [f"    if ({lengths[k]} > 0) $readmemh(\"in{k}.hex\", in{k}_mem);" for k in range(ins)]
    lines += ["    fo = $fopen(\"out.txt\", \"w\");",
              "    @(negedge clk); @(negedge clk); rst = 0;",
              "    @(negedge clk); run = 1;",
              "  end",
              "  always @(posedge clk) begin",
              "    if (run) begin",
              "      ticks <= ticks + 1;"]
    for k in range(ins):
        lines.append(f"      if (in{k}_take) in{k}_i <= in{k}_i + 1;")
    for k in range(outs):
        lines.append(f"      if (out{k}_valid) $fwrite(fo, \"o {k} %0d\\n\", out{k}_data);")
    taken = " ".join(f"%0d" for _ in range(ins))
    args = "".join(f", in{k}_i" for k in range(ins))
    lines += ["      if (done) quiet <= quiet + 1;",
              "      if (quiet == 4 || ticks >= limit) begin",
              f"        $fwrite(fo, \"end %0d %0d %0d %0d {taken}\\n\", done, last_write, "
              f"writes, ticks{args});",
              "        $fclose(fo);", "        $finish;", "      end", "    end", "  end",
              "endmodule"]
    return "\n".join(lines) + "\n"


def design_verilog(design: dict) -> str:
    """The design's Verilog (module ``app``)."""
    from amaranth.back import verilog
    from ubgen.fpga.app import AppDesign, AppDesignError
    try:
        return verilog.convert(AppDesign(design), name="app", emit_src=False)
    except AppDesignError as e:
        raise RunError(str(e)) from None


def model_for_design(design: dict, lengths: list[int], log=None) -> dict:
    """The Verilator model of ``design`` with its testbench, built unless a model of the same
    Verilog exists. Returns ``{"binary", "build_dir", "sha256", "verilog_seconds",
    "verilator_build_seconds", "cached"}``."""
    say = log or (lambda msg: None)
    t = time.perf_counter()
    app_v = design_verilog(design)
    tb_v = testbench(design, lengths)
    vsec = time.perf_counter() - t
    sha = hashlib.sha256(app_v.encode() + b"\0" + tb_v.encode()).hexdigest()
    name = f"{_safe(design['app'])}-{sha[:16]}"
    build_dir = FPGA_BUILD / name
    stamp = build_dir / "model.json"
    binary = build_dir / "obj" / TOP
    say(f"Verilog: {len(app_v.splitlines())} lines, sha256 {sha[:16]} ({vsec:.1f} s)")
    with locked(FPGA_BUILD / f".{name}.lock"):
        cached = stamp.exists() and binary.exists()
        seconds = 0.0
        if not cached:
            say(f"Verilator build: {build_dir} ...")
            t = time.perf_counter()
            src = Path(tempfile.mkdtemp(prefix=".src-", dir=FPGA_BUILD))
            try:
                (src / "app.v").write_text(app_v)
                (src / "tb.v").write_text(tb_v)
                try:
                    build_model(name=f"fpga/{name}", sources=[src / "app.v", src / "tb.v"],
                                top=TOP, timing=True, opt="-O1")
                except RuntimeError as e:
                    raise RunError(f"Verilator build failed: {e}") from None
                for f in ("app.v", "tb.v"):
                    shutil.copy(src / f, build_dir / f)
            finally:
                shutil.rmtree(src, ignore_errors=True)
            seconds = time.perf_counter() - t
            stamp.write_text(json.dumps({"sha256": sha, "app": design["app"],
                                         "seconds": round(seconds, 1)}))
            say(f"Verilator build done in {seconds:.0f} s")
        else:
            say(f"Verilator build: cached ({build_dir.name})")
    return {"binary": binary, "build_dir": build_dir, "sha256": sha, "verilog_seconds": vsec,
            "verilator_build_seconds": seconds, "cached": cached}


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in name)


def _check_vectors(design: dict, vectors: dict) -> None:
    ins, outs = _ports(design)
    if len(vectors.get("inputs", [])) != ins or len(vectors.get("outputs", [])) != outs:
        raise RunError(f"the vectors have {len(vectors.get('inputs', []))} input and "
                       f"{len(vectors.get('outputs', []))} output streams, the design {ins} and "
                       f"{outs}")
    for k, words in enumerate(vectors["inputs"]):
        if any(not 0 <= w < 1 << 16 for w in words):
            raise RunError(f"input stream {k} has a word outside 16 bits")


def run_design(design: dict, vectors: dict, *, model: dict | None = None, log=None,
               keep: bool | None = None) -> dict:
    """Run ``design`` on ``vectors`` (module docstring); returns the observations and the
    verdict (:func:`verdict`). ``keep``: keep the run directory always (True), never (False)
    or when the run fails (None)."""
    say = log or (lambda msg: None)
    _check_vectors(design, vectors)
    lengths = [len(w) for w in vectors["inputs"]]
    if model is None:
        model = model_for_design(design, lengths, log)
    runs = FPGA_BUILD / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    run_dir = Path(tempfile.mkdtemp(dir=runs, prefix=f"{_safe(design['app'])}-"))
    for k, words in enumerate(vectors["inputs"]):
        (run_dir / f"in{k}.hex").write_text("".join(f"{w:04x}\n" for w in words))
    limit = 2 * int(vectors["cycles_predicted"]) + 1000
    say(f"simulate: {sum(lengths)} input words, {vectors['output_writes']} output words, "
        f"{vectors['cycles_predicted']} cycles predicted")
    t = time.perf_counter()
    proc = subprocess.run([str(model["binary"]), f"+limit={limit}"], cwd=run_dir,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - t
    (run_dir / "sim.log").write_text(proc.stdout + proc.stderr)
    out = run_dir / "out.txt"
    if proc.returncode or not out.exists():
        raise RunError(f"the simulation failed (exit {proc.returncode}); see {run_dir}/sim.log")
    res = parse_output(out.read_text(), len(vectors["outputs"]), len(lengths))
    res.update(verdict(res, vectors))
    res.update(sim_seconds=round(seconds, 2), model_sha256=model["sha256"],
               verilator_build_seconds=round(model["verilator_build_seconds"], 1),
               verilog_seconds=round(model["verilog_seconds"], 2))
    if keep is False or (keep is None and res["passed"]):
        shutil.rmtree(run_dir, ignore_errors=True)
    else:
        res["run_dir"] = str(run_dir)
    return res


def parse_output(text: str, outs: int, ins: int) -> dict:
    """The testbench's log: the words of every output stream, the design's counters, the
    words each input stream took, whether the design said done."""
    words: list[list[int]] = [[] for _ in range(outs)]
    end = None
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "o":
            words[int(f[1])].append(int(f[2]))
        elif f and f[0] == "end":
            end = [int(x) for x in f[1:]]
    if end is None or len(end) != 4 + ins:
        raise RunError("the testbench log has no end line")
    done, last_write, writes, ticks = end[:4]
    return {"outputs": words, "done": bool(done), "last_write": last_write, "writes": writes,
            "ticks": ticks, "taken": end[4:]}


def verdict(res: dict, vectors: dict) -> dict:
    """``match``, ``cycles_measured``, ``passed`` and the reasons a run fails."""
    why, bad = [], []
    for k, (got, want) in enumerate(zip(res["outputs"], vectors["outputs"])):
        if len(got) != want["fires"]:
            why.append(f"output stream {k} ({want['buffer']}) gave {len(got)} words, "
                       f"{want['fires']} expected")
        for f, value in want["expected"]:
            if f >= len(got) or got[f] != value:
                bad.append(f"output stream {k} word {f} = "
                           f"{got[f] if f < len(got) else 'missing'}, expected {value}")
    if bad:
        why.append(f"{len(bad)} output words differ (first: {bad[0]})")
    for k, (n, words) in enumerate(zip(res["taken"], vectors["inputs"])):
        if n != len(words):
            why.append(f"input stream {k} took {n} words, {len(words)} supplied")
    if not res["done"]:
        why.append(f"the design did not finish within {res['ticks']} cycles")
    if res["writes"] != vectors["output_writes"]:
        why.append(f"{res['writes']} output writes counted, {vectors['output_writes']} "
                   f"expected")
    measured = res["last_write"] if res["writes"] else None
    if measured != vectors["cycles_predicted"]:
        why.append(f"cycles measured {measured} != predicted {vectors['cycles_predicted']}")
    return {"match": not bad and all(len(g) == w["fires"] for g, w in
                                     zip(res["outputs"], vectors["outputs"])),
            "mismatches": len(bad), "mismatch_first": bad[:5], "cycles_measured": measured,
            "cycles_predicted": vectors["cycles_predicted"], "passed": not why,
            "failures": why}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m sim.fpga_run", description="Run an "
                                "application's FPGA design (DIR/design.json, from ubc fpga) "
                                "in Verilator on DIR/vectors.json and check it; writes "
                                "DIR/sim.json (docs/fpga.md).")
    p.add_argument("dir", metavar="DIR", help="directory with design.json and vectors.json")
    p.add_argument("--keep", action="store_true", help="keep the run directory")
    args = p.parse_args(argv)
    d = Path(args.dir)

    def say(msg):
        print(f"[fpga sim] {msg}", flush=True)
    try:
        design = json.loads((d / "design.json").read_text())
        vectors = json.loads((d / "vectors.json").read_text())
        res = run_design(design, vectors, log=say, keep=True if args.keep else None)
    except (OSError, ValueError, KeyError, RunError) as e:
        print(f"error: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
              file=sys.stderr)
        return 2
    res.pop("outputs")
    tmp = d / ".sim.json.tmp"
    tmp.write_text(json.dumps(res, indent=1) + "\n")
    tmp.replace(d / "sim.json")
    if res["passed"]:
        say(f"PASS: {vectors['output_writes']} output words, bit-exact; cycles measured "
            f"{res['cycles_measured']} == predicted {res['cycles_predicted']} "
            f"(simulated in {res['sim_seconds']:.1f} s)")
        return 0
    say("FAIL: " + "; ".join(res["failures"]))
    return 1


if __name__ == "__main__":
    sys.exit(main())
