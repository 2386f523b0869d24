"""What `pqbench publish` shows, decided in `app.publish`: machines, their builds newest
first, the regressions (a planted masked jump listed, an A/A machine not), each machine's
paired post-quantum ratios and its two newest builds compared; a part kept between
publishes only while its runs are the same. In-process, on a real SQLite store."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from pqbench.analysis.history import HistoryStep, Point, Series
from pqbench.app import publish
from pqbench.app.publish import Machine, MachinePart, machine_of, regressions, site_of
from pqbench.data.store import Store
from pqbench.platform.errors import NothingStored
from tests.helpers.fleet import Fleet

#: Machine 0: ML-KEM 20 % slower from build 2. Machine 1: its newest build masks AES-NI
#: (a masked jump). Machine 2: four builds of one speed under four names (A/A), its newest
#: run taken under load.
FLEET = Fleet(machines=3, builds=4, runs=3, jumps={(0, 2): {"ML-KEM-768": 0.8}},
              masked=frozenset({(1, 3)}), loaded=frozenset({(2, 3)}))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    found = Store.open(str(tmp_path_factory.mktemp("fleet") / "fleet.db"))
    found.save_runs(list(FLEET.all_runs()))
    return found


@pytest.fixture(scope="module")
def site(store: Store) -> publish.Site:
    return site_of(store)


def _part(site: publish.Site, host: str) -> MachinePart:
    return next(p for p in site.parts if p.machine.host == host)


def test_machines_are_told_apart_by_host_cpu_cores_and_hypervisor() -> None:
    one = Machine("m01", "Test CPU 1", 8, None)
    assert one.name == "m01 (Test CPU 1, 8 cores)"
    assert len(one.key) == 12 and one.key == Machine("m01", "Test CPU 1", 8, None).key
    others = {Machine("m02", "Test CPU 1", 8, None), Machine("m01", "Test CPU 2", 8, None),
              Machine("m01", "Test CPU 1", 4, None), Machine("m01", "Test CPU 1", 8, "KVM")}
    assert one.key not in {m.key for m in others} and len({m.key for m in others}) == 4
    assert Machine(None, None, None, None).name == "an unnamed host"


def test_a_machine_is_read_from_the_run_fingerprint() -> None:
    run = next(FLEET.runs_of(1, 0))
    assert machine_of(run) == Machine("m01", "Test CPU 1", 8, None)
    kvm = replace(run, environment={**run.environment, "platform": {
        "virtualization": {"dmi": "KVM", "hypervisor": True}}})
    assert machine_of(kvm).hypervisor == "KVM"
    flagged = replace(run, environment={**run.environment, "platform": {
        "virtualization": {"hypervisor": True}}})
    assert machine_of(flagged).hypervisor == "a hypervisor"


def test_every_machine_has_its_part_newest_run_first(site: publish.Site) -> None:
    assert [p.machine.host for p in site.parts] == ["m02", "m01", "m00"]
    for part in site.parts:
        assert [b.name for b in part.builds] == [f"debian-12/6.1.0-{b:03d}"
                                                 for b in (3, 2, 1, 0)]
        assert all(b.runs == 3 for b in part.builds)
        assert len(part.series) == 10


def test_the_latest_run_says_whether_it_was_taken_under_load(site: publish.Site) -> None:
    loaded = _part(site, "m02").latest
    assert loaded.run_id == "r02-003-02" and loaded.build == "debian-12/6.1.0-003"
    assert loaded.under_load and loaded.others_cpu == pytest.approx(0.6)
    assert not _part(site, "m00").latest.under_load


def test_the_regressions_list_the_masked_jump_and_no_a_a_row(site: publish.Site) -> None:
    found = {(r.machine.host, r.series.algorithm, r.series.operation): r
             for r in site.regressions}
    masked = found[("m01", "AES-256-GCM", "encrypt")]
    assert masked.step.verdict == "slower" and masked.step.build == "debian-12/6.1.0-003"
    assert masked.step.ci_low is not None and masked.step.ci_high is not None
    assert masked.step.ci_low <= masked.step.ratio <= masked.step.ci_high < 0.6
    assert "knobs.OPENSSL_ia32cap" in [c.field for c in masked.causes]
    for operation in ("keygen", "encaps", "decaps"):
        jump = found[("m00", "ML-KEM-768", operation)]
        assert jump.step.verdict == "slower" and jump.step.build == "debian-12/6.1.0-002"
        assert jump.step.ratio == pytest.approx(0.8, rel=0.05)
    assert not [key for key in found if key[0] == "m02"]  # four builds, one speed
    assert len(found) == 4
    # Newest first: the masked build's first run started after machine 0's build 2.
    assert site.regressions[0].series.algorithm == "AES-256-GCM"
    assert [r.when for r in site.regressions] == sorted((r.when for r in site.regressions),
                                                        reverse=True)


def test_each_machine_has_its_pq_against_classical_ratios_with_intervals(
        site: publish.Site) -> None:
    for part in site.parts:
        kinds = {r.kind for r in part.ratios}
        assert kinds == {"exchange", "signature"}
        for ratio in part.ratios:
            assert ratio.ci_low is not None and ratio.ci_high is not None
            assert ratio.ci_low <= ratio.estimate <= ratio.ci_high
            assert ratio.pairs == FLEET.rounds
            assert ratio.run_id == part.latest.run_id
        exchange = next(r for r in part.ratios if r.kind == "exchange")
        # ML-KEM-768 keygen+encaps+decaps against two X25519 keygens and derives, by the
        # planted rates (machine 0's ML-KEM is 0.8x as fast from build 2).
        kem = 1 / 40_000 + 1 / 35_000 + 1 / 30_000
        ecdh = 2 / 25_000 + 2 / 20_000
        slower = 1 / 0.8 if part.machine.host == "m00" else 1.0
        assert exchange.estimate == pytest.approx(kem * slower / ecdh, rel=0.05)


def test_the_two_newest_builds_are_compared_as_compare_judges_them(
        site: publish.Site) -> None:
    comparison = _part(site, "m01").comparison
    assert comparison is not None
    assert (comparison.before, comparison.after) == ("debian-12/6.1.0-002",
                                                    "debian-12/6.1.0-003")
    assert comparison.after_runs == ("r01-003-00", "r01-003-01", "r01-003-02")
    aes = next(r for r in comparison.rows if r.key.algorithm == "AES-256-GCM")
    assert aes.verdict == "slower" and "knobs.OPENSSL_ia32cap" in [c.field for c in aes.causes]
    knob = next(d for d in comparison.differences if d[0] == "knobs.OPENSSL_ia32cap")
    assert knob[1:3] == ("(none)", "~0x200000200000000") and "aesni" in knob[3]
    assert all(r.verdict != "slower" for r in _part(site, "m02").comparison.rows)


def _series(*steps: tuple[int, str], started: str = "2026-01-0") -> Series:
    points = tuple(Point(f"b{i}", f"{started}{i + 1}T00:00:00+00:00", (f"r{i}",), 5, 100.0,
                         99.0, 101.0) for i in range(4))
    return Series("X", "impl", "op", None, "ops/s", points, tuple(
        HistoryStep(index, f"b{index}", 100.0, 80.0, 0.8, verdict)
        for index, verdict in steps))


def test_regressions_take_each_row_s_latest_step_newest_first() -> None:
    machine = Machine("h", None, None, None)
    latest = publish.LatestRun("r3", "speed", "2026-01-04", "b3", False, None, None)
    part = MachinePart(machine, "d", ("r3",), (), latest, (
        _series((1, "faster"), (3, "slower")), _series(), _series((2, "faster"))))
    found = regressions([part])
    assert [(r.step.index, r.step.verdict) for r in found] == [(3, "slower"), (2, "faster")]
    assert found[0].when == "2026-01-04T00:00:00+00:00"


def test_a_part_turns_into_json_and_back_unchanged(site: publish.Site) -> None:
    for part in site.parts:
        text = json.dumps(publish.part_as_dict(part), allow_nan=True)
        assert publish.part_from_dict(json.loads(text)) == part
    with pytest.raises(ValueError, match="format"):
        publish.part_from_dict({**publish.part_as_dict(site.parts[0]), "format": 0})


def test_an_infinite_bound_survives_the_round_trip(site: publish.Site) -> None:
    part = site.parts[0]
    series = part.series[0]
    odd = replace(series, points=(replace(series.points[0], ci_high=math.inf),
                                  *series.points[1:]))
    back = publish.part_from_dict(json.loads(json.dumps(publish.part_as_dict(
        replace(part, series=(odd, *part.series[1:]))))))
    assert back.series[0].points[0].ci_high == math.inf


def test_a_part_is_kept_while_its_machine_has_no_new_run(store: Store, site: publish.Site,
                                                         tmp_path: Path) -> None:
    kept = {p.machine.key: p for p in site.parts}
    again = site_of(store, kept)
    assert again.made == () and again == site
    copy = Store.open(str(tmp_path / "copy.db"))
    copy.save_runs(list(FLEET.all_runs()))
    copy.save_runs([next(FLEET.runs_of(0, 3, start=10))])
    grown = site_of(copy, kept)
    machine = _part(site, "m00").machine.key
    assert grown.made == (machine,)
    assert _part(grown, "m00").latest.run_id == "r00-003-10"
    copy.annotate("debian-12/6.1.0-001", "a note every machine's history shows")
    assert len(site_of(copy, kept).made) == 3


class Reads:
    """A store that counts the run fingerprints it was asked for (the only thing that
    tells a run's machine), and answers as the store does."""

    def __init__(self, store: Store) -> None:
        self.store, self.fingerprints = store, 0

    def load_runs(self, wanted=None, *, rows_too=True, fingerprints=True):  # type: ignore[no-untyped-def]
        found = self.store.load_runs(wanted, rows_too=rows_too, fingerprints=fingerprints)
        self.fingerprints += len(found) if fingerprints else 0
        return found

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)


