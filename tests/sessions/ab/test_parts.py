"""The parts of `pqbench ab` that need no worker: sides, the protocol, the stopping rule."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from pqbench.analysis import signedrank
from pqbench.catalog.algorithms import capabilities
from pqbench.platform.errors import UsageError
from pqbench.sessions import sides
from pqbench.sessions.ab import protocol, sequential, session


@pytest.mark.process
def test_sides_parse_bases_and_additions() -> None:
    here = sides.parse(["here"], "a")
    assert here.command is None and here.argv()[-3:] == ["-m", "pqbench", "worker"]
    other = sides.parse(["cmd:chroot /srv/trixie '/opt/my pqbench/bin/pqbench'",
                         "env:OQS_INSTALL_PATH=/opt/oqs", "mask:aesni"], "b")
    assert other.argv() == ["chroot", "/srv/trixie", "/opt/my pqbench/bin/pqbench", "worker"]
    environ = other.environ()
    assert environ["OQS_INSTALL_PATH"] == "/opt/oqs"
    assert environ["OPENSSL_ia32cap"] == capabilities.ia32cap_value(["aesni"])


def test_sides_never_show_secrets() -> None:
    side = sides.parse(["env:DATABASE=postgresql://me:hunter2@db/pq", "env:API_TOKEN=s3cr3t",
                        "env:OQS_INSTALL_PATH=https://u:pw@host/oqs",
                        "cmd:run --url https://u:pw@host/x pqbench"], "a")
    shown = side.shown_env()
    # Every value hidden unless its name is known to be harmless (then URLs redacted).
    assert shown == {"DATABASE": "***", "API_TOKEN": "***",
                     "OQS_INSTALL_PATH": "https://u:***@host/oqs"}
    assert "hunter2" not in side.spec and "s3cr3t" not in side.spec and "pw@" not in side.spec
    assert side.environ()["API_TOKEN"] == "s3cr3t"  # the worker still gets the real value
    assert sides.redact_argument("env:API_TOKEN=s3cr3t") == "env:API_TOKEN=***"
    assert sides.redact_argument("--db=postgresql://me:hunter2@db/pq") == \
        "--db=postgresql://me:***@db/pq"


@pytest.mark.process
@pytest.mark.parametrize(("items", "message"), [
    ([], "--a is required"),
    (["there"], "a side is here"),
    (["cmd:"], "cmd: needs a command"),
    (["cmd:'unclosed"], "cmd:'unclosed"),
    (["here", "cmd:x"], "at most one of here, userland:NAME and cmd:PREFIX"),
    (["userland:debian-trixie", "cmd:x"], "at most one of here, userland:NAME and cmd"),
    (["env:NOEQUALS"], "env:NAME=VALUE"),
    (["env:1BAD=x"], "env:NAME=VALUE"),
    (["mask:warp"], "unknown capability warp"),
    (["mask:aesni", "mask:shani"], "one mask:NAMES"),
    (["mask:aesni", "env:OPENSSL_ia32cap=~0"], "would silently combine"),
], ids=["none", "unknown kind", "empty cmd", "bad quoting", "two bases", "userland and cmd",
        "no equals", "bad name", "unknown mask", "two masks", "mask and knob"])
def test_bad_sides_are_usage_errors(items: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        sides.parse(items, "a")


def test_protocol_lines_round_trip_and_garbage_is_refused() -> None:
    line = protocol.encode({"type": "run", "seconds": 0.05})
    assert line.endswith("\n") and line.count("\n") == 1
    assert protocol.decode(line) == {"type": "run", "seconds": 0.05}
    for bad in ("hello", "[1, 2]", '{"no": "type"}', '{"type": 3}'):
        with pytest.raises(protocol.ProtocolError):
            protocol.decode(bad)
    assert protocol.row_of({"row": ["SHA-256", "python", "hash", 64]}) == (
        "SHA-256", "python", "hash", 64)
    with pytest.raises(protocol.ProtocolError, match="prepare needs a row"):
        protocol.row_of({"row": ["SHA-256", "python", "hash"]})


def test_looks_are_fixed_and_each_can_reach_its_level() -> None:
    looks = sequential.Looks()
    assert looks.counts == (12, 24, 48, 96, 192, 384)
    assert looks.per_look == pytest.approx(0.01 / 6)
    # The first look can reach alpha / 6: 2 / 2**12 < 0.00167 (2 / 2**10 could not).
    assert 2 / 2 ** looks.counts[0] < looks.per_look < 2 / 2 ** 10


def _sequential_session(rng: np.random.Generator, shift: float, noise: float,
                        looks: sequential.Looks) -> str:
    """The stopping rule of session.Session on simulated pairs: look at the scheduled
    counts, stop at the first decided look."""
    d = shift + rng.normal(0.0, noise, looks.last)
    before = np.exp(rng.normal(0.0, 0.3, looks.last))  # shared drift of each pair
    for count in looks.counts:
        outcome = sequential.analyse(list(before[:count]), list(before[:count] *
                                                                np.exp(d[:count])), looks, 0.0)
        if sequential.decided(outcome):
            return outcome.verdict
    return outcome.verdict


@pytest.mark.slow
def test_the_stopping_rule_keeps_false_verdicts_below_alpha() -> None:
    # A/A with no band at all (threshold 0), six looks: any p < alpha/6 at any look would
    # be a false verdict. Bonferroni keeps the total at most alpha. Far in the tails the
    # nested looks are nearly independent, so the bound is almost reached: 0.9 % over
    # 5000 seeded sessions; 9 of these 1000. The bound allows alpha plus 1.6 standard
    # errors of a 1000-trial count.
    rng = np.random.default_rng(1)
    looks = sequential.Looks()
    trials = 1000
    false = sum(_sequential_session(rng, 0.0, 0.05, looks) in ("faster", "slower")
                for _ in range(trials))
    assert false / trials <= 0.015


@pytest.mark.slow
def test_peeking_after_every_pair_would_inflate_false_verdicts() -> None:
    # Why the looks are fixed: testing at the full alpha after every pair from 8 to 100
    # pairs calls A/A sessions changed seven times as often as alpha (14 of 200).
    rng = np.random.default_rng(2)
    trials, false = 200, 0
    for _ in range(trials):
        d = rng.normal(0.0, 0.05, 100)
        for count in range(8, 101):
            if signedrank.p_value(d[:count]) < 0.01:
                false += 1
                break
    assert false / trials > 0.03


def test_a_large_change_is_decided_at_the_first_look() -> None:
    rng = np.random.default_rng(3)
    looks = sequential.Looks()
    d = np.log(20.0) + rng.normal(0.0, 0.1, 12)
    outcome = sequential.analyse([1000.0] * 12, list(1000.0 * np.exp(d)), looks, None)
    assert sequential.decided(outcome) and outcome.verdict == "faster"


def test_worker_pairs_get_different_paddings_within_a_page() -> None:
    for seed in range(50):
        paddings = session.choose_paddings(random.Random(seed), 4)
        assert len(paddings) == len(set(paddings)) == 4
        assert all(0 <= p < 4096 and p % 16 == 0 for p in paddings)
    assert len(session.choose_paddings(random.Random(1), 256)) == 256
    for count in (2, 257):
        with pytest.raises(ValueError, match="3 to 256 worker pairs"):
            session.choose_paddings(random.Random(1), count)


class _Budgets(session.Session):
    """A real session (real workers plan and prepare every row) that records each row's
    share of the budget instead of measuring it."""

    budgets: list[tuple[session.Row, float]]

    def _pairs(self, row: session.Row, ready_a: dict[str, object],
               ready_b: dict[str, object], budget: float, where: str = "") -> None:
        self.budgets = [*getattr(self, "budgets", []), (row, budget)]


@pytest.mark.process
def test_each_row_gets_what_is_left_over_the_rows_still_to_come() -> None:
    here = sides.parse(["here"], "a")
    settings = session.Settings(algorithms=("SHA-256",), implementations=("python",),
                                operations=("hash",), block_sizes=(64, 256, 1024),
                                max_seconds=3000.0, worker_pairs=3)
    recorder = _Budgets(here, here, settings, "test")
    outcome = recorder.run()
    assert outcome.status == "complete", outcome.error
    assert [row[3] for row, _ in recorder.budgets] == [64, 256, 1024]
    # Nothing was measured, so the whole budget is left: 3000/3, then 3000/2, then 3000
    # (less the seconds the workers took to prepare the rows, well under 1 % of it).
    shares = [budget for _, budget in recorder.budgets]
    assert shares == pytest.approx([1000.0, 1500.0, 3000.0], rel=0.01)
    assert shares[0] <= 1000.0


def test_sessions_at_once_claim_different_cpus_the_highest_first(tmp_path: Path) -> None:
    """Each session takes the highest CPU no other holds; with every one held, the highest
    unclaimed; a CPU asked for is taken whoever holds it; a claim let go is free again."""
    import os

    folder = str(tmp_path)
    first, first_claim = session.choose_cpu(None, folder=folder, allowed=[0, 3, 1])
    second, second_claim = session.choose_cpu(None, folder=folder, allowed=[0, 3, 1])
    third, third_claim = session.choose_cpu(None, folder=folder, allowed=[0, 3, 1])
    assert (first, second, third) == (3, 1, 0)
    assert None not in (first_claim, second_claim, third_claim)
    assert session.choose_cpu(None, folder=folder, allowed=[0, 3, 1]) == (3, None)
    asked, asked_claim = session.choose_cpu(1, folder=folder, allowed=[0, 3, 1])
    assert (asked, asked_claim) == (1, None)  # held by the second session, taken anyway
    os.close(second_claim)  # type: ignore[arg-type]
    again, again_claim = session.choose_cpu(None, folder=folder, allowed=[0, 3, 1])
    assert again == 1 and again_claim is not None
    for fd in (first_claim, third_claim, again_claim):
        os.close(fd)  # type: ignore[arg-type]
    assert session.choose_cpu(None, folder=folder, allowed=[]) == (None, None)


def test_a_claim_file_that_is_not_a_plain_file_is_neither_followed_nor_waited_on(
        tmp_path: Path) -> None:
    """A symbolic link where CPU 1's claim goes (another user's, say) is not followed and
    its target is left as it was; a FIFO is not waited on: neither CPU is claimed, the
    session takes the highest, unclaimed."""
    import os

    target = tmp_path / "precious"
    target.write_text("keep me")
    (tmp_path / session.CLAIM_NAME.format(cpu=1)).symlink_to(target)
    os.mkfifo(tmp_path / session.CLAIM_NAME.format(cpu=0))
    assert session.claim_cpu(1, str(tmp_path)) is None
    assert session.choose_cpu(None, folder=str(tmp_path), allowed=[0, 1]) == (1, None)
    assert target.read_text() == "keep me"
    assert session.claim_cpu(2, str(tmp_path / "no such folder")) is None
