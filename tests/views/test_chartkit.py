"""What every chart shares: axis labels that stay distinct and legible, and which points
label a long axis."""

from __future__ import annotations

from pqbench.views.chartkit import axis_labels, cut_middle, tick_indexes

#: Two builds of one OS build, split by what sets them apart (`history.by_build`): cut at
#: their end, both read "debian-12/6.18.44-fc-v657 (…".
SPLIT = ["debian-12/6.18.44-fc-v657 (AES-NI hidden)",
         "debian-12/6.18.44-fc-v657 (cryptography 42.0.8)", "debian-12/6.18.44-fc-v657"]


def test_long_names_are_cut_in_the_middle_and_stay_distinct() -> None:
    shown = axis_labels(SPLIT, 28)
    assert len(set(shown)) == 3
    assert shown[2] == SPLIT[2]  # short enough: whole
    assert shown[0].endswith("hidden)") and shown[1].endswith("42.0.8)")
    assert all(s.startswith("debian-12/6.") and len(s) <= 28 for s in shown)


def test_names_alike_at_both_ends_get_the_characters_that_tell_them_apart() -> None:
    names = [f"debian-12/6.18.44-fc-v{n}-with-a-long-common-suffix" for n in (657, 658)]
    assert len({cut_middle(n, 28) for n in names}) == 1
    shown = axis_labels(names, 28)
    assert len(set(shown)) == 2 and all(len(s) < len(names[0]) for s in shown)
    assert axis_labels(["a" * 40, "a" * 40]) == [cut_middle("a" * 40, 28)] * 2


def test_a_long_axis_labels_the_ends_the_steps_and_evenly_between() -> None:
    shown = tick_indexes(100, [37])
    assert shown[0] == 0 and shown[-1] == 99 and 37 in shown
    assert len(shown) <= 20 and tick_indexes(12, [5]) == list(range(12))
