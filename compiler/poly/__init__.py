"""Polyhedral analysis with islpy: extraction (thesis §4.1), dependences (§4.2.3), unified
buffers (ch. 3)."""
