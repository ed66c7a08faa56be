"""Block-level runs of the buffet (thesis §6.2; ``ubgen.buffet``) with the compiler's buffet
configurations (``compiler.mapping.buffet``), under random back-pressure.

A *job* is one buffet of an application: the compiler maps the app onto dual-port memories
(``[mem] kind = "dp"``), turns each block's global schedule into the buffet's local one
(:func:`compiler.mapping.buffet.buffet_config`), and the job carries

* ``fills``: the words the block's write stream delivers (random, seeded), in order;
* ``requests``: ``(idx, shrink)`` of every read, from the configuration's affine address
  generator (:func:`ubgen.buffet.spec.requests`: the buffet has none of its own, thesis §6.2);
* ``expected``: the golden read stream, the words the static dual-port block delivers to its
  reads from the same writes (:func:`compiler.mapping.dp_model.simulate_dp` on the block's encoded
  registers; buffer mapping checks that model against the unified buffer's specification).

:class:`BuffetDriver` is the host side of one job, cycle by cycle, independent of the simulator:
``drive()`` gives the inputs of a cycle (valid held until accepted; gaps and response
back-pressure drawn at random with the job's probabilities), ``observe()`` takes the settled
outputs and completes the cycle's handshakes, and every response is compared with
``expected``. The Amaranth testbench (``tests/ubgen/test_buffet.py``) and the cocotb one
(``sim/tb/test_buffet.py``, Verilator, :func:`run_buffet_jobs`) both use it. ``cycles`` is the
clock cycles from the job's first cycle to its last response (the block-level latency).
"""
from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from .runner import BUILD, run_cocotb

__all__ = ["BuffetJob", "BuffetDriver", "app_buffet_jobs", "run_buffet_jobs", "OUTPUTS"]

OUTPUTS = ("fill_ready", "rd_ready", "rd_data", "rd_data_valid", "upd_ready")


@dataclass
class BuffetJob:
    name: str
    fills: list[int]
    requests: list[tuple[int, int]]
    expected: list[int | None]
    p_fill: float = 0.0              # probability of a gap before a fill (producer idle)
    p_read: float = 0.0              # ... before a read request (consumer idle)
    p_stall: float = 0.0             # probability that rd_data_ready is low in a cycle
    seed: int = 0
    fill_at: list[int] | None = None  # fill k offered from this cycle on (None: at once)
    read_at: list[int] | None = None  # read request k offered from this cycle on

    def pressured(self, p: float, seed: int, p_read: float | None = None,
                  p_stall: float | None = None) -> "BuffetJob":
        """The same job with gaps and back-pressure of probability ``p`` on every port (or
        ``p_read`` / ``p_stall`` on the read requests / responses)."""
        return replace(self, p_fill=p, p_read=p if p_read is None else p_read,
                       p_stall=p if p_stall is None else p_stall, seed=seed)


class BuffetDriver:
    """The host of one job (module docstring)."""

    def __init__(self, job: BuffetJob):
        self.job = job
        self.rng = random.Random(job.seed)
        self.nf = self.nr = self.nd = 0          # fills, requests, responses done
        self.cycle = 0
        self.last = None                         # cycle of the last response
        self.mismatches: list[str] = []
        self.fill_valid = self.rd_valid = False

    @property
    def done(self) -> bool:
        return self.nd == len(self.job.expected)

    def drive(self) -> dict[str, int]:
        j, rng = self.job, self.rng
        if not self.fill_valid and self.nf < len(j.fills) and self._due(j.fill_at, self.nf):
            self.fill_valid = rng.random() >= j.p_fill
        if not self.rd_valid and self.nr < len(j.requests) and self._due(j.read_at, self.nr):
            self.rd_valid = rng.random() >= j.p_read
        self.resp_ready = rng.random() >= j.p_stall
        idx, shrink = j.requests[self.nr] if self.nr < len(j.requests) else (0, 0)
        return {"fill_valid": int(self.fill_valid),
                "fill_data": j.fills[self.nf] if self.nf < len(j.fills) else 0,
                "rd_valid": int(self.rd_valid), "rd_idx": idx, "rd_shrink": shrink,
                "rd_data_ready": int(self.resp_ready), "upd_valid": 0, "upd_idx": 0,
                "upd_data": 0, "clear": 0}

    def _due(self, at: list[int] | None, k: int) -> bool:
        return at is None or self.cycle >= at[k]

    def observe(self, out: dict[str, int]) -> None:
        if self.fill_valid and out["fill_ready"]:
            self.nf += 1
            self.fill_valid = False
        if self.rd_valid and out["rd_ready"]:
            self.nr += 1
            self.rd_valid = False
        if out["rd_data_valid"] and self.resp_ready:
            want = self.job.expected[self.nd] if self.nd < len(self.job.expected) else "none"
            if want is not None and out["rd_data"] != want:
                self.mismatches.append(f"read {self.nd}: got {out['rd_data']:#06x}, "
                                       f"expected {want if isinstance(want, str) else hex(want)}")
            self.nd += 1
            self.last = self.cycle
        self.cycle += 1

    def result(self) -> dict:
        return {"name": self.job.name, "passed": self.done and not self.mismatches,
                "responses": self.nd, "expected": len(self.job.expected),
                "mismatches": len(self.mismatches), "first": self.mismatches[:3],
                "cycles": None if self.last is None else self.last + 1,
                "fills": self.nf, "p": self.job.p_stall}


