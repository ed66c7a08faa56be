"""Plain-Python reference models for the property tests (independent of the numpy/isl code)."""
from __future__ import annotations

from compiler.ir import Op, Program
from compiler.ir.schedule import Schedule


def instances(program: Program):
    """Yield (op, env) in program order by walking the loop-nest AST."""
    def walk(nodes, env):
        for n in nodes:
            if isinstance(n, Op):
                yield n, dict(env)
            else:
                for v in range(n.start, n.start + n.extent):
                    env[n.name] = v
                    yield from walk(n.children, env)
                del env[n.name]
    yield from walk(program.children, {})


def live_words(program: Program, sched: Schedule) -> dict[str, int]:
    """Max number of live values per non-input buffer: a value lives from write time + latency
    to its last read (the last writer in program order supplies each read)."""
    current: dict[tuple, int] = {}        # (buffer, element) -> value id
    born: dict[int, tuple[str, int]] = {}
    last: dict[int, int] = {}
    for op, env in instances(program):
        s = sched.ops[op.name]
        t = s.time(env)
        for ld in op.loads:
            key = (ld.buffer, tuple(i.evaluate(env) for i in ld.index))
            if key in current:
                vid = current[key]
                last[vid] = max(last.get(vid, t), t)
        key = (op.store.buffer, tuple(i.evaluate(env) for i in op.store.index))
        vid = len(born)
        born[vid] = (op.store.buffer, t + s.latency)
        current[key] = vid
    out: dict[str, int] = {}
    events: dict[str, dict[int, int]] = {}
    for vid, (buf, start) in born.items():
        out.setdefault(buf, 0)
        if vid in last:
            ev = events.setdefault(buf, {})
            end = max(last[vid], start)
            ev[start] = ev.get(start, 0) + 1
            ev[end + 1] = ev.get(end + 1, 0) - 1
    for buf, ev in events.items():
        run = best = 0
        for t in sorted(ev):
            run += ev[t]
            best = max(best, run)
        out[buf] = best
    return out
