"""Schedulers (thesis ch. 4, paper §V-B): each maps a PolyProgram to a Schedule.

sequential (baseline), stencil (fusion + loop alignment at II=1), dnn (coarse-grained modulo
scheduling with double buffering), with loop perfection/flattening, compute sharing and
strip-mining as helpers; :func:`select.schedule` picks the policy.
"""
