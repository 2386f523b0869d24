"""The data pqbench keeps: the run record (the run format) and the store, the only SQL."""
