"""A fleet's machines in a message: `report`, `compare` and `history` name at most ten, the
closest to what was asked first, and count the rest (`app.identity.machines_named`); a
store of hundreds of machines must not turn a refusal into pages."""

from __future__ import annotations

import pytest

from pqbench.app.compare import compare_sides
from pqbench.app.identity import machine_of, machines_named
from pqbench.app.report import one_machine
from pqbench.data.record.results import Run
from pqbench.platform.errors import ComparisonError
from tests.helpers.runs import environment, make_run


def _fleet(count: int) -> list[Run]:
    return [make_run(f"r{i:02d}", seed=i, env=environment(hostname=f"host-{i:02d}"))
            for i in range(count)]


def test_ten_machines_are_named_the_closest_first_and_the_rest_counted() -> None:
    machines = [machine_of(r) for r in _fleet(14)]
    said = machines_named(machines, near="host-O7")
    assert said.startswith(f"'{machines[7].name}', ") and said.endswith(" and 4 more")
    assert said.count("'host-") == 10
    assert machines_named(machines[:3]) == ", ".join(f"'{m.name}'" for m in machines[:3])
    assert machines_named([machines[0], machines[0]]) == f"'{machines[0].name}'"


def test_a_report_of_many_machines_refuses_naming_ten_and_counting_the_rest() -> None:
    runs = _fleet(14)
    with pytest.raises(ComparisonError) as refused:
        one_machine(runs, None, False)
    said = str(refused.value)
    assert said.startswith("the runs come from 14 machines (") and " and 4 more): " in said
    assert "--machine NAME" in said
    with pytest.raises(ComparisonError) as unknown:
        one_machine(runs, "host-O3", False)
    after = str(unknown.value).split("machines: ")[1]
    assert after.startswith(f"'{machine_of(runs[3]).name}'") and after.endswith(" and 4 more")
    kept, notes = one_machine(runs, "host-03", False)
    assert [r.run_id for r in kept] == ["r03"] and notes == []
    mixed, notes = one_machine(runs, None, True)
    assert len(mixed) == 14 and notes[0].startswith("mixing the runs of 14 machines")
    assert notes[0].endswith(" and 4 more")


def test_compare_of_many_machines_none_on_both_sides_names_ten() -> None:
    runs = _fleet(14)
    with pytest.raises(ComparisonError) as refused:
        compare_sides(runs[:7], runs[7:])
    said = str(refused.value)
    assert said.startswith("the runs come from 14 machines (") and " and 4 more) and " in said
    pooled = compare_sides(runs[:7], runs[7:], cross_machine=True)
    assert " and 4 more), pooled as --cross-machine asks" in pooled.warnings[0]
