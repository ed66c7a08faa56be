"""Run many points: the cache first, then one Dask task per remaining point (docs/sweep.md).

* ``workers=N`` (N >= 1, no scheduler): a ``distributed.LocalCluster`` of N worker processes
  with one thread each, started for the sweep and closed after it;
* ``scheduler="tcp://host:port"``: an existing Dask cluster (its workers must run the same
  checkout: every result carries the worker's code digest, and a point computed by different
  code is reported as an error and not cached);
* ``workers=0``: every point in this process, one after the other (debugging; no Dask).

Results come back in the order of the tasks. A point never stops the sweep: a failing point
is a result with an error (:mod:`.point`), and a task the cluster loses (a worker killed) is
one too. Points with no error (and points the application or the mapping refused) are cached;
internal errors and lost tasks are not, so a rerun retries them.
"""
from __future__ import annotations

import itertools
import logging
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from .cache import Cache, code_digest, point_key
from .point import DEFAULT_STAGES, evaluate_point


class SweepError(ValueError):
    """A sweep that cannot run at all (bad parameter syntax, no scheduler at the address)."""


@dataclass(frozen=True)
class Task:
    """One point to evaluate: an application, its parameters and the stages to run."""
    app: str
    params: dict = field(hash=False)
    stages: tuple[str, ...] = DEFAULT_STAGES

    @property
    def key(self) -> str:
        return point_key(self.app, self.params, self.stages)


# --------------------------------------------------------------------------------------------
# parameters


def parse_value(text: str) -> int | str:
    text = text.strip()
    if not text:
        raise SweepError("empty value in a --param list")
    return int(text) if text.lstrip("-").isdigit() else text


def parse_param(text: str) -> tuple[tuple[str, ...], list]:
    """``NAME=V1,V2,...`` -> ``((NAME,), [V1, V2, ...])``; ``A+B=1,2`` ties A and B to the
    same value (resnet's ``ic_unroll+oc_unroll=1,2,4,8`` sweeps the square unrolls).
    Integers stay integers, anything else is a name (``arch=cgra_8x8``)."""
    names, sep, values = text.partition("=")
    keys = tuple(n.strip() for n in names.split("+"))
    if not sep or not all(k.isidentifier() for k in keys) or not values.strip():
        raise SweepError(f"--param expects NAME=V1,V2,... (or NAME+NAME=...), got '{text}'")
    vals = [parse_value(v) for v in values.split(",")]
    if len(set(map(repr, vals))) != len(vals):
        raise SweepError(f"--param {names}: a value is given twice")
    return keys, vals


def grid(params: Sequence[tuple[tuple[str, ...], list]]) -> list[dict]:
    """The Cartesian product of the parameters, first parameter outermost."""
    seen: set[str] = set()
    for keys, _ in params:
        for k in keys:
            if k in seen:
                raise SweepError(f"parameter {k} is given twice")
            seen.add(k)
    points = []
    for combo in itertools.product(*(vals for _keys, vals in params)):
        point = {}
        for (keys, _vals), value in zip(params, combo):
            for k in keys:
                point[k] = value
        points.append(point)
    return points


# --------------------------------------------------------------------------------------------
# the cluster


@contextmanager
def dask_client(scheduler: str | None = None, workers: int = 1,
                timeout: str = "10s") -> Iterator[object | None]:
    """A ``distributed.Client`` for the sweep (``None`` for ``workers=0`` without a scheduler);
    ``timeout`` bounds the connection to an existing scheduler."""
    if scheduler is None and workers == 0:
        yield None
        return
    if workers < 0:
        raise SweepError(f"--workers must be 0 or more, got {workers}")
    from distributed import Client, LocalCluster
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as e:
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise SweepError(f"cannot connect to the Dask scheduler at {scheduler}: {msg}") \
                from None
        try:
            yield client
        finally:
            client.close()
        return
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def _progress(total: int, initial: int, enabled: bool, desc: str):
    from tqdm import tqdm
    return tqdm(total=total, initial=initial, file=sys.stderr, disable=not enabled,
                desc=desc, unit="point", dynamic_ncols=True)


def _cacheable(result: dict) -> bool:
    return result.get("error") is None or result.get("error_kind") == "user"


def _lost(task: Task, e: BaseException, prefix: str | None = None) -> dict:
    msg = str(e).splitlines()[0] if str(e) else ""
    error = f"{prefix}: {msg}" if prefix else f"task: {type(e).__name__}: {msg}".rstrip(": ")
    result = dict(task.params)
    result.update(app=task.app, stages=list(task.stages), status="error", error_kind="lost",
                  error=error, pes=None, mems=None,
                  sram_words=None, cycles=None, fits=None, out_of=None, seconds={}, notes=[])
    return result


def run_tasks(tasks: Sequence[Task], *, client=None, scheduler: str | None = None,
              workers: int = 1, cache: Cache | None = None, progress: bool = True,
              desc: str = "sweep") -> list[dict]:
    """Evaluate every task (cached ones from ``cache``), in task order.

    ``client``: an existing ``distributed.Client`` to use (not closed here); otherwise one is
    made from ``scheduler``/``workers`` (:func:`dask_client`; none for ``workers=0``). Each result gets ``key`` (its
    cache key) and ``cached`` (True when it came from the cache)."""
    cache = cache if cache is not None else Cache(None)
    keys = [t.key for t in tasks]
    results: list[dict | None] = [None] * len(tasks)
    todo: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        hit = cache.get(key)
        if hit is not None:
            results[i] = dict(hit, key=key, cached=True)
        else:
            todo.setdefault(key, []).append(i)
    tasks_by_key = {key: tasks[idx[0]] for key, idx in todo.items()}
    bar = _progress(len(tasks), len(tasks) - sum(map(len, todo.values())), progress, desc)
    here = code_digest()

    def done(key: str, result: dict) -> None:
        if result.get("code", here) != here:      # figures of other code: none of them kept
            result = _lost(tasks_by_key[key], RuntimeError(
                f"the worker runs different code (digest {str(result['code'])[:12]}, this "
                f"checkout {here[:12]}): install this checkout on every worker"), "task")
        elif _cacheable(result):
            cache.put(key, result)
        for i in todo[key]:
            results[i] = dict(result, key=key, cached=False)
        bar.update(len(todo[key]))

    try:
        if todo:
            if client is None:
                with dask_client(scheduler, workers) as made:
                    _compute(tasks_by_key, made, done)
            else:
                _compute(tasks_by_key, client, done)
    finally:
        bar.close()
    return results      # type: ignore[return-value]


def _compute(tasks: dict[str, Task], client, done) -> None:
    if client is None:
        for key, t in tasks.items():
            done(key, evaluate_point(t.app, t.params, t.stages))
        return
    from distributed import as_completed
    futures = {client.submit(evaluate_point, t.app, t.params, t.stages, pure=False,
                             key=f"ubc-point-{key}"): key for key, t in tasks.items()}
    for fut in as_completed(futures):
        key = futures[fut]
        try:
            result = fut.result()
        except Exception as e:          # the cluster lost the task (worker killed, ...)
            result = _lost(tasks[key], e)
        done(key, result)
        fut.release()


def run_sweep(app: str, points: Sequence[dict], stages: Sequence[str] = DEFAULT_STAGES,
              **kw) -> list[dict]:
    """:func:`run_tasks` for one application over ``points`` (dicts of parameters)."""
    return run_tasks([Task(app, dict(p), tuple(stages)) for p in points], **kw)
