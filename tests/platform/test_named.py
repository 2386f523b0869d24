"""The stored names a refusal lists (`platform.untrusted.named`): bounded, the closest to
the name asked for first, each shown literally."""

from __future__ import annotations

from pqbench.platform.untrusted import SHOWN, first_few, named


def test_a_few_names_are_listed_whole_in_their_order() -> None:
    assert named(["b", "a", "b", "c"]) == "'b', 'a', 'c'"
    assert named([]) == "none"


def test_a_fleet_s_thousand_labels_are_cut_to_the_closest_and_a_count() -> None:
    labels = [f"fleet-{m:02d}/build-{b:03d}" for b in range(50) for m in range(20)]
    said = named(labels, near="fleet-07/build-042x")
    listed = said.split(" and ")[0].split(", ")
    assert len(listed) == SHOWN
    assert listed[0] == "'fleet-07/build-042'"
    assert said.endswith(f" and {len(labels) - SHOWN} more")
    # Nothing close: the first stored names, in their order.
    assert named(labels, near="zzz").startswith("'fleet-00/build-000', 'fleet-01/build-000'")


def test_exactly_as_many_as_shown_has_no_count_and_one_more_has() -> None:
    names = [f"n{i}" for i in range(SHOWN)]
    assert " more" not in named(names)
    assert named([*names, "last"]).endswith(" and 1 more")


def test_a_hostile_name_is_shown_without_its_controls_or_password() -> None:
    said = named(["a\x1b]0;pwned\x07b", "postgresql://u:hunter2@h/db"])
    assert "\x1b" not in said and "\x07" not in said and "hunter2" not in said


def test_names_as_close_as_each_other_keep_their_stored_order() -> None:
    labels = ["fleet-13", "fleet-03", "fleet-30", "other"]
    assert named(labels, near="fleet-3") == "'fleet-13', 'fleet-03', 'fleet-30', 'other'"
    assert named(labels, near="fleet-03") == "'fleet-03', 'fleet-13', 'fleet-30', 'other'"
    # Compared by their key: a machine's host, not its whole name.
    hosts = {"m1 (Intel, 2 cores)": "m1", "h9 (AMD, 8 cores)": "h9"}
    assert named(list(hosts), near="h9x", key=hosts.__getitem__).startswith("'h9 (AMD")


def test_what_was_done_to_many_names_the_first_few_and_counts_the_rest() -> None:
    ids = [f"p{i}" for i in range(500)]
    assert first_few(ids, 3) == "p0, p1, p2 and 497 more"
    assert first_few(ids[:3], 3) == "p0, p1, p2"
    assert first_few(ids[:4]) == "p0, p1, p2, p3" and first_few([]) == ""
    assert first_few(["a\x1b[31mb"], 1) == "a[31mb"  # no control character reaches a terminal
