"""Loop alignment (thesis §4.4.1, Algorithm 2, Fig. 4.19).

For a producer/consumer pair with a RAW dependence, every producer loop is matched with the
consumer loop that walks the same buffer dimension (``FindBestMatchingConsumerDimension``):
loops enclosing both ops match themselves; otherwise the producer loop that indexes store
dimension k is matched with the consumer loop indexing load dimension k whose data-space range
``|coeff| * (extent - 1)`` is largest (Fig. 4.19d). The pair can be fused only if the matching is
injective and keeps the loop order (``InjectiveMapInOrder``); a transposed access (Fig. 4.19b)
is refused. The ratio of the access coefficients gives the consumer's relative rate per matched
loop (eq. 4.15).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from ..ir.index import Index
from ..ir.program import Access, Op


def index_coeff(idx: Index, var: str) -> Fraction:
    """Rate at which ``idx`` moves per unit step of ``var`` (floor(e/d) counts as e/d)."""
    out = Fraction(idx.coeff(var))
    for num, d, c in idx.floors:
        out += c * index_coeff(num, var) / d
    return out


@dataclass
class Alignment:
    producer: str
    consumer: str
    pairs: list[tuple[str, str, Fraction]] = field(default_factory=list)  # (p, c, rate c/p)
    fusable: bool = True
    reason: str = ""

    def to_dict(self) -> dict:
        return {"producer": self.producer, "consumer": self.consumer, "fusable": self.fusable,
                "reason": self.reason,
                "pairs": [[p, c, str(r)] for p, c, r in self.pairs]}


def align(prod: Op, cons: Op, load: Access) -> Alignment:
    """Algorithm 2 for one producer/consumer pair through one of the consumer's loads."""
    res = Alignment(prod.name, cons.name)
    shared = {lp.name for lp in prod.loops} & {lp.name for lp in cons.loops}
    cons_pos = {lp.name: k for k, lp in enumerate(cons.loops)}
    used: set[str] = set()
    for lp in prod.loops:
        if lp.name in shared:
            res.pairs.append((lp.name, lp.name, Fraction(1)))
            used.add(lp.name)
            continue
        best = None
        for k, sidx in enumerate(prod.store.index):
            a = index_coeff(sidx, lp.name)
            if a == 0 or k >= len(load.index):
                continue
            for c in cons.loops:
                b = index_coeff(load.index[k], c.name)
                if b == 0 or c.name in shared:
                    continue
                span = abs(b) * (c.extent - 1)
                if best is None or span > best[0]:
                    best = (span, c.name, b / a)
            break
        if best is None:
            continue                      # unmatched: padded with a single-iteration loop
        if best[1] in used:
            res.fusable, res.reason = False, f"{lp.name} and another loop both match {best[1]}"
            return res
        if best[2] <= 0:
            res.fusable, res.reason = False, f"{lp.name} and {best[1]} walk in opposite directions"
            return res
        used.add(best[1])
        res.pairs.append((lp.name, best[1], best[2]))
    order = [cons_pos[c] for _, c, _ in res.pairs]
    if order != sorted(order):
        res.fusable = False
        res.reason = ("loop order differs: " + ", ".join(f"{p}->{c}" for p, c, _ in res.pairs))
    return res
