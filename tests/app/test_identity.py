"""One build: which runs measured the same software, set up the same way."""

from __future__ import annotations

from dataclasses import replace

from pqbench.app.identity import build_of, one_build, principal, split_by_build
from pqbench.data.record.results import Run
from tests.helpers.runs import environment, make_ab_session, make_run


def _run(run_id: str, **env_changes: object) -> Run:
    return make_run(run_id, seed=1, env=environment(**env_changes))


def test_runs_of_one_build_whatever_their_label_time_or_tool_versions() -> None:
    a = make_run("a", seed=1, label="before", env=environment(label="before"))
    b = make_run("b", seed=2, label="after", started_at="2026-03-01T00:00:00+00:00",
                 env=environment(libraries__numpy="2.0", hostname="other"))
    assert one_build(a, b)
    assert build_of(a).get("libraries.cryptography") == "50.0.2"
    assert build_of(a).get("os_build") == "18E226"
    assert build_of(a).get("libraries.numpy") is None


def test_a_library_version_a_knob_a_mask_an_os_build_or_a_time_base_is_another_build() -> None:
    base = _run("base")
    others = {
        "libraries.cryptography": _run("pip", libraries__cryptography="42.0.8"),
        "knobs.OPENSSL_ia32cap": _run("knob", knobs__OPENSSL_ia32cap="0x0:0x0"),
        "mask": _run("mask", mask={"names": ["aesni"], "variable": "OPENSSL_ia32cap"}),
        "os_build": _run("os", os_build="18F132"),
    }
    for field, other in others.items():
        assert not one_build(base, other), field
        assert [d[0] for d in build_of(other).differences(build_of(base))] == [field]
    wall = replace(base, settings={"time_base": "wall"})
    cpu = replace(base, settings={"time_base": "cpu"})
    assert one_build(base, wall)  # stored before the choice: wall
    assert not one_build(wall, cpu)
    # `--multi`: rates of several processes at once are another way of timing, one is not.
    multi = replace(base, settings={"time_base": "cpu", "processes": 2})
    assert not one_build(cpu, multi)
    assert one_build(cpu, replace(base, settings={"time_base": "cpu", "processes": 1}))
    assert build_of(multi).timing == (("processes", "2"), ("time_base", "cpu"))
    assert build_of(multi).differences(build_of(cpu)) == [("processes", "2", None)]
    assert build_of(others["libraries.cryptography"]).against(build_of(base)) == \
        "cryptography 42.0.8"


def test_an_ab_side_is_the_build_it_ran_and_an_env_side_is_another() -> None:
    side_a, side_b = make_ab_session("s", seed=3)
    assert one_build(side_a, side_b)
    speed = make_run("speed", seed=1)
    assert not one_build(side_a, speed)  # timed otherwise: pairs of one pinned CPU
    assert build_of(side_a).same_software(build_of(speed))
    with_env = replace(side_b, environment=type(side_b.environment)(
        {**side_b.environment.to_dict(), "ab_env": {"MALLOC_ARENA_MAX": "1"}}))
    assert not one_build(side_a, with_env)


def test_principal_is_the_build_most_runs_measured_the_newest_among_equals() -> None:
    host = [_run(f"h{i}") for i in range(3)]
    pip = [_run(f"p{i}", libraries__cryptography="42.0.8") for i in range(2)]
    assert principal([pip[0], *host, pip[1]]) == build_of(host[0])
    assert principal([host[0], pip[0]]) == build_of(pip[0])
    assert principal([pip[0], host[0]]) == build_of(host[0])
    masked = _run("m", knobs__OPENSSL_ia32cap="0x0:0x0")
    assert principal([host[0], masked]) == build_of(host[0])  # the mask is the variant
    split = split_by_build([pip[0], host[0], pip[1]])
    assert [[r.run_id for r in runs] for runs in split.values()] == [["p0", "p1"], ["h0"]]


