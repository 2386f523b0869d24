"""The smaller frictions a new user met, each with the test that keeps it fixed: advice
already followed, repeated options, a warning per algorithm, percentages that contradict
themselves, words that say what a figure is."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pqbench.data.store import Store
from tests.helpers import invoke
from tests.helpers.runs import make_runs

#: One row with no family and no kind of its own in the store: its spread leans on the
#: default prior whatever its own runs are.
LONE = (("ML-KEM-768", "liboqs", "encaps", None, 60_000.0),)


def _compare_after(tmp_path: Path, calibrated: bool) -> str:
    db = tmp_path / ("calibrated.db" if calibrated else "plain.db")
    store = Store.open(str(db))
    series = make_runs("cal", 5, seed=11, drift=0.02, label="calibration", rows=LONE)
    if calibrated:
        series = [replace(run, settings={**run.settings, "calibration": {
            "series": "s1", "index": i + 1, "runs": 5}}) for i, run in enumerate(series)]
    store.save_runs(series)
    store.save_runs(make_runs("a", 1, seed=12, start_day=2, rows=LONE, label="a"))
    store.save_runs(make_runs("b", 1, seed=13, start_day=3, rows=LONE, label="b"))
    store.close()
    done = invoke("compare", "a0", "b0", "--db", str(db), env={"COLUMNS": "120"})
    assert done.returncode == 0, done.stderr
    return " ".join((done.stdout + done.stderr).split())


def test_compare_after_calibrating_does_not_advise_calibrating(tmp_path: Path) -> None:
    """Five calibration runs of the row are stored: the verdict rests on them (and the
    prior, the row having no family), and no line asks for `pqbench calibrate` again."""
    after = _compare_after(tmp_path, calibrated=True)
    assert "judged against this machine's run-to-run spread" in after
    assert "pqbench calibrate" not in after
    # The same store without the calibration mark: the advice is right there.
    before = _compare_after(tmp_path, calibrated=False)
    assert "`pqbench calibrate` sharpens it" in before


def test_bytes_named_twice_keeps_both_sizes() -> None:
    """`--bytes 16 --bytes 16384` measured only 16384; every command that takes it keeps
    each size, in ascending order, once."""
    from typer.main import get_command

    from pqbench.cli import app, paired

    settings, _ = paired.settings(["aes-128-gcm"], None, None, [16384, 16, 16384],
                                  max_seconds=10, round_seconds=0.05, threshold="auto",
                                  cpu=None)
    assert settings.block_sizes == (16, 16384)
    for command in ("speed", "ab", "bisect", "calibrate"):
        context = get_command(app).make_context(  # type: ignore[attr-defined]
            "pqbench", [command, "--help"], resilient_parsing=True)
        found = context.command.get_command(context, command)
        (option,) = [p for p in found.params if "--bytes" in getattr(p, "opts", ())]
        assert option.multiple, command


def test_an_rsa_exchange_is_said_to_be_key_transport() -> None:
    """A ratio per exchange against RSA says what an RSA "exchange" counts."""
    from pqbench.analysis.figures import run_figures
    from pqbench.views import ratios as ratio_views
    from tests.helpers.runs import make_run

    rows = (("ML-KEM-768", "liboqs", "keygen", None, 20_000.0),
            ("ML-KEM-768", "liboqs", "encaps", None, 60_000.0),
            ("ML-KEM-768", "liboqs", "decaps", None, 50_000.0),
            ("RSA-2048", "libcrypto", "encrypt", None, 30_000.0),
            ("RSA-2048", "libcrypto", "decrypt", None, 1_000.0))
    run = make_run("r", seed=3, rows=rows)
    figures = run_figures(replace(run, settings={**run.settings, "interleaved": True}))
    against_rsa = [r for r in figures.mission if r.denominator.algorithm == "RSA-2048"]
    assert against_rsa and against_rsa[0].kind == "exchange"
    (note,) = [n for n in ratio_views.notes(against_rsa) if "exchange" in n]
    assert "RSA-2048 encrypt + decrypt: key transport" in note
    assert "ML-KEM-768 keygen + encaps + decaps" in note
    assert ratio_views.notes([]) == []


def test_show_csv_is_the_run_as_speed_csv_wrote_it_with_its_build_label_and_time(
        tmp_path: Path) -> None:
    """`show RUN --csv` prints the stored run's rows as `speed --csv` did; each row carries
    the run's start, OS build and label beside its load."""
    import csv
    import io

    from pqbench.views import delimited
    from tests.helpers.runs import environment, make_run

    db = tmp_path / "s.db"
    run = make_run("20260101-csv", seed=5, label="=before update",
                   env=environment(run={"others_cpu": 0.02, "cpus": 2}))
    store = Store.open(str(db))
    store.save_runs([run])
    stored = store.load_run(run.run_id)
    store.close()
    shown = invoke("show", run.run_id, "--csv", "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == delimited.run_csv(stored)
    rows = list(csv.DictReader(io.StringIO(shown.stdout)))
    assert len(rows) == len(run.measurements)
    assert list(rows[0])[-5:] == ["started_at", "os_build", "label", "others_cpu",
                                  "cpu_steal"]
    assert {(r["started_at"], r["os_build"], r["label"]) for r in rows} == {
        (run.started_at, "18E226", "'=before update")}  # a label is never a formula


def test_public_key_rows_carry_their_security_bits_and_say_where_they_come_from() -> None:
    """A post-quantum row's bits come from its NIST category, mapped to the bits the
    catalog gives the category's reference attack (AES-k key search: k and k/2; a SHA-n
    collision: n/2 and n/2); a classical scheme's are its classical bits, 0 quantum."""
    from pqbench.catalog import algorithms
    from pqbench.catalog.algorithms.base import CATEGORY_BITS, security_attributes

    def bits(name: str) -> tuple[object, object]:
        found = security_attributes(algorithms.by_name(name))
        return found["security_bits"], found["quantum_security_bits"]

    assert bits("ML-KEM-512") == (128, 64)  # category 1: AES-128 key search
    assert bits("ML-KEM-768") == (192, 96)  # category 3: AES-192
    assert bits("ML-KEM-1024") == (256, 128)  # category 5: AES-256
    assert bits("ML-DSA-44") == (128, 128)  # category 2: a SHA-256 collision
    assert bits("X25519") == (128, 0) and bits("RSA-2048") == (112, 0)
    # The categories' references agree with the catalog's own AES and SHA-2 rows.
    aes128, aes256 = (security_attributes(algorithms.by_name(n)) for n in ("AES-128-GCM",
                                                                          "AES-256-GCM"))
    sha256 = security_attributes(algorithms.by_name("SHA-256"))
    assert CATEGORY_BITS[1][1:] == (aes128["security_bits"], aes128["quantum_security_bits"])
    assert CATEGORY_BITS[5][1:] == (aes256["security_bits"], aes256["quantum_security_bits"])
    assert CATEGORY_BITS[2][1:] == (sha256["security_bits"], sha256["quantum_security_bits"])
    assert security_attributes(algorithms.by_name("AES-256-XTS"))["key_bits"] == 512


@pytest.mark.slow
def test_a_measured_post_quantum_row_stores_its_bits_and_the_table_shows_them(
        tmp_path: Path) -> None:
    """Measured, stored, shown: ML-KEM-768's row carries 192 and 96 bits."""
    import json

    from pqbench.views import runs as run_views

    done = invoke("speed", "ml-kem-768", "-i", "cryptography", "-o", "encaps", "--seconds",
                  "0.01", "--rounds", "2", "--json", "--db", str(tmp_path / "b.db"))
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)["results"]
    assert (row["security_bits"], row["quantum_security_bits"]) == (192, 96)
    store = Store.open(str(tmp_path / "b.db"), create=False)
    run = store.load_run(json.loads(done.stdout)["run_id"])
    table = run_views.measurements_table(run)
    assert table.rows[0][-1].endswith("; sec 192 PQ 96")
