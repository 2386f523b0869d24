"""`pqbench files hash` and `pqbench files corpus`: file benchmarks, stored like speed runs."""

from __future__ import annotations

from typing import Annotated

import typer

from pqbench.cli.common import (
    DbOption,
    JsonOption,
    LabelOption,
    end,
    handles_errors,
    print_json,
    store_or_keep,
)
from pqbench.cli.root import app
from pqbench.platform import interrupts
from pqbench.platform.errors import UsageError
from pqbench.platform.untrusted import printable
from pqbench.views import console, numbers

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
    from pqbench.app import files as use_case
    from pqbench.data.store import Store
    from pqbench.views import files as file_views

    names = use_case.hash_names(algorithm)
    store = Store.open(db)
    with console.progress_bar(use_case.hash_steps(paths, names, runs_wanted),
                              enabled=not json_output) as advance:
        hashed = use_case.hash_files(paths, names, cache_mode, jobs, runs_wanted, warmup,
                                     label, advance)
    run = hashed.run
    console.warn_unsteady(file_views.unsteady_lines(run), file_views.what_helps(run))
    store_or_keep(store, [run], hashed.document() if json_output else None)
    if json_output:
        print_json(hashed.document())
    else:
        console.show_files_run(run, hashed.ratios)
        console.note(f"stored as run {run.run_id} in {store.location}")
    end(use_case.hash_ending(hashed))


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
    from pqbench.app import files as use_case
    from pqbench.data.store import Store
    from pqbench.views import files as file_views

    size = parse_size(total)  # a typo creates nothing, not even the database
    store = Store.open(db)
    # The first Ctrl-C or SIGTERM stops the corpus; later ones (pressed again while it
    # is removed) cannot cut the removal or the storing of what was measured short.
    with interrupts.first_only():
        made = use_case.corpus(size, directory, seed, label)
        store_or_keep(store, [made.run], made.document() if json_output else None)
    if json_output:
        print_json(made.document())
    else:
        console.print_table(file_views.corpus_table(made.result.sizes, made.result.summary()))
        console.note(f"stored as run {made.run.run_id} in {store.location}; corpus "
                     + ("removed" if made.result.removed
                        else f"NOT removed: {made.result.directory}"))
    end(use_case.corpus_ending(made))
