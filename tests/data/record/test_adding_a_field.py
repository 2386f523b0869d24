"""Adding a result field touches only its model and the code that measures it.

The promise of docs/run-format.md ("Adding a field"), kept by doing it: a copy of the
package gets a new speed-row field in exactly two places, the model (`record/models.py`)
and the measuring code (`speed/suite.py`), and the copy then carries the field through
everything a user touches: `speed --json`, `--csv`, the store, `export`, `import` (which
checks its type) and the published schema. Nothing else in the copy is edited.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, run_cli

pytestmark = pytest.mark.process

FIELD = "rounds_taken"

#: The two edits, as a contributor would make them: (file, the line it follows, the line).
EDITS = (
    ("data/record/models.py", "    cpu_ns: list[Count] | None = _items()\n",
     f"    {FIELD}: Count | None = None\n"),
    ("measure/speed/suite.py", '                    **(attributes or {}), "time_base": base,\n',
     f'                    "{FIELD}": len(rounds),\n'),
)


def _copy_with_field(root: Path) -> Path:
    """pqbench/ copied under `root` with the field added by EDITS, and nothing else changed."""
    package = root / "pqbench"
    shutil.copytree(REPO / "pqbench", package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name, anchor, line in EDITS:
        path = package / name
        text = path.read_text()
        assert text.count(anchor) == 1, f"{name} no longer has the line the field follows"
        path.write_text(text.replace(anchor, anchor + line))
    return package


@pytest.fixture(scope="module")
def copy_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("with-field")
    _copy_with_field(root)
    return {"PYTHONPATH": str(root), "PQBENCH_DB": str(root / "runs.sqlite")}


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Python in the copy's folder (the current directory comes first on sys.path)."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          env={**os.environ, **env}, cwd=env["PYTHONPATH"], timeout=300,
                          check=False)


def _python(env: dict[str, str], *args: str) -> str:
    done = _run(env, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _cli(env: dict[str, str], *args: str) -> str:
    return _python(env, "-m", "pqbench", *args)


def test_the_copy_is_the_package_that_runs(copy_env: dict[str, str]) -> None:
    """The subprocesses below import the edited copy, not the checkout."""
    found = _python(copy_env, "-c", "import pqbench, sys; sys.stdout.write(pqbench.__file__)")
    assert Path(found).parent.parent == Path(copy_env["PYTHONPATH"])
    assert FIELD not in (REPO / "pqbench" / "data" / "record" / "models.py").read_text()


def test_a_field_declared_and_measured_reaches_every_output(
        copy_env: dict[str, str], tmp_path: Path) -> None:
    args = ("speed", "x25519", "sha256", "--bytes", "64", "--seconds", "0.04",
            "--rounds", "4")
    document = json.loads(_cli(copy_env, *args, "--json"))
    rows = document["results"]
    assert rows and all(row[FIELD] == len(row["samples"]) == 4 for row in rows)

    table = list(csv.DictReader(io.StringIO(_cli(copy_env, *args, "--csv"))))
    assert table and all(row[FIELD] == "4" for row in table)

    # The store keeps it, an export carries it, an import into another store reads it back.
    exported = json.loads(_cli(copy_env, "export", document["run_id"], "--format", "json"))
    stored_rows = exported["runs"][0]["results"]
    assert [row[FIELD] for row in stored_rows] == [4] * len(rows)
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps(exported))
    other = {**copy_env, "PQBENCH_DB": str(tmp_path / "other.sqlite")}
    _cli(other, "import", str(bundle))
    again = json.loads(_cli(other, "export", document["run_id"], "--format", "json"))
    assert again["runs"][0]["results"] == stored_rows

    # The published schema, regenerated as docs/run-format.md says, declares it.
    schema = json.loads(_python(copy_env, "-m", "pqbench.data.record"))
    assert FIELD in json.dumps(schema)


def test_import_checks_the_new_fields_type_and_the_checkout_does_not_know_it(
        copy_env: dict[str, str], tmp_path: Path) -> None:
    document = json.loads(_cli(copy_env, "speed", "x25519", "--seconds", "0.02", "--rounds",
                               "2", "--json"))
    document["results"][0][FIELD] = "four"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    refused = _run({**copy_env, "PQBENCH_DB": str(tmp_path / "a.sqlite")},
                   "-m", "pqbench", "import", str(bad))
    assert refused.returncode != 0
    assert FIELD in refused.stderr and "Traceback" not in refused.stderr
    # Without the model's line the field is free JSON, as any unknown attribute is: the
    # declaration is what types it.
    taken = run_cli("import", str(bad), env={"PQBENCH_DB": str(tmp_path / "b.sqlite")})
    assert taken.returncode == 0, taken.stderr
