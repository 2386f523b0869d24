"""`pqbench files hash` and `pqbench files corpus`: file benchmarks, stored like speed runs."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Annotated

import typer

from pqbench.catalog import algorithms
from pqbench.cli.common import (
    DbOption,
    JsonOption,
    LabelOption,
    handles_errors,
    print_json,
    store_or_keep,
)
from pqbench.cli.root import app
from pqbench.data.record import codec
from pqbench.measure import environment
from pqbench.measure.files import storage
from pqbench.platform import interrupts
from pqbench.platform.errors import UsageError
from pqbench.platform.untrusted import printable
from pqbench.views import console, numbers
from pqbench.views.tables import Column, Table

files_app = typer.Typer(help="File benchmarks: stream-hash files; plain versus encrypted I/O.",
                        no_args_is_help=True)
app.add_typer(files_app, name="files")

MAX_SIZE = 1 << 50
MAX_JOBS = 1024


def parse_size(text: str) -> int:
    """`256M`, `1G`, `1.5GB`, `1GiB`, `300000000`: read by pydantic's ByteSize, so the
    units mean what the output prints: decimal (`1G` = `1GB` = 10^9 bytes, shown as
    "1.00 GB"), binary with an i (`1GiB` = 2^30 bytes), bytes without a unit."""
    from pydantic import ByteSize, TypeAdapter, ValidationError

    try:
        size = int(TypeAdapter(ByteSize).validate_python(text))
    except ValidationError:
        raise UsageError(f"cannot read size {printable(text)!r}; write e.g. 256M (256 x 10^6 "
                         "bytes), 1G or 1GiB (2^30 bytes)") from None
    if not 0 < size <= MAX_SIZE:
        raise UsageError(f"size {printable(text)!r} is not above 0 and at most the "
                         f"{numbers.size(MAX_SIZE)} this command takes")
    return size


def _hash_name(name: str) -> str:
    (alg,) = algorithms.resolve([name], kind="hash")
    if alg.kind != "hash":
        raise UsageError(f"{alg.name} is not a hash; choose e.g. sha256, sha512, blake3")
    return alg.name


def _storage(paths: list[str]) -> list[dict[str, object]]:
    seen: dict[str, dict[str, object]] = {}
    for path in paths:
        try:
            found = storage.fingerprint(path)
        except OSError:
            continue
        seen.setdefault(str(found["st_dev"]), found)
    return list(seen.values())


@files_app.command("hash")
@handles_errors
def hash_command(
    paths: Annotated[list[str], typer.Argument(metavar="PATH", help="Files to hash.")],
    algorithm: Annotated[list[str] | None, typer.Option(
        "--algorithm", "-a", metavar="NAME", help=(
            "sha256 (default), sha512, sha3-256, sha3-512, blake2b, blake2s, blake3, crc32, "
            "crc32c, fletcher64; repeat to measure several in alternation, each against the "
            "first (-a sha256 -a sha512: SHA-512 against SHA-256 on this file)."))] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, max=MAX_JOBS,
                                      metavar="N",
                                      help="Files measured in parallel (processes).")] = 1,
    cache_mode: Annotated[str, typer.Option("--cache", metavar="MODE", help=(
        "cold: drop the file from the page cache before each pass; warm: read it once "
        "first; as-is: measure as found."))] = "cold",
    runs_wanted: Annotated[int | None, typer.Option(
        "--runs", "-r", min=1, max=1000,
        metavar="N",
        help="Timed cycles per file, each a plain read and one pass of each hash, in "
             "alternation (as hyperfine's --runs): the median and CV of each, and each hash "
             "against reading the file and against the first hash, pair by pair. Default: "
             "the cycles the answers need: at least 8 (a 99 % interval), more while one is "
             "undecided, up to 30 or 30 s.")] = None,
    warmup: Annotated[int, typer.Option(
        "--warmup", "-w", min=0, max=100, metavar="N",
            help="Untimed cycles first.")] = 0,
    label: LabelOption = None,
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Read each file, then hash it: throughput, digest, cache state, and the answers:
    each hash against reading the file and against the first hash, paired, with intervals."""
    # The hashers (numpy for Fletcher-64) load here, not when `pqbench --help` starts.
    from pqbench.analysis import ratios
    from pqbench.data.store import Store
    from pqbench.measure.files import hashing, runs
    from pqbench.views import files as file_views

    names = [_hash_name(a) for a in algorithm or ["sha256"]]
    store = Store.open(db)
    started = datetime.now(UTC)
    watch = environment.Watch()
    outcomes: list[hashing.FileOutcome] = []
    interrupted: KeyboardInterrupt | None = None
    total = len(paths) * hashing.passes_per_file(names, runs_wanted)
    try:
        with console.progress_bar(total, enabled=not json_output) as advance:
            for outcome in hashing.iter_hashes(paths, names, cache_mode,  # type: ignore[arg-type]
                                               jobs, runs_wanted, warmup, advance):
                outcomes.append(outcome)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: store the files measured so far
        interrupted = exc
    measurements, problems = runs.hash_measurements(outcomes)
    env = environment.collect(extra={"storage": _storage(paths), "run": watch.state()})
    settings = {"algorithm": names[0], "algorithms": names, "jobs": jobs, "cache": cache_mode,
                "label": label, "runs": runs_wanted, "warmup": warmup,
                "aggregate_hash_bytes_per_sec": hashing.aggregate_hash_rate(outcomes)}
    run = runs.files_run(started, settings, env, measurements, problems,
                         status="interrupted" if interrupted else "complete")
    found = ratios.file_ratios(run)
    console.warn_unsteady(file_views.unsteady_lines(run), file_views.what_helps(run))
    if json_output:
        document = {**codec.run_document(run),
                    "files": [row for o in outcomes for row in o.as_rows()],
                    "ratios": [r.as_dict() for r in found]}
        store_or_keep(store, [run], document)
        print_json(document)
    else:
        store_or_keep(store, [run], None)
        console.show_files_run(run, found)
        console.note(f"stored as run {run.run_id} in {store.location}")
    if interrupted is not None:
        console.error(f"interrupted; the {len(outcomes)} file(s) measured were stored as run "
                      f"{run.run_id}")
        raise typer.Exit(interrupts.exit_code(interrupted))
    failures = [o for o in outcomes if isinstance(o, hashing.FileFailure)]
    changed = [o for o in outcomes if isinstance(o, hashing.FileHash) and o.flags]
    if failures or changed:
        console.error(f"{len(failures)} file(s) could not be measured, {len(changed)} changed "
                      "while measured")
        raise typer.Exit(1)


