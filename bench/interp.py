"""Speed of the reference interpreter (compiler/interp.py) on every application in apps/.

    .venv/bin/python bench/interp.py [APP ...] [--repeat N]

For each app at its default sizes (``SIZES``): build the Program, make the inputs, run the
vectorized engine (best of ``--repeat`` runs), count op instances and check the outputs against
the app's independent numpy ``reference``. Prints one line per app: seconds, instances,
instances per second, and whether the outputs match.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compiler.interp import run  # noqa: E402


def instances(prog) -> int:
    return sum(int(np.prod([lp.extent for lp in op.loops], dtype=np.int64)) for op in prog.ops())


def main(argv=None) -> int:
    from apps import NAMES, get_app

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("apps", nargs="*", default=list(NAMES))
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    print(f"{'app':14s} {'seconds':>8s} {'instances':>10s} {'inst/s':>10s}  outputs")
    failed = False
    for name in args.apps:
        try:
            app = get_app(name)
            prog = app.build(**app.SIZES)
            ins = app.make_inputs(0, **app.SIZES)
            best, out = float("inf"), None
            for _ in range(max(args.repeat, 1)):
                t0 = time.perf_counter()
                out = run(prog, ins)
                best = min(best, time.perf_counter() - t0)
            ref = app.reference(ins, **app.SIZES)
            ok = all(np.array_equal(out[k], np.asarray(v)) for k, v in ref.items())
            n = instances(prog)
            print(f"{name:14s} {best:8.3f} {n:10d} {n / best:10.0f}  "
                  f"{'match reference' if ok else 'MISMATCH'}")
            failed |= not ok
        except Exception as e:  # noqa: BLE001 - report and continue with the next app
            print(f"{name:14s} error: {type(e).__name__}: {e}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
