"""ubc: the unified-buffer compiler (frontend, extraction, scheduling, mapping, backends)."""
