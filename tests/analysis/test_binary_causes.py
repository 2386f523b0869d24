"""A library rebuilt under the same version string is named as the cause of the rows that
run it, as strongly as a new version would be (the macOS 10.14.5 `openssl speed` jump came
with unchanged versions); an OpenSSL that uses other CPU capabilities is a strong cause;
the machine's load and runs recorded before binaries were identified are never causes."""

from __future__ import annotations

import json
from typing import Any

from pqbench.analysis import explain
from pqbench.analysis.compare import compare_runs
from pqbench.views import comparisons
from pqbench.views import news as whatchanged
from tests.helpers.runs import environment, make_runs

VERSION = "OpenSSL 3.0.19 27 Jan 2026"
PATH = "/usr/lib/x86_64-linux-gnu/libcrypto.so.3"
ROWS = (("AES-256-GCM", "libcrypto", "encrypt", 16384, 300_000.0),
        ("SHA-256", "python", "hash", 16384, 100_000.0),
        ("ML-KEM-768", "liboqs", "encaps", None, 60_000.0),
        ("AES-256-XTS", "cryptography", "encrypt", 16384, 550_000.0))
#: Every row slower after: what explains each is the question.
SLOWER = {"AES-256-GCM": 0.1, "SHA-256": 0.5, "ML-KEM-768": 0.6, "AES-256-XTS": 0.5}


def _libcrypto(build_id: str, package_version: str, **more: Any) -> dict[str, Any]:
    return {"path": PATH, "size": 4734232, "build_id": build_id, "package": "libssl3",
            "package_version": package_version, "version": VERSION, **more}


LIBC = {"path": "/usr/lib/x86_64-linux-gnu/libc.so.6", "size": 1926232,
        "build_id": "93ac61ec5a8eb1396f9fbd350e3169a558528a40", "package": "libc6",
        "package_version": "2.36-9+deb12u14", "version": "glibc 2.36"}
BEFORE_ID = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
AFTER_ID = "3c4d5e6f7a8b9c0d1e2f30415263748596a7b8c9"


def _env(binaries: dict[str, Any] | None = None, **parts: Any) -> dict[str, Any]:
    env = environment(libraries__system_libcrypto=VERSION)
    if binaries is not None:
        env["binaries"] = binaries
    env.update(parts)
    return env


def _compare(before: dict[str, Any], after: dict[str, Any]) -> Any:
    return compare_runs(make_runs("b", 5, seed=1, env=before, rows=ROWS),
                        make_runs("a", 5, seed=2, env=after, rows=ROWS, factors=SLOWER),
                        before_name="deb12u1", after_name="deb12u2")


def _causes(result: Any) -> dict[str, tuple[tuple[str, str], ...]]:
    from pqbench.analysis.news import cause_topics

    return {row.algorithm: cause_topics(row) for row in result.rows}