def test_facts_older_runs_lack_do_not_split_a_build() -> None:
    old = _run("old")
    new = replace(old, run_id="new", environment=type(old.environment)(
        {**old.environment.to_dict(),
         "libraries": {**old.environment.to_dict()["libraries"]}}))
    new_facts = build_of(new)
    with_binary = type(new_facts)((*new_facts.software, ("binaries.libcrypto.identity", "ab12")),
                                  new_facts.timing)
    other_binary = type(new_facts)((*new_facts.software, ("binaries.libcrypto.identity", "cd34")),
                                   new_facts.timing)
    assert with_binary.matches(build_of(old)) and build_of(old).matches(with_binary)
    assert not with_binary.matches(other_binary)
    assert [d[0] for d in with_binary.differences(other_binary)] == \
        ["binaries.libcrypto.identity"]
    assert with_binary.differences(build_of(old)) == []


def test_a_binary_is_known_by_its_build_id_before_its_file_hash() -> None:
    """An imported run may carry both: the build-id names the build, whatever the file's
    bytes (a stripped copy of one build has another hash)."""
    from pqbench.data.record.fingerprint import binary_identity

    assert binary_identity({"build_id": "ab", "sha256": "cd"}) == "build-id ab"
    assert binary_identity({"sha256": "cd"}) == "sha256 cd"
    assert binary_identity({"path": "/lib/libc.so.6", "size": 1}) is None


def test_another_c_library_is_another_build_and_named() -> None:
    """Two runs that differ only in the C library they loaded measured two builds."""
    def with_libc(run_id: str, build_id: str) -> Run:
        return _run(run_id, binaries={"libc": {"path": "/lib/x86_64-linux-gnu/libc.so.6",
                                               "build_id": build_id}})

    a, b = with_libc("a", "aa11"), with_libc("b", "bb22")
    assert not one_build(a, b)
    assert build_of(b).differences(build_of(a)) == [
        ("binaries.libc", "build-id bb22", "build-id aa11")]


def test_a_foreign_stacks_libraries_are_its_own_rows_build_only() -> None:
    """`-i go` added to a run: every other row's build is the run's without Go's versions;
    Go's rows' build has them, and another Go version is another build of Go's rows."""
    plain = _run("plain")
    go = _run("go", libraries__cryptography="50.0.2", **{"libraries__go:crypto/mlkem": "go1.26.8"})
    newer = _run("newer", **{"libraries__go:crypto/mlkem": "go1.27.0"})
    assert one_build(plain, go) and build_of(plain) == build_of(go)
    assert build_of(go, "go").get("libraries.go:crypto/mlkem") == "go1.26.8"
    assert not build_of(go, "go").matches(build_of(newer, "go"))
    assert build_of(go, "libcrypto") == build_of(plain, "libcrypto")
    assert [r.run_id for r in split_by_build([plain, go, newer])[build_of(plain)]] == [
        "plain", "go", "newer"]


def test_one_machine_is_its_host_cpu_model_cores_and_hypervisor_not_its_flags() -> None:
    from pqbench.app.identity import machine_of, split_by_machine

    base = machine_of(_run("a"))
    assert base.host == "mac" and base.cores == 8 and base.hypervisor is None
    assert machine_of(_run("f", cpu_flags=["aes"], testbed="tb-2")) == base
    others = [_run("h", hostname="other"), _run("m", cpu__model="AMD EPYC 9B14"),
              _run("c", cpu__count=2),
              _run("v", platform={"virtualization": {"hypervisor": True,
                                                     "dmi": "Google Compute Engine"}})]
    assert len({machine_of(r) for r in others} | {base}) == 5
    assert machine_of(others[3]).hypervisor == "Google Compute Engine"
    assert "Google Compute Engine" in machine_of(others[3]).name
    assert machine_of(_run("x", platform={"virtualization": {"hypervisor": True}})
                      ).hypervisor == "a hypervisor"
    split = split_by_machine([_run("a"), others[0], _run("b")])
    assert [[r.run_id for r in runs] for runs in split.values()] == [["a", "b"], ["h"]]
    assert base.matches("mac") and base.matches(base.key[:6]) and not base.matches("ma")
    assert len(base.key) == 12 and base.key != machine_of(others[0]).key
