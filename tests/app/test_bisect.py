"""`pqbench bisect`'s ending over a search's result, called directly."""

from __future__ import annotations

from pqbench.app import bisect
from pqbench.sessions.bisect.search import Result


def _result(**changes: object) -> Result:
    given: dict[str, object] = {"size": 4, "rows": (), "sessions": (), "unusable": {},
                                "ends": (0, 3)}
    given.update(changes)
    return Result(**given)  # type: ignore[arg-type]


def test_a_search_that_reached_both_ends_with_every_build_usable_ends_well() -> None:
    assert bisect.ending(_result()) is None


def test_the_interruption_comes_first_then_the_ends_then_unusable_builds() -> None:
    stopped = bisect.ending(_result(status="interrupted", ends=None, unusable={1: "x"}))
    assert stopped is not None and stopped.status in (130, 143)
    assert stopped.message.startswith("interrupted; the sessions done so far were stored")
    assert bisect.ending(_result(ends=None, unusable={1: "x"})) == bisect.Ending(
        "no two builds of the series could be measured (see above)", 1)
    assert bisect.ending(_result(unusable={1: "no wheel", 2: "no wheel"})) == bisect.Ending(
        "2 build(s) of the series were unusable (see above)", 1)