def test_publishing_again_reads_the_fingerprints_of_new_runs_and_recomputed_machines(
        site: publish.Site, tmp_path: Path) -> None:
    copy = Store.open(str(tmp_path / "copy.db"))
    copy.save_runs(list(FLEET.all_runs()))
    kept = {p.machine.key: p for p in site.parts}
    reads = Reads(copy)
    assert site_of(reads, kept).made == () and reads.fingerprints == 0
    copy.save_runs([next(FLEET.runs_of(1, 3, start=10))])
    reads = Reads(copy)
    again = site_of(reads, kept)
    assert again.made == (_part(site, "m01").machine.key,)
    # The new run, then its machine's runs whole for the machine's part (12 + 1), then
    # that machine's newest two builds and newest speed run for the comparison and ratios.
    assert reads.fingerprints == 1 + 13 + 7 + 1
    assert _part(again, "m01").runs[-1] == "r01-003-10"


def test_an_empty_store_says_how_to_make_a_run(tmp_path: Path) -> None:
    with pytest.raises(NothingStored, match="pqbench speed"):
        site_of(Store.open(str(tmp_path / "empty.db")))


def test_each_machines_series_are_the_ones_history_decides(store: Store,
                                                          site: publish.Site) -> None:
    """The site decides nothing again: a machine's series (points, levels, steps and
    their verdicts) are `pqbench history`'s for that machine, row for row."""
    from pqbench.app.history import histories

    compared = 0
    for part in site.parts:
        shown = {(s.algorithm, s.implementation, s.operation, s.block_size): s.as_dict()
                 for s in part.series if s.algorithm == "ML-KEM-768"}
        decided = {(h.series.algorithm, h.series.implementation, h.series.operation,
                    h.series.block_size): h.series.as_dict()
                   for h in histories(store, "ML-KEM-768", machine=part.machine.key)}
        assert shown and shown == decided
        compared += len(shown)
    steps = [step["verdict"] for part in site.parts if part.machine.host == "m00"
             for s in part.series if s.algorithm == "ML-KEM-768" for step in s.as_dict()["steps"]]
    assert "slower" in steps and compared >= 3
