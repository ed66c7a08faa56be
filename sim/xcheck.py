"""RTL cross-check of compiler-generated PUB configurations (docs/design.md §6 level 3).

For an application: compile it to its mapped buffers (``compiler.pipeline.compile_app`` with
``until="map"``), and for every PUB block of every buffer produce a *job*: the block's register values (encoded by
``ubgen.controller.encode_controller`` through ``PUBBlock.registers``), the input streams that
reach its ``data_in`` ports, and the output streams the config-driven model
(``compiler.mapping.pub_model``) predicts on its ``data_out`` ports. ``sim/tb/test_xcheck.py`` loads the
registers into the generated PUB Verilog over the configuration bus, plays the inputs, and
requires the RTL's streams to equal the model's: same cycles, same values wherever the model
knows the value.

Chained blocks (``tiles > 1``) are checked by the model only; the two-tile chain RTL has its own
test (``sim/tb/test_pub_chain.py``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ubgen.arch import Arch, load_arch


@dataclass
class Job:
    name: str
    regs: dict[str, int]
    inputs: list[dict[int, int]]                 # data_in[p]: unstalled cycle -> word
    expected: list[list[tuple[int, int | None]]]  # data_out[q]: [(cycle, word or None)]
    horizon: int

    def to_dict(self) -> dict:
        return {"name": self.name, "regs": self.regs, "horizon": self.horizon,
                "inputs": [{str(c): v for c, v in s.items()} for s in self.inputs],
                "expected": self.expected}

    @staticmethod
    def from_dict(d: dict) -> "Job":
        return Job(d["name"], d["regs"], [{int(c): v for c, v in s.items()} for s in d["inputs"]],
                   [[tuple(e) for e in s] for s in d["expected"]], d["horizon"])


def app_jobs(app: str, arch: Arch | str = "pub", buffers: list[str] | None = None,
             sizes: dict | None = None, seed: int = 0) -> list[Job]:
    """One :class:`Job` per single-tile PUB block of ``app`` (optionally only ``buffers``), from
    the compiler's one driver (``compiler.pipeline.compile_app(..., until="map")``)."""
    from compiler.mapping.common import t2addr
    from compiler.mapping.pub_model import _points, run_impl, simulate_pub
    from compiler.pipeline import compile_app

    arch = load_arch(arch) if isinstance(arch, str) else arch
    result = compile_app(app, arch, sizes, until="map")
    impls = {n: i for n, i in result.impls.items() if buffers is None or n in buffers}
    rng = np.random.default_rng(seed)
    jobs = []
    for name, impl in impls.items():
        ub = result.buffers[name]
        inputs = {}
        for port in ub.inputs:
            pts = _points(t2addr(port))
            inputs[port.name] = {int(r[0]): int(v) for r, v in
                                 zip(pts, rng.integers(0, 1 << 16, len(pts)))}
        streams = run_impl(impl, arch.pub, inputs, arch.mem).streams
        for pub in impl.pubs:
            if pub.tiles != 1:
                continue
            data_in = [streams[n] for n in pub.inputs]
            run = simulate_pub(pub.registers(arch.pub), arch.pub, data_in)
            expected = [sorted(out.items()) for out in run.outputs]
            last = max([c for s in expected for c, _ in s] + [c for s in data_in for c in s]
                       + [0])
            jobs.append(Job(f"{app}.{pub.name}", pub.registers(arch.pub)[0], data_in,
                            expected, last + 4))
    return jobs


def write_jobs(jobs: list[Job], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([j.to_dict() for j in jobs]))
    return path


def read_jobs(path: str | Path) -> list[Job]:
    return [Job.from_dict(d) for d in json.loads(Path(path).read_text())]
