"""Foreign implementations (Go, Rust, Java) as worker processes: the protocol client, the
toolchains, the builds into pqbench's cache, and the registry of implementations.

Each implementation is timed by a long-lived worker written in its own language
(docs/stacks.md has the protocol). This room starts, checks and stops workers and builds
them on first use; `implementations/stacks.py` adapts them to the Implementation interface.
"""
