"""Unified buffers of the thesis' worked examples, built directly from isl text."""
from __future__ import annotations

import islpy as isl

from compiler.ir.ubuf import UBPort, UnifiedBuffer


def port(name: str, direction: str, domain: str, access: str, schedule: str,
         latency: int = 0) -> UBPort:
    dom = isl.Set.read_from_str(isl.DEFAULT_CONTEXT, domain)
    return UBPort(name, name, direction, dom,
                  isl.Map.read_from_str(isl.DEFAULT_CONTEXT, access).intersect_domain(dom),
                  isl.Map.read_from_str(isl.DEFAULT_CONTEXT, schedule).intersect_domain(dom),
                  latency)


def brighten_buffer(n: int = 64) -> UnifiedBuffer:
    """Thesis Fig. 3.2 / Table 5.1: brighten writes (x, y) at x + 64y; the 2x2 blur reads
    (x, y), (x+1, y), (x, y+1), (x+1, y+1) at 65 + x + 64y."""
    wdom = f"{{ S[y, x] : 0 <= x < {n} and 0 <= y < {n} }}"
    rdom = f"{{ S[y, x] : 0 <= x < {n - 1} and 0 <= y < {n - 1} }}"
    ports = [port("brighten", "in", wdom.replace("S", "br"),
                  "{ br[y, x] -> brighten[x, y] }", f"{{ br[y, x] -> [x + {n}y] }}")]
    for k, (dx, dy) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)]):
        ports.append(port(f"blur_{k + 1}", "out", rdom.replace("S", "bl"),
                          f"{{ bl[y, x] -> brighten[x + {dx}, y + {dy}] }}",
                          f"{{ bl[y, x] -> [{n + 1} + x + {n}y] }}"))
    return UnifiedBuffer("brighten", [n, n], "temp", "u16", ports)
