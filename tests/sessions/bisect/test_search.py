"""The series syntax and the bisection's search over session verdicts.

The search is driven here by a table of true levels per build: a session between builds i
and j says `faster`/`slower` when their levels differ, `no change` otherwise, as a session
with an interval far narrower than the band would. The sessions themselves (real workers)
are tested in bisect/test_cli.py and bisect/test_pip.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pqbench.analysis.rows import Row
from pqbench.analysis.verdict import Outcome
from pqbench.data.record.results import RowKey
from pqbench.platform.errors import UsageError
from pqbench.sessions.bisect import series
from pqbench.sessions.bisect.search import Bisection, Measured, change_points, exhaustive, positions

# The search is pure and each test here takes well under a second: a search that loops
# (a midpoint equal to an end) fails in a minute with the test's name, not at the
# suite's ten-minute limit.
pytestmark = pytest.mark.timeout(60)

KEY = RowKey("AES-256-GCM", "cryptography", "encrypt", 16384)
OTHER = RowKey("SHA-256", "libcrypto", "hash", 16384)


def _row(key: RowKey, before: float, after: float) -> Row:
    ratio = after / before
    verdict = "faster" if ratio > 1.05 else "slower" if ratio < 1 / 1.05 else "no change"
    outcome = Outcome(before=before, after=after, ratio=ratio, ci_low=ratio * 0.99,
                      ci_high=ratio * 1.01, ci_level=0.998, p_value=0.001, verdict=verdict,
                      reason="", units_before=12, units_after=12, spread_before=None,
                      spread_after=None, floor=None, threshold=0.05, method="")
    return Row(key, outcome, n_before=12, n_after=12)


class Levels:
    """Sessions answered from true levels; builds in `unusable` fail to start."""

    def __init__(self, levels: dict[RowKey, list[float]],
                 unusable: dict[int, str] | None = None) -> None:
        self.levels = levels
        self.unusable = unusable or {}
        self.calls: list[tuple[int, int]] = []

    def __call__(self, i: int, j: int, rows: frozenset[RowKey] | None) -> Measured:
        self.calls.append((i, j))
        bad = {p: r for p, r in self.unusable.items() if p in (i, j)}
        if bad:
            return Measured(i, j, {}, unusable=bad)
        keys = rows if rows is not None else frozenset(self.levels)
        return Measured(i, j, {k: _row(k, self.levels[k][i], self.levels[k][j]) for k in keys},
                        (f"r{i}-{j}a", f"r{i}-{j}b"))


def _points(levels: list[float]) -> set[tuple[int, int]]:
    """The change points a table of levels has: neighbours whose levels differ."""
    return {(i, i + 1) for i in range(len(levels) - 1) if levels[i] != levels[i + 1]}


def test_a_flat_row_costs_one_session() -> None:
    measure = Levels({KEY: [5.0] * 12})
    result = Bisection(12, measure).run()
    assert measure.calls == [(0, 11)]
    assert [r.change_points for r in result.rows] == [()]
    assert not result.rows[0].searched


def test_one_step_is_found_in_log_n_sessions() -> None:
    for step in range(1, 16):
        levels = [1.0] * step + [2.0] * (16 - step)
        measure = Levels({KEY: levels})
        result = Bisection(16, measure).run()
        assert {(c.before, c.after) for c in result.rows[0].change_points} == _points(levels)
        # ends + at most two sessions per halving (log2 16 = 4) + the confirming session
        assert len(measure.calls) <= 1 + 2 * 4 + 1, (step, measure.calls)
        assert len(measure.calls) < 15


def test_every_change_point_is_found_in_either_direction() -> None:
    levels = [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.8, 0.8, 0.8, 0.8, 0.8]
    result = Bisection(12, Levels({KEY: levels, OTHER: [3.0] * 12})).run()
    by_key = {r.key: r for r in result.rows}
    points = by_key[KEY].change_points
    assert [(c.before, c.after, c.row.verdict) for c in points] == [
        (2, 3, "slower"), (6, 7, "faster")]
    assert by_key[OTHER].change_points == () and not by_key[OTHER].searched
    # Each change point's figures are those of the session of exactly those two builds.
    assert [c.row.ratio for c in points] == [pytest.approx(0.5), pytest.approx(1.6)]


def test_a_bump_between_agreeing_builds_is_what_it_cannot_see() -> None:
    levels = [1.0, 1.0, 2.0, 2.0, 1.0, 1.0]
    measure = Levels({KEY: levels})
    assert change_points(Bisection(6, measure).run()) == set()
    assert measure.calls == [(0, 5)]
    every = exhaustive(6, Levels({KEY: levels}))
    assert change_points(every) == {(KEY, 1, 2), (KEY, 3, 4)}
    assert positions(every.sessions) == [(i, i + 1) for i in range(5)]


def test_an_unusable_build_is_skipped_and_named_beside_the_change() -> None:
    levels = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]
    # The change is between 2 and 3; build 3 does not start.
    measure = Levels({KEY: levels}, {3: "worker did not start"})
    result = Bisection(7, measure).run()
    assert result.unusable == {3: "worker did not start"}
    (point,) = result.rows[0].change_points
    assert (point.before, point.after, point.skipped) == (2, 4, (3,))


def test_an_unusable_end_moves_the_end_inwards() -> None:
    measure = Levels({KEY: [1.0, 1.0, 2.0, 2.0, 2.0]}, {0: "cannot install"})
    result = Bisection(5, measure).run()
    assert result.ends == (1, 4)
    assert change_points(result) == {(KEY, 1, 2)}


class Flaky(Levels):
    """As Levels, but build `flaky` fails from its second session on: it worked once."""

    def __init__(self, levels: dict[RowKey, list[float]], flaky: int) -> None:
        super().__init__(levels)
        self.flaky = flaky
        self.sessions_of_flaky = 0

    def __call__(self, i: int, j: int, rows: frozenset[RowKey] | None) -> Measured:
        if self.flaky in (i, j):
            self.sessions_of_flaky += 1
            if self.sessions_of_flaky > 1:
                self.calls.append((i, j))
                return Measured(i, j, {}, unusable={self.flaky: "failed after it worked"})
        return super().__call__(i, j, rows)


def test_a_build_failing_after_it_worked_leaves_the_span_around_it_unresolved() -> None:
    """The change is between 2 and 3, and build 3 fails from its second session on: the
    change is reported between 2 and 4 with 3 skipped, as the exhaustive search (which
    cannot use 3 on its right either) leaves it."""
    levels = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    result = Bisection(8, Flaky({KEY: levels}, 3)).run()
    assert result.unusable == {3: "failed after it worked"}
    (row,) = result.rows
    assert [(c.before, c.after, c.skipped) for c in row.change_points] == [(2, 4, (3,))]
    assert row.spreads == ()


@pytest.mark.parametrize("step", range(1, 8))
@pytest.mark.parametrize("flaky", range(1, 7))
def test_a_build_failing_after_it_worked_neither_hides_nor_invents_a_change(
        step: int, flaky: int) -> None:
    """Eight builds, one step anywhere, any inner build failing after its first session:
    the true change lies inside a reported change point, and every reported span (change
    point or spread) holds it: nothing is reported where the levels are flat."""
    levels = [1.0] * step + [2.0] * (8 - step)
    result = Bisection(8, Flaky({KEY: levels}, flaky)).run()
    (row,) = result.rows
    spans = [(c.before, c.after) for c in row.change_points]
    assert any(before < step <= after for before, after in spans), (spans, result.unusable)
    spread = [(s.before, s.after) for s in row.spreads]
    assert all(before < step <= after for before, after in spans + spread), (spans, spread)


def test_brace_lists_expand_in_order() -> None:
    assert series.expand("pip:cryptography=={42.0.8,43.0.3}") == [
        "pip:cryptography==42.0.8", "pip:cryptography==43.0.3"]
    assert series.expand("a{1,2}b{x,y}") == ["a1bx", "a1by", "a2bx", "a2by"]
    assert series.expand("env:A={1}") == ["env:A={1}"]  # one choice: not a list


def test_a_series_from_values_and_a_file(tmp_path: Path) -> None:
    listed = tmp_path / "builds.txt"
    listed.write_text("# old first\npip:cryptography==41.0.7\n\n"
                      "env:OQS_INSTALL_PATH=/opt/oqs + mask:aesni  # two items\n")
    found = series.parse(["here", f"@{listed}", "pip:cryptography=={43.0.3,44.0.3}"])
    assert found.specs() == ["here", "pip:cryptography==41.0.7",
                             "env:OQS_INSTALL_PATH=/opt/oqs + mask:aesni",
                             "pip:cryptography==43.0.3", "pip:cryptography==44.0.3"]
    assert found.builds[2].items == ("env:OQS_INSTALL_PATH=/opt/oqs", "mask:aesni")
    assert [b.name for b in found.builds][-1] == "44.0.3"
    assert found.series_id == series.parse(found.specs()).series_id
    assert found.series_id != series.parse(found.specs()[::-1]).series_id


def test_builds_a_hidden_value_would_show_alike_are_numbered_never_one_label() -> None:
    """`env:X={1,2,3}` shows each build as `env:X=***`: the spec names the build's runs, so
    two builds would be one label, one point in `history --by label`. Those are numbered by
    their position; builds shown apart keep their spec; no hidden value is shown."""
    found = series.parse(["env:TOKEN={s3cret-1,s3cret-2}", "here",
                          "env:OQS_INSTALL_PATH=/opt/oqs", "env:TOKEN=s3cret-3 + mask:aesni"])
    assert found.specs() == ["env:TOKEN=*** (build 1)", "env:TOKEN=*** (build 2)", "here",
                             "env:OQS_INSTALL_PATH=/opt/oqs", "env:TOKEN=*** + mask:aesni"]
    assert len(set(found.specs())) == len(found.specs())
    assert [b.name for b in found.builds][:2] == found.specs()[:2]
    assert "s3cret" not in repr(found.specs()) + found.series_id
    with pytest.raises(UsageError, match="characters long once numbered"):
        series.parse([f"env:{'N' * 990}={{1,2}}"])
    with pytest.raises(UsageError, match=r"build 2 is 1005 characters long, at most 1000"):
        series.parse(["here", f"env:{'N' * 997}=***"])


@pytest.mark.parametrize(("values", "message"), [
    ([], "at least two builds"),
    (["pip:cryptography==42.0.8"], "changed, got 1: pip:cryptography==42.0.8"),
    (["pip:cryptography=={42.0.8,43.0.3,42.0.8}"], "pip:cryptography==42.0.8 is given twice"),
    (["here", "here + "], "has an empty item"),
    (["@/nonexistent/builds.txt"], "cannot read it"),
    (["here", "liboqs:0.14.0"], "env:OQS_INSTALL_PATH=PREFIX"),
    (["here", "docker:debian"], "a build is made of here"),
])
def test_bad_series_are_usage_errors(values: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("+", r"\+")):
        series.parse(values)


def test_an_interruption_keeps_what_was_found() -> None:
    levels = [1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    measure = Levels({KEY: levels})

    def stopping(i: int, j: int, rows: frozenset[RowKey] | None) -> Measured:
        if len(measure.calls) == 3:
            raise KeyboardInterrupt
        return measure(i, j, rows)

    result = Bisection(8, stopping).run()
    assert result.status == "interrupted"
    assert positions(result.sessions) == measure.calls and len(measure.calls) == 3
    assert result.rows[0].ends.verdict == "faster"
