"""One check's result, as `pqbench verify` shows it."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Outcome:
    """One check of one (algorithm, implementation)."""

    algorithm: str
    implementation: str
    check: str
    status: str  # "passed" | "failed" | "not offered" | "unavailable"
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        return asdict(self)