def test_a_security_update_under_the_same_version_string_is_named_as_the_cause() -> None:
    """Debian's deb12u1 -> deb12u2: same path, same "OpenSSL 3.0.19 27 Jan 2026", another
    build-id and package version."""
    result = _compare(_env({"libcrypto": _libcrypto(BEFORE_ID, "3.0.19-1~deb12u1"),
                            "libc": LIBC}),
                      _env({"libcrypto": _libcrypto(AFTER_ID, "3.0.19-1~deb12u2"),
                            "libc": LIBC}))
    found = result.news
    assert [d.field for d in result.differences] == ["binaries.libcrypto"]
    said = ("same version string, another binary (build-id 1a2b3c4d5e6f… → 3c4d5e6f7a8b…, "
            "libssl3 3.0.19-1~deb12u1 → 3.0.19-1~deb12u2)")
    builds = whatchanged.items(found)[0].lines
    assert builds[0] == f"system libcrypto: {said}"
    # Not "the same on both: system libcrypto", the answer that misled the 10.14.5 user.
    assert "system libcrypto" not in found.unchanged
    assert not any("system libcrypto" in line for line in builds[1:])
    causes = _causes(result)
    assert causes["AES-256-GCM"] == (("system libcrypto", "likely"),)
    assert causes["SHA-256"] == (("system libcrypto", "likely"),)       # hashlib
    assert causes["ML-KEM-768"] == (("system libcrypto", "likely"),)    # OQS_USE_OPENSSL
    assert causes["AES-256-XTS"] == ()  # cryptography bundles its own OpenSSL
    group = next(g for g in found.causes if g.topic == "system libcrypto")
    told = {r.why: set(r.rows) for r in group.reasons}
    assert told[f"libcrypto: {said}; the rows run its code"] == {
        ("AES-256-GCM", "libcrypto", "encrypt", 16384), ("SHA-256", "python", "hash", 16384)}
    lines = whatchanged.items(found)[-1].lines
    assert any(f"libcrypto: {said}" in line and "AES-256-GCM" in line for line in lines)
    assert json.loads(json.dumps(result.as_dict()))["differences"][0]["field"] == \
        "binaries.libcrypto"


def test_a_same_version_rebuild_ranks_as_a_version_change_does() -> None:
    rebuilt = _compare(_env({"libcrypto": _libcrypto(BEFORE_ID, "3.0.19-1~deb12u1")}),
                       _env({"libcrypto": _libcrypto(AFTER_ID, "3.0.19-1~deb12u2")}))
    upgraded = _compare(_env(), _env(libraries={**environment()["libraries"],
                                                "system_libcrypto": "OpenSSL 3.0.20"}))
    assert _causes(rebuilt) == _causes(upgraded)


def test_the_differences_table_shows_each_binary_whole() -> None:
    result = _compare(_env({"libcrypto": _libcrypto(BEFORE_ID, "3.0.19-1~deb12u1")}),
                      _env({"libcrypto": _libcrypto(AFTER_ID, "3.0.19-1~deb12u2")}))
    table, _ = comparisons.differences_table(result)
    (row,) = table.rows
    assert row[1] == (f"build-id {BEFORE_ID}; libssl3 3.0.19-1~deb12u1; {VERSION}; "
                      f"4734232 bytes; {PATH}")


def test_runs_recorded_before_binaries_were_identified_show_no_binary_change() -> None:
    result = _compare(_env(), _env({"libcrypto": _libcrypto(AFTER_ID, "3.0.19-1~deb12u2")}))
    assert not result.differences
    assert "system libcrypto" in result.news.unchanged


def test_another_c_library_binary_is_a_weak_cause_of_every_row() -> None:
    other = {**LIBC, "build_id": "ffffffffffffffffffffffffffffffffffffffff"}
    found = explain.differences([_env({"libc": LIBC})], [_env({"libc": other})])
    (cause,) = explain.causes_for("AES-256-XTS", "cryptography", found)
    assert (cause.field, cause.strength) == ("binaries.libc", "weak")
    assert cause.why.startswith("libc: same version string, another binary (build-id "
                                "93ac61ec5a8e… → ffffffffffff…)")


def test_an_openssl_using_other_capabilities_is_a_strong_cause_where_rows_use_them() -> None:
    def capabilities(enabled: list[str] | None) -> dict[str, Any]:
        return {"libcrypto": {"vector": None, "enabled": enabled, "source": "OPENSSL_info"}}

    everything = ["adx", "aesni", "pclmulqdq", "shani"]
    found = explain.differences([_env(openssl_capabilities=capabilities(everything))],
                                [_env(openssl_capabilities=capabilities([]))])
    assert [d.field for d in found] == ["openssl_capabilities.libcrypto.enabled"]
    context = explain.Context(frozenset({"aes", "adx", "sha_ni", "pclmulqdq"}))
    (aes,) = explain.causes_for("AES-256-GCM", "libcrypto", found, context=context)
    assert aes.strength == "strong"
    # AES-GCM dispatches on AES-NI and PCLMULQDQ (GHASH), not on ADX.
    assert "(aesni, pclmulqdq no longer used)" in aes.why
    # X25519 dispatches on ADX; SHA-512 on none of these; cryptography's own
    # OpenSSL did not change.
    assert [c.strength for c in explain.causes_for("X25519", "libcrypto", found,
                                                   context=context)] == ["strong"]
    assert explain.causes_for("SHA-512", "libcrypto", found, context=context) == []
    assert explain.causes_for("AES-256-XTS", "cryptography", found, context=context) == []
    # Unknown on one side (an older run) is no cause.
    unknown = explain.differences([_env()], [_env(openssl_capabilities=capabilities([]))])
    assert explain.causes_for("AES-256-GCM", "libcrypto", unknown, context=context) == []


