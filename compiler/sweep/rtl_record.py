"""The record of thesis Table 7.4's RTL runs (``docs/data/table_7_4_rtl.json``).

The RTL runs (``sim.rtl_figures``: each Table 7.3 app end to end on each memory backend's 16x32
array in Verilator, the buffets at block level; thesis §7.2, Table 7.4) take tens of minutes and
their cache key holds the digest of the whole code base, so the cache of a later commit never
has them. ``ubc evaluate --rtl-only`` runs them one at a time and keeps each run's result in
this record together with the run it was (kind, app, arch, sizes), the commit it was measured
at, the date and the wall time; the evaluation renders Table 7.4 and the backends table from the
record, naming the commit of every cell. Only the tool writes the record, from real runs:

* :func:`run_one` runs one entry of the plan (a subprocess, so that the compiler never imports
  the simulator) and leaves ``<slug>.json`` (the result) and ``<slug>.meta.json`` (the command,
  commit, date, wall time, exit code) in a run directory (``build/rtl_runs``);
* :func:`collect` reads a run directory back: an entry whose command is not the one the plan
  gives its name now (another app, size or arch) is not taken;
* :func:`update` / :func:`load` write and read the record; :func:`load` keeps only the entries
  that are still the plan's runs.
"""
from __future__ import annotations

import datetime
import json
import subprocess
import sys
import time
from pathlib import Path

from .cache import ROOT

RECORD = ROOT / "docs" / "data" / "table_7_4_rtl.json"


def slug(name: str) -> str:
    """A plan entry's file name stem (``rtl dp-pe gaussian`` -> ``rtl_dp-pe_gaussian``)."""
    return name.replace(" ", "_")


def rtl_argv(run: tuple, out: Path) -> list[str]:
    """The arguments after the interpreter that run ``run`` = (kind, app, arch, sizes) with
    ``sim.rtl_figures``, writing its JSON to ``out``."""
    kind, app, arch, sizes = run
    argv = ["-m", "sim.rtl_figures", kind, app, "--out", str(out)]
    argv += (["--arch", arch] if arch else [])
    return argv + [f"--size={k}={v}" for k, v in sizes.items()]


def _without_out(argv: list[str]) -> list[str]:
    i = argv.index("--out") if "--out" in argv else len(argv)
    return argv[:i] + argv[i + 2:]


def _same_run(a, b) -> bool:
    return json.dumps(list(a), sort_keys=True) == json.dumps(list(b), sort_keys=True)


# what the runs themselves write: not a change of the code measured
OUTPUTS = ("docs/data/table_7_4_rtl.json", "docs/evaluation.md")


def git_commit(root: Path = ROOT) -> tuple[str, bool]:
    """The checkout's short commit and whether tracked files other than :data:`OUTPUTS` differ
    from it (``"unknown"`` outside a git checkout)."""
    def git(*args: str) -> str:
        proc = subprocess.run(["git", *args], capture_output=True, text=True, cwd=root)
        return proc.stdout.strip() if proc.returncode == 0 else ""
    commit = git("rev-parse", "--short", "HEAD")
    return (commit or "unknown"), bool(git("status", "--porcelain", "--untracked-files=no",
                                           "--", ".", *(f":(exclude){p}" for p in OUTPUTS)))


def result_of(proc: subprocess.CompletedProcess, out: Path) -> dict:
    """What a run gave: ``sim.rtl_figures``' JSON, or its last line of output as the error."""
    if proc.returncode != 0 or not out.exists():
        lines = (proc.stderr or proc.stdout or "").strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {proc.returncode}"}
    return json.loads(out.read_text())


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def run_one(name: str, run: tuple, runs_dir: Path, root: Path = ROOT) -> dict:
    """Run one plan entry in ``root`` now; leaves its files in ``runs_dir`` and returns its
    record entry (:func:`entry`)."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    out = runs_dir / f"{slug(name)}.json"
    out.unlink(missing_ok=True)
    argv = rtl_argv(run, out)
    commit, dirty = git_commit(root)
    started, t0 = now(), time.monotonic()
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=root)
    meta = {"name": name, "run": list(run), "argv": argv, "commit": commit, "dirty": dirty,
            "started": started, "wall_seconds": round(time.monotonic() - t0, 1),
            "returncode": proc.returncode,
            "stderr_tail": (proc.stderr or "").strip().splitlines()[-5:]}
    if proc.returncode != 0:
        out.unlink(missing_ok=True)
    (runs_dir / f"{slug(name)}.meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return entry(run, result_of(proc, out), commit, dirty, started, meta["wall_seconds"])


def entry(run: tuple, result: dict, commit: str, dirty: bool, date: str,
          wall: float | None) -> dict:
    """One run in the record."""
    kind, app, arch, sizes = run
    return {"kind": kind, "app": app, "arch": arch, "sizes": dict(sizes), "result": result,
            "commit": commit, "dirty": dirty, "date": date, "wall_seconds": wall}


def collect(plan: dict[str, tuple], runs_dir: Path, commit: str | None = None) -> dict[str, dict]:
    """The plan entries that have a finished run in ``runs_dir`` (``commit``: only those
    measured at that commit from a clean checkout), as record entries. A run whose recorded
    command is not the plan's command for its name is not taken."""
    got = {}
    for name, run in plan.items():
        meta_path = runs_dir / f"{slug(name)}.meta.json"
        if not meta_path.exists():
            continue
        meta = json.loads(meta_path.read_text())
        out = runs_dir / f"{slug(name)}.json"
        if not _same_run(meta.get("run", ()), run) or \
                _without_out(meta.get("argv", [])) != _without_out(rtl_argv(run, out)):
            continue
        if commit is not None and (meta["commit"] != commit or meta.get("dirty", True)):
            continue
        proc = subprocess.CompletedProcess(meta["argv"], meta["returncode"], "",
                                           "\n".join(meta.get("stderr_tail", [])))
        got[name] = entry(run, result_of(proc, out), meta["commit"], meta.get("dirty", False),
                          meta["started"], meta.get("wall_seconds"))
    return got


