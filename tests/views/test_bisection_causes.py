"""bisect names a same-version rebuilt library the way compare does, not as two dicts."""

from __future__ import annotations

from dataclasses import replace

from pqbench.analysis.compare import compare_runs
from pqbench.sessions.bisect.search import ChangePoint
from pqbench.views.bisection import cause_text
from tests.helpers.runs import environment, make_runs

ROWS = (("AES-256-GCM", "libcrypto", "encrypt", 16384, 300_000.0),)


def _env(build_id: str, package_version: str) -> dict[str, object]:
    env = environment(libraries__system_libcrypto="OpenSSL 3.0.19 27 Jan 2026")
    env["binaries"] = {"libcrypto": {
        "path": "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "size": 4734232,
        "build_id": build_id, "package": "libssl3", "package_version": package_version,
        "version": "OpenSSL 3.0.19 27 Jan 2026"}}
    return env


def test_a_change_point_names_the_rebuilt_binary() -> None:
    result = compare_runs(
        make_runs("b", 5, seed=1, rows=ROWS, env=_env("1a" * 20, "3.0.19-1~deb12u1")),
        make_runs("a", 5, seed=2, rows=ROWS, env=_env("3c" * 20, "3.0.19-1~deb12u2"),
                  factor=0.5))
    (row,) = result.rows
    point = ChangePoint(row.key, 0, 1, row, differences=tuple(result.differences))
    said = ("libcrypto: same version string, another binary (build-id 1a1a1a1a1a1a… → "
            "3c3c3c3c3c3c…, libssl3 3.0.19-1~deb12u1 → 3.0.19-1~deb12u2)")
    assert cause_text(point) == f"{said} (likely)"
    # Where the row names no cause, the differences are told the same way.
    assert cause_text(replace(point, row=replace(row, causes=()))) == f"differs: {said}"
