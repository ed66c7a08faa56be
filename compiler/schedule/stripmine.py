"""Strip-mining to match the rates of kernels that share hardware (thesis §4.4.2, eqs. 4.15,
4.16, Fig. 4.20).

After fusion each op ``l`` has a relative initiation interval ``II_l`` at the fused innermost
level (its innermost time coefficient): a consumer advances ``II_p / II_c`` steps per producer
step (eq. 4.15). Strip-mining the fused level by ``LCM(II_i) / II_l`` (eq. 4.16) gives every op
the same number of cycles per strip, so ops sharing one compute unit can take turns without
stalls: in each window of ``LCM`` cycles op ``l`` runs ``LCM / II_l`` times. In the affine
schedule this interleaving is realised by :mod:`.sharing` as distinct residues of the start
times modulo each op's ``II_l``.
"""
from __future__ import annotations

import math
from fractions import Fraction


def relative_rate(ii_producer: int, ii_consumer: int) -> Fraction:
    """Eq. 4.15: consumer steps per producer step."""
    return Fraction(ii_producer, ii_consumer)


def stripmine_factors(iis: dict[str, int]) -> dict[str, int]:
    """Eq. 4.16: strip-mining factor ``LCM(II_i) / II_l`` for every op ``l``."""
    lcm = 1
    for v in iis.values():
        lcm = math.lcm(lcm, v)
    return {name: lcm // v for name, v in iis.items()}


def utilization(iis: dict[str, int]) -> Fraction:
    """Fraction of cycles a shared unit is busy: ``sum(1 / II_l)``."""
    return sum((Fraction(1, v) for v in iis.values()), Fraction(0))
