"""`pqbench bisect`: the build of a series where a row changed, by paired sessions.

Modules: `series` (what `--series` means: builds in order), `search` (the bisection over
verdicts of paired sessions, and the exhaustive reference), `runner` (the `ab` sessions
between builds, stored as runs with ``settings["bisect"]``), `stored` (reading those runs
back: series positions for `history` and `report`).
"""
