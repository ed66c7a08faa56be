"""The IO core: streams between the global buffer and the array."""
