"""Output-port sharing (thesis §5.1.4): two engines reading the same weights with an offset."""
from compiler.ir.ubuf import UnifiedBuffer
from compiler.mapping.dependence import constant_distances
from compiler.mapping.port_sharing import Share, share_output_ports, shares_with

from .fixtures import port


def weights():
    dom = "{ S[i, k] : 0 <= i < 3 and 0 <= k < 4 }"
    ports = [port("load", "in", "{ ld[k] : 0 <= k < 4 }", "{ ld[k] -> w[k] }", "{ ld[k] -> [k] }"),
             port("eng0", "out", dom.replace("S", "e0"), "{ e0[i, k] -> w[k] }",
                  "{ e0[i, k] -> [10 + 4i + k] }"),
             port("eng1", "out", dom.replace("S", "e1"), "{ e1[i, k] -> w[k] }",
                  "{ e1[i, k] -> [12 + 4i + k] }"),
             port("rev", "out", dom.replace("S", "rv"), "{ rv[i, k] -> w[3 - k] }",
                  "{ rv[i, k] -> [10 + 4i + k] }")]
    return UnifiedBuffer("w", [4], "temp", "u16", ports)


def test_weights_shared_between_engines():
    ub = weights()
    assert constant_distances(ub) == {}          # every weight is read three times
    e0, e1, rev = ub.outputs
    assert shares_with(ub, e0, e1) == 2
    assert shares_with(ub, e1, e0) is None       # e1 runs behind e0
    assert shares_with(ub, e0, rev) is None      # different element at every offset
    assert share_output_ports(ub, ["eng0", "eng1", "rev"]) == [Share("eng0", "eng1", 2)]
    # order does not matter: the earlier port becomes the leader
    assert share_output_ports(ub, ["eng1", "eng0", "rev"]) == [Share("eng0", "eng1", 2)]


def test_no_sharing_across_a_rewrite():
    # the weight is rewritten at cycle 11, between e0's read at 10 and e1's read at 12
    ub = weights()
    ub.ports[0] = port("load", "in", "{ ld[n] : 0 <= n < 4 }",
                       "{ ld[n] -> w[0] }", "{ ld[n] -> [11n] }")   # w[0] at 0, 11, 22, 33
    e0, e1, _ = ub.outputs
    assert shares_with(ub, e0, e1) is None
