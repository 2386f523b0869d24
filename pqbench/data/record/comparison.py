"""The document `pqbench compare --json` (and `pqbench ab --json`) prints, as models.

docs/compare.schema.json is the JSON Schema generated from these models
(`python -m pqbench.data.record compare > docs/compare.schema.json`); a test keeps it current
and validates real output against the models. Every object forbids fields it does not
name, so a field added to the output without its place here fails that test. Numbers a
comparison cannot bound (an interval with one run a side) are null, never infinity.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ComparisonDocument", "ComparisonsDocument", "schema"]

Verdict = Literal["faster", "slower", "no change", "inconclusive", "too few runs"]
Key = tuple[str, str, str, int | None]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Judged(_Closed):
    """A ratio after / before with its interval, the level it holds at, and the verdict."""

    ratio: float = Field(description="after / before")
    ci_low: float | None
    ci_high: float | None
    ci_level: float
    p_value: float
    verdict: Verdict
    reason: str


class Cause(_Closed):
    """A fingerprint difference that can explain a changed row, and how strongly."""

    field: str
    before: Any
    after: Any
    strength: str
    why: str


class Row(_Judged):
    """One (algorithm, implementation, operation, block size): before, after, ratio =
    after / before (above 1 is faster), its interval and verdict."""

    algorithm: str
    implementation: str
    operation: str
    block_size: int | None
    unit: Literal["ops/s", "bytes/s"]
    before: float
    after: float
    basis: str | None = Field(description="what the verdict rests on beyond the runs "
                              "compared: the machine's run-to-run spread of the row and "
                              "where it came from, or an ab session")
    n_before: int
    n_after: int
    runs_before: int
    runs_after: int
    spread_before: float | None
    spread_after: float | None
    noise_floor: float | None
    threshold: float
    design: Literal["runs", "pairs", "machines"] = Field(
        description="what judged the row: runs as the unit, an ab session's pairs, or "
                    "machines each against itself (a fleet)")
    pairs: int | None
    machines: int | None = Field(description="the machines that judged a fleet's row")
    seconds: float | None
    causes: list[Cause]


class Side(_Closed):
    name: str
    runs: list[str]


class Difference(_Closed):
    """A fingerprint field whose values differ between the sides."""

    field: str
    before: Any
    after: Any
    note: str | None


class MemoryChange(_Closed):
    """A memory figure (exact counts) before and after."""

    algorithm: str
    implementation: str
    operation: str
    metric: str
    before: int
    after: int
    before_range: list[int]
    after_range: list[int]
    ratio: float | None
    verdict: str


class Change(_Closed):
    topic: str
    field: str
    before: Any
    after: Any
    fields: list[str]
    note: str | None


class Peer(_Closed):
    implementation: str | None
    rate: float | None


class OneSided(_Closed):
    operation: str
    rate: float
    fastest_other: Peer | None


class Availability(_Closed):
    algorithm: str
    implementation: str
    block_size: int | None
    unit: str
    reason: str
    checks: list[str]
    rows: list[OneSided]


class Failure(_Closed):
    side: Literal["before", "after"]
    algorithm: str
    implementation: str
    operation: str | None
    reason: str


class TopicStrength(_Closed):
    topic: str
    strength: str


class Highlight(_Closed):
    algorithm: str
    implementation: str
    operation: str
    block_size: int | None
    unit: str
    before: float
    after: float
    ratio: float
    ci_low: float | None
    ci_high: float | None
    verdict: Verdict
    causes: list[TopicStrength]


class Reason(_Closed):
    strength: str
    why: str
    rows: list[Key]


class CauseGroup(_Closed):
    topic: str
    before: Any
    after: Any
    strength: str
    rows: int
    reasons: list[Reason]


class News(_Closed):
    """What changed, told first: the builds, rows that appeared or went, the largest
    changes and each cause once."""

    before: str
    after: str
    builds: list[Change]
    unchanged: list[str]
    other_fields: int
    appeared: list[Availability]
    disappeared: list[Availability]
    failed: list[Failure]
    changes: list[Highlight]
    more_changes: int
    causes: list[CauseGroup]
    unexplained: list[Key]
    verdicts: dict[Verdict, int]
    compared: int


class FollowedRatio(_Judged):
    """A run's paired cost ratio (`pqbench ratios`) followed from one side to the other:
    each run's estimate one unit, compared as rows are compared over runs."""

    name: str
    before: float = Field(description="geometric mean of the before runs' estimates")
    after: float = Field(description="geometric mean of the after runs' estimates")
    change: str = Field(description="rose, fell, or the verdict")
    runs_before: int
    runs_after: int


class ComparisonDocument(_Closed):
    """One before/after comparison: `pqbench compare --json` of two runs or two groups.
    `pqbench ab --json` adds the session's settings under `session`."""

    news: News
    before: Side
    after: Side
    threshold: float = Field(description="the band: the fixed one, or 5 % with auto")
    threshold_mode: Literal["auto", "fixed"]
    alpha: float
    design: Literal["runs", "pairs", "machines", "mixed"] = Field(
        description="the design of every row, or mixed (see designs)")
    designs: dict[str, int] = Field(description="how many rows each design judged")
    method: str
    rows: list[Row]
    differences: list[Difference]
    only_before: list[Key]
    only_after: list[Key]
    warnings: list[str]
    memory: list[MemoryChange]
    machines: list[str] = Field(default_factory=list, description=(
        "a comparison across a fleet: the machines that judged its rows, each against "
        "itself, by name"))
    machines_left_out: list[str] = Field(default_factory=list, description=(
        "a comparison across a fleet: the machines left out, having measured one side "
        "only"))
    ratios: list[FollowedRatio] = Field(default_factory=list)
    session: dict[str, Any] | None = None


class ComparisonsDocument(_Closed):
    """`pqbench compare --json --by FIELD --all` over more than two groups."""

    comparisons: list[ComparisonDocument]


def schema() -> dict[str, Any]:
    """The JSON Schema of compare's output: one comparison, or several."""
    from pqbench.data.record.models import schema_of

    found = schema_of(ComparisonDocument | ComparisonsDocument)
    found["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    found["title"] = "pqbench compare --json"
    return found
