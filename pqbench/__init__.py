"""pqbench: what post-quantum cryptography costs on this machine."""

from __future__ import annotations

__version__ = "0.1.0"