def app_buffet_jobs(app: str, arch: str = "cgra_dp_16x32", sizes: dict | None = None,
                    seed: int = 0, buffers: list[str] | None = None) -> list[BuffetJob]:
    """One job per dual-port block of ``app`` mapped on ``arch``'s dual-port memories (the
    arch's ``[mem] kind`` is taken as ``dp`` whatever it is: the mapping is the same)."""
    from compiler.mapping.dp_model import simulate_dp
    from compiler.mapping.buffet import buffet_config
    from compiler.pipeline import compile_app
    from ubgen.arch import load_arch
    from ubgen.buffet.spec import requests
    from ubgen.controller import iterate

    a = load_arch(arch)
    if a.mem.kind != "dp":
        a = replace(a, mem=replace(a.mem, kind="dp"))
    result = compile_app(app, a, sizes, until="map")
    if result.refused:
        from compiler.mapping.common import MappingError
        raise MappingError(result.refusal())
    rng = random.Random(seed)
    jobs = []
    for name, impl in result.impls.items():
        if buffers is not None and name not in buffers:
            continue
        for block in impl.dps:
            cfg = buffet_config(block)
            times = [t for t, _a in iterate(block.configs["wr"])]
            fills = [rng.randrange(1 << 16) for _ in times]
            run = simulate_dp(block.registers(), block.params, dict(zip(times, fills)))
            expected = [v for _c, v in sorted(run.outputs[0].items())]
            jobs.append(BuffetJob(f"{app}.{block.name}", fills, requests(cfg), expected,
                                  seed=seed))
    return jobs


def run_buffet_jobs(jobs: list[BuffetJob], *, check: bool = True, name: str = "buffet"
                    ) -> list[dict]:
    """Every job on the generated buffet Verilog in Verilator (cocotb, ``sim.tb.test_buffet``),
    one model per ``check`` setting; returns each job's :meth:`BuffetDriver.result`."""
    from amaranth.back import verilog
    from ubgen.buffet import Buffet
    d = BUILD / (name if check else f"{name}_nocheck")
    d.mkdir(parents=True, exist_ok=True)
    src = d / "buffet.v"
    text = verilog.convert(Buffet(check=check), name="buffet")
    if not src.exists() or src.read_text() != text:
        src.write_text(text)
    jobs_path, out = d / "jobs.json", d / "results.json"
    jobs_path.write_text(json.dumps([asdict(j) for j in jobs]))
    out.unlink(missing_ok=True)
    try:
        run_cocotb(name=d.name, sources=[src], toplevel="buffet",
                   test_module="sim.tb.test_buffet", testcase=["buffet_jobs"],
                   build_args=["-CFLAGS", "-O1"],
                   extra_env={"UBGEN_BUFFET_JOBS": str(jobs_path),
                              "UBGEN_BUFFET_RESULTS": str(out)})
    except (AssertionError, SystemExit):      # a failed job: its result says why
        if not out.exists():
            raise
    return json.loads(out.read_text())


def read_jobs(path: str | Path) -> list[BuffetJob]:
    return [BuffetJob(**{**d, "requests": [tuple(r) for r in d["requests"]]})
            for d in json.loads(Path(path).read_text())]