def update(path: Path, plan: dict[str, tuple], entries: dict[str, dict]) -> dict[str, dict]:
    """Write ``entries`` into the record at ``path`` (replacing those names' earlier runs,
    keeping the other runs that are still the plan's); returns the record's runs."""
    runs = dict(load(path, plan, provenance=False), **entries)
    runs = {n: runs[n] for n in plan if n in runs}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"runs": runs}, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
    return runs


def load(path: Path, plan: dict[str, tuple], provenance: bool = True) -> dict[str, dict]:
    """The record's entries that are runs of the plan (same kind, app, arch and sizes under the
    same name); ``provenance``: as the results, each with ``measured_at`` (its commit and
    date) for the tables."""
    if not path.exists():
        return {}
    runs = json.loads(path.read_text()).get("runs", {})
    keep = {n: e for n, e in runs.items() if n in plan and
            _same_run((e["kind"], e["app"], e["arch"], e["sizes"]), plan[n])}
    if not provenance:
        return keep
    return {n: dict(e["result"], measured_at=measured_at(e), measured_commit=commit_label(e))
            for n, e in keep.items()}


def commit_label(e: dict) -> str:
    """The commit of a run (``+`` when the checkout had uncommitted changes)."""
    return e["commit"] + ("+" if e.get("dirty") else "")


def measured_at(e: dict) -> str:
    """``b4d1e26, 2026-11-27`` (``+ uncommitted changes`` when the checkout was not clean)."""
    dirty = " + uncommitted changes" if e.get("dirty") else ""
    return f"{e['commit']}{dirty}, {e['date'][:10]}"


def notes(path: Path, plan: dict[str, tuple]) -> list[str]:
    """Markdown: the run behind every cell of Table 7.4 -- its command, commit, date, wall
    time and result -- or that it was not run."""
    runs = load(path, plan, provenance=False)
    lines = [f"The runs behind the cells (`ubc evaluate --rtl-only`; the record "
             f"`{_shown(path)}`):", ""]
    for name, run in plan.items():
        e = runs.get(name)
        cmd = "python " + " ".join(_without_out(rtl_argv(run, Path("-"))))
        if e is None:
            lines.append(f"* {name}: `{cmd}` -- not run")
            continue
        wall = f", {e['wall_seconds']:.0f} s wall" if e.get("wall_seconds") is not None else ""
        lines.append(f"* {name}: `{cmd}` at {measured_at(e)}{wall}: {outcome(e['result'])}")
    return lines + [""]


def outcome(r: dict) -> str:
    """One run's result in words."""
    if r.get("error"):
        return f"error: {r['error']}"
    if "cycles_measured" in r:
        verdict = "passed (bit-exact)" if r.get("passed") else "FAILED"
        build = r.get("verilator_build_seconds")
        times = ([] if build is None else ["Verilator model cached" if build == 0 else
                                           f"Verilator build {build:.0f} s"]) + \
            ([] if r.get("sim_seconds") is None else [f"simulation {r['sim_seconds']:.0f} s"])
        return (f"{r.get('cycles_measured')} cycles measured, {r.get('cycles_predicted')} "
                f"predicted, {verdict}" + (f"; {', '.join(times)}" if times else ""))
    verdict = "every buffet passed" if r.get("passed") else "FAILED"
    n = r.get("buffets")
    return f"{n} buffet{'' if n == 1 else 's'}, {r.get('cycles')} cycles (slowest), {verdict}"


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return path.name
