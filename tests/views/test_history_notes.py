"""A fleet's histories on the console: each step note names the machine its table is of,
for piped, the notes reach stderr apart from the tables."""

from __future__ import annotations

import pytest

from pqbench.app.history import history_of_runs
from pqbench.data.record.results import Run
from pqbench.views import answers
from tests.helpers.runs import environment, make_run


def _fleet() -> list[Run]:
    runs: list[Run] = []
    for host in ("m1", "m2"):
        for build in range(3):
            env = environment(hostname=host, os_build=f"debian-12/build-{build}")
            runs += [make_run(f"{host}-{build}-{i}", seed=build * 10 + i + (host == "m2"),
                              env=env) for i in range(2)]
    return runs


def test_each_machine_s_step_note_names_that_machine(capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    found = history_of_runs(_fleet(), "ML-KEM-768", implementation="liboqs",
                            operation="encaps")
    assert [one.machine.host for one in found] == ["m1", "m2"]
    assert all(one.series.basis for one in found)
    answers.histories(found, algorithm="ML-KEM-768", by="os_build")
    said = " ".join(capsys.readouterr().err.split())
    for one in found:
        assert f"steps on {one.machine.name} judged as compare judges runs" in said
