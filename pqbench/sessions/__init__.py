"""Sessions: `pqbench ab` (two builds measured in alternation by worker pairs), `pqbench
bisect` (which build of a series changed a row) and the sides they measure."""