@files_app.command("corpus")
@handles_errors
def corpus_command(
    total: Annotated[str, typer.Option(metavar="SIZE",
        help="Total corpus size: 256M or 1G are decimal (10^6, 10^9 "
                                         "bytes), 1GiB binary (2^30).")] = "256M",
    directory: Annotated[str | None, typer.Option(
        "--dir", metavar="PATH", help="Where to write (default: the temporary directory).")] = None,
    seed: Annotated[int | None, typer.Option(
        min=0, max=2**63 - 1, metavar="N", help="Random seed for sizes and order.")] = None,
    label: LabelOption = None,
    json_output: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Write random files (2 MB..2 GB), read them, encrypt them (XTS, GCM), hash them."""
    from pqbench.data.store import Store
    from pqbench.measure.files import corpus, runs

    size = parse_size(total)  # a typo creates nothing, not even the database
    store = Store.open(db)
    started = datetime.now(UTC)
    watch = environment.Watch()
    where = directory or os.environ.get("TMPDIR") or "/tmp"
    # The first Ctrl-C or SIGTERM stops the corpus; later ones (pressed again while it
    # is removed) cannot cut the removal or the storing of what was measured short.
    with interrupts.first_only():
        result = corpus.run_corpus(size, directory, seed)
        env = environment.collect(extra={"storage": _storage([where]), "run": watch.state()})
        settings = {"total": sum(result.sizes), "files": len(result.sizes), "seed": seed,
                    "label": label, "removed": result.removed,
                    "xts": corpus.xts_implementation()}
        run = runs.files_run(started, settings, env, runs.corpus_measurements(result),
                             status="interrupted" if result.interrupted else "complete")
        summary = result.summary()
        store_or_keep(store, [run], {**codec.run_document(run), "summary": [
            {"operation": op, "algorithm": alg, "bytes": n, "bytes_per_sec": rate}
            for op, alg, n, rate in summary]} if json_output else None)
    if json_output:
        print_json({**codec.run_document(run), "summary": [
            {"operation": op, "algorithm": alg, "bytes": n, "bytes_per_sec": rate}
            for op, alg, n, rate in summary]})
    else:
        console.print_table(Table(
            f"pqbench files corpus: {len(result.sizes)} files, "
            f"{numbers.si(sum(result.sizes), 'B')}",
            (Column("operation"), Column("algorithm"), Column("bytes", "si", "B"),
             Column("throughput", "rate", "bytes/s")), tuple(summary)))
        console.note(f"stored as run {run.run_id} in {store.location}; corpus "
                     + ("removed" if result.removed else f"NOT removed: {result.directory}"))
    if result.interrupted:
        console.error(f"interrupted; the {len(run.measurements)} steps completed were stored "
                      f"as run {run.run_id}")
        raise typer.Exit(interrupts.exit_code())