def test_the_machines_load_is_never_a_difference() -> None:
    quiet = {"seconds": 3.0, "cpus": 2, "loadavg_start": [0.1, 0.1, 0.1],
             "loadavg_end": [0.2, 0.1, 0.1], "others_cpu": 0.01, "steal": 0.0}
    busy = {**quiet, "others_cpu": 0.8, "loadavg_end": [7.8, 5.0, 3.0]}
    assert explain.differences([_env(run=quiet)], [_env(run=busy)]) == []


def test_a_binary_in_another_folder_shows_the_folders_that_differ() -> None:
    """Two pip builds' bindings differ in one folder of a 110-character path: the long runs
    both share are elided, the differing folder and the file name stay; short shared runs
    and paths with nothing long in common are told whole."""
    site = "lib/python3.11/site-packages/cryptography/hazmat/bindings/_rust.abi3.so"
    old = f"/root/.cache/pqbench/pip/py3.11/cryptography-39.0.2/{site}"
    new = f"/root/.cache/pqbench/pip/py3.11/cryptography-40.0.0/{site}"
    assert explain.path_change(old, new) == ("…/cryptography-39.0.2/…/_rust.abi3.so → "
                                     "…/cryptography-40.0.0/…/_rust.abi3.so")
    assert explain.path_change("/usr/lib/libcrypto.so.3", "/opt/lib/libcrypto.so.3") == \
        "/usr/lib/libcrypto.so.3 → /opt/lib/libcrypto.so.3"
    system = "/usr/lib/x86_64-linux-gnu/libcrypto.so.3"
    assert explain.path_change(system, "/opt/ssl/libcrypto.so.3") == \
        f"{system} → /opt/ssl/libcrypto.so.3"
    assert explain.path_change("libcrypto.so.3", "libcrypto.so.1.1") == \
        "libcrypto.so.3 → libcrypto.so.1.1"
    said = explain.binary_change(
        {"build_id": "1a" * 20, "path": old, "version": "OpenSSL 3.0.8"},
        {"build_id": "3c" * 20, "path": new, "version": "OpenSSL 3.1.0"})
    assert said == ("OpenSSL 3.0.8 → OpenSSL 3.1.0, another binary (build-id 1a1a1a1a1a1a… → "
                    "3c3c3c3c3c3c…, …/cryptography-39.0.2/…/_rust.abi3.so → "
                    "…/cryptography-40.0.0/…/_rust.abi3.so)")


def test_a_binary_whose_identity_is_unknown_on_one_side_is_named_as_no_cause() -> None:
    """Before: a libcrypto known by its path and size only (no build-id, no hash); after:
    one known by its build-id. Nothing tells whether they differ: no difference is named."""
    before = [{"binaries": {"libcrypto": {"path": PATH, "size": 4734232}}}]
    after = [{"binaries": {"libcrypto": {"build_id": "ab"}}}]
    assert explain.binary_differences(before, after) == []
    known = [{"binaries": {"libcrypto": {"build_id": "cd"}}}]
    (found,) = explain.binary_differences(known, after)
    assert found.field == "binaries.libcrypto"
