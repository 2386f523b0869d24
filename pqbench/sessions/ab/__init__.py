"""`pqbench ab`: two configurations measured in one paired, interleaved session.

Each side is a long-lived worker process (`pqbench worker`) started with its own
configuration: this pqbench as it is, a capability mask, extra environment variables, or a
command prefix that starts a pqbench worker elsewhere on the machine (another virtualenv, a
chroot, a container). The controller pins both workers to the same CPU, then for each row
warms both up and alternates short rounds A/B, in random order within each pair, until the
row's verdict is decided or its share of the time budget is spent. Pairs cancel the drift
of a shared machine, which moves both rounds of a pair alike.

Modules: `sides` (what a SIDE argument means), `protocol` (the JSON-lines messages),
`worker` (the worker's loop), `client` (the controller's handle on a worker),
`sequential` (when a row may stop), `session` (the controller: rows, pairs, two runs).
"""
