"""The catalog: algorithms and their parameter sets, and the known-answer vectors, as data."""
