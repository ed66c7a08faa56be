"""The global buffer (thesis §7.1)."""
