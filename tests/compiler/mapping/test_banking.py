"""Cyclic banking on the weight buffer of thesis Fig. 5.3 (eqs. 5.6–5.21)."""
import islpy as isl
import pytest

from compiler.ir.ubuf import UnifiedBuffer
from compiler.mapping.banking import (bank_buffer, choose_banking, concurrent_groups,
                                      has_conflict, partition_factors, port_banks)
from compiler.mapping.common import MappingError
from compiler.mapping.map_buffer import map_buffer

from .fixtures import port

RDOM = "{ S[ky, kx, y, x, k] : 0 <= ky < 3 and 0 <= kx < 3 and 0 <= y < 28 and 0 <= x < 28 " \
       "and 0 <= k < 2 }"
RSCHED = "{ S[ky, kx, y, x, k] -> [200 + k + 2x + 56y + 1568kx + 4704ky] }"


def weight_buffer():
    ports = [port("load", "in", "{ ld[ky, kx, k, c] : 0 <= ky < 3 and 0 <= kx < 3 and "
                  "0 <= k < 4 and 0 <= c < 4 }", "{ ld[ky, kx, k, c] -> weight[c, k, kx, ky] }",
                  "{ ld[ky, kx, k, c] -> [c + 4k + 16kx + 48ky] }")]
    for n in range(8):          # eqs. 5.6-5.13: port n reads weight(n % 4, 2k + n // 4, kx, ky)
        c, j = n % 4, n // 4
        s = f"conv{n}"
        ports.append(port(f"p{n}", "out", RDOM.replace("S", s),
                          f"{{ {s}[ky, kx, y, x, k] -> weight[{c}, 2k + {j}, kx, ky] }}",
                          RSCHED.replace("S", s)))
    return UnifiedBuffer("weight", [4, 4, 3, 3], "temp", "u16", ports)


def test_partition_factors_fig_5_3():
    ub = weight_buffer()
    assert len(concurrent_groups(ub.outputs)) == 1
    assert partition_factors(ub.outputs, ub.shape) == (4, 2, 1, 1)
    b = choose_banking(ub, ub.outputs, read_ports=2, write_ports=2)
    assert b.factors == (4, 2, 1, 1) and not b.duplicated and b.banks == 8
    assert not has_conflict(ub.outputs, "weight", b.factors)


def test_bank_and_offset_maps_eqs_5_14_to_5_21():
    ub = weight_buffer()
    for n, p in enumerate(ub.outputs):
        ids, offs = port_banks(p, "weight", (4, 2, 1, 1))
        s = f"conv{n}"
        dom = isl.Set(RDOM.replace("S", s))
        want_id = isl.Map(f"{{ {s}[ky, kx, y, x, k] -> bank[{n % 4}, {n // 4}] }}").intersect_domain(dom)
        assert ids.is_equal(want_id), n
        # the inner-bank offset (eq. 5.14 prints only (kx, ky); dimension 1 keeps k = (2k+j)/2)
        want_off = isl.Map(f"{{ {s}[ky, kx, y, x, k] -> weight[0, k, kx, ky] }}").intersect_domain(dom)
        assert offs.is_equal(want_off), n


def test_bank_buffers():
    ub = weight_buffer()
    banks = bank_buffer(ub, ub.outputs, choose_banking(ub, ub.outputs, 2, 2))
    assert len(banks) == 8
    for b in banks:
        assert [p.direction for p in b.ports] == ["in", "out"]
        # each bank holds 2 x 3 x 3 weights: the load writes 18 of its 144 instances there
        assert b.inputs[0].domain.count_val().to_python() == 18
        assert b.shape == [1, 2, 3, 3]


def test_conflict_falls_back_to_duplication():
    dom = "{ S[x] : 0 <= x < 16 }"
    ports = [port("w", "in", "{ w[x] : 0 <= x < 20 }", "{ w[x] -> a[x] }", "{ w[x] -> [x] }")]
    for k in range(3):
        ports.append(port(f"r{k}", "out", dom.replace("S", f"r{k}"),
                          f"{{ r{k}[x] -> a[x + {2 * k}] }}", f"{{ r{k}[x] -> [30 + 2x] }}"))
    ub = UnifiedBuffer("a", [20], "temp", "u16", ports)
    b = choose_banking(ub, ub.outputs, 2, 2)
    assert b.duplicated
    banks = bank_buffer(ub, ub.outputs, b)
    assert [[p.name for p in bk.ports] for bk in banks] == [["w", "r0"], ["w", "r1"], ["w", "r2"]]
    # two concurrent readers fit the two physical ports: no banking at all
    b2 = choose_banking(ub, ub.outputs[:2], 2, 2)
    assert b2.banks == 1 and not b2.duplicated


def test_conflict_duplication_cannot_solve_is_one_line():
    """Three writers fill three 32-word blocks in the same cycles and three readers walk the
    blocks backwards: the GCD heuristic finds no conflict-free factor, and every duplicated
    copy would need all three writers (a PUB has two input ports)."""
    ports = [port(f"w{k}", "in", "{ s[i] : 0 <= i < 32 }", f"{{ s[i] -> A[{32 * k} + i] }}",
                  "{ s[i] -> [i] }") for k in range(3)]
    ports += [port(f"r{k}", "out", "{ r[i] : 0 <= i < 32 }",
                   f"{{ r[i] -> A[{32 * k} + 31 - i] }}", "{ r[i] -> [60 + i] }")
              for k in range(3)]
    ub = UnifiedBuffer("A", [96], "temp", "s16", ports)
    with pytest.raises(MappingError, match=r"^buffer A: .*duplication cannot solve") as e:
        map_buffer(ub, "pub", threshold=0)
    assert "\n" not in str(e.value)
