"""Which build a note may belong to, decided directly: a name some stored run bears (an
OS build, a label, a host, a date, or a build a group was split into), never one no
history or report would show."""

from __future__ import annotations

import pytest

from pqbench.app.annotations import check_build, names
from pqbench.data.store.database import RunInfo
from pqbench.platform.errors import UsageError
from pqbench.platform.untrusted import SHOWN


def _info(run_id: str, os_build: str | None, label: str | None = None) -> RunInfo:
    return RunInfo(run_id, "speed", f"2026-11-{run_id[-2:]}T10:00:00+00:00", "complete",
                   label, os_build, "host-1", 4)


RUNS = [_info("r01", "debian-12/6.1", "before"), _info("r02", "debian-12/6.1"),
        _info("r03", "debian-13/6.12", "after")]


def test_the_names_of_stored_points_in_the_order_first_stored() -> None:
    assert names(RUNS) == {"OS builds": ["debian-12/6.1", "debian-13/6.12"],
                           "labels": ["before", "after"], "hosts": ["host-1"],
                           "dates": ["2026-11-01", "2026-11-02", "2026-11-03"]}


@pytest.mark.parametrize("build", ["debian-13/6.12", "before", "host-1", "2026-11-02",
                                   "debian-12/6.1 (AES-NI hidden)"])
def test_a_note_for_a_point_history_shows_is_taken(build: str) -> None:
    check_build(build, RUNS)


@pytest.mark.parametrize("build", ["no-such-build", "debian-12", "debian-12/6.1 (x",
                                   "before (x) y"])
def test_a_note_for_a_name_no_run_bears_is_refused_naming_the_builds(build: str) -> None:
    with pytest.raises(UsageError) as refused:
        check_build(build, RUNS)
    assert str(refused.value) == (
        f"no stored run has the build {build!r}, so no history or report would show its "
        "note: the OS builds are 'debian-12/6.1', 'debian-13/6.12'; the labels are "
        "'before', 'after'")


def test_the_names_closest_to_a_mistyped_one_come_first() -> None:
    with pytest.raises(UsageError, match=r"note: the OS builds are 'debian-13/6.12', "
                                         r"'debian-12/6.1'; the labels are 'before', 'after'$"):
        check_build("Debian-13/6.12", RUNS)
    with pytest.raises(UsageError, match=r"the labels are 'after', 'before'$"):
        check_build("aftr", RUNS)


def test_a_long_list_is_cut_and_one_name_is_said_as_one() -> None:
    many = [_info(f"r{i:02d}", f"build-{i}") for i in range(1, SHOWN + 4)]
    with pytest.raises(UsageError, match=r"the OS builds are 'build-1', .*'build-10' and 3 "
                                         r"more$"):
        check_build("x", many)
    with pytest.raises(UsageError, match=r"note: the OS build is 'only'$"):
        check_build("x", [_info("r01", "only")])
