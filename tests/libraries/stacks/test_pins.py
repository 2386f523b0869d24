"""Pinned foreign library versions: their spellings, how a side and a bisect build carry
them, which stacks they apply to, and the edits a pinned build makes to its copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from pqbench.libraries.stacks import compiling, pins, registry
from pqbench.platform.errors import UsageError
from pqbench.sessions import sides
from pqbench.sessions.bisect import series


@pytest.mark.parametrize(("spec", "kind", "name", "version"), [
    ("gomod:github.com/cloudflare/circl@v1.6.1", "gomod", "github.com/cloudflare/circl",
     "v1.6.1"),
    ("crate:aws-lc-rs==1.13.0", "crate", "aws-lc-rs", "1.13.0"),
    ("maven:org.bouncycastle:bcprov-jdk18on==1.80", "maven",
     "org.bouncycastle:bcprov-jdk18on", "1.80"),
    ("MAVEN:org.bouncycastle:bcprov-jdk18on==1.80.2", "maven",
     "org.bouncycastle:bcprov-jdk18on", "1.80.2"),
])
def test_each_spelling_names_one_library_at_one_version(spec: str, kind: str, name: str,
                                                          version: str) -> None:
    pin = pins.parse(spec)
    assert (pin.kind, pin.name, pin.version) == (kind, name, version)
    assert pins.parse(pin.spec) == pin


@pytest.mark.parametrize(("spec", "said"), [
    ("crate:aws-lc-rs", "crate:aws-lc-rs==1.13.0"),
    ("crate:aws-lc-rs>=1.13", "crate:aws-lc-rs==1.13.0"),
    ("gomod:github.com/cloudflare/circl==v1.6.1", "gomod:github.com/cloudflare/circl@v1.6.1"),
    ("maven:bcprov-jdk18on==1.80", "maven:org.bouncycastle:bcprov-jdk18on==1.80"),
    ("npm:left-pad==1.0.0", "gomod:github.com/cloudflare/circl@v1.6.1"),
])
def test_a_wrong_spelling_says_the_right_one(spec: str, said: str) -> None:
    with pytest.raises(UsageError, match=f"spelled like .*{said}"):
        pins.parse(spec)


def test_a_side_carries_its_pins_to_its_worker_and_shows_them() -> None:
    side = sides.parse(["maven:org.bouncycastle:bcprov-jdk18on==1.80",
                        "gomod:github.com/cloudflare/circl@v1.6.1"], "a")
    assert side.env[pins.VARIABLE] == ("gomod:github.com/cloudflare/circl@v1.6.1 "
                                       "maven:org.bouncycastle:bcprov-jdk18on==1.80")
    assert side.shown_env()[pins.VARIABLE] == side.env[pins.VARIABLE]
    assert side.command is None  # this pqbench: only its workers change
    with pytest.raises(UsageError, match="not as env:PQBENCH_STACK_PINS"):
        sides.parse(["crate:aws-lc-rs==1.13.0", "env:PQBENCH_STACK_PINS=x"], "b")


def test_a_bisect_series_of_releases_names_each_build_by_its_version() -> None:
    found = series.parse(["maven:org.bouncycastle:bcprov-jdk18on=={1.79,1.80,1.87}"])
    assert [b.name for b in found.builds] == ["1.79", "1.80", "1.87"]
    found = series.parse(["gomod:github.com/cloudflare/circl@{v1.6.1,v1.6.5}"])
    assert [b.name for b in found.builds] == ["v1.6.1", "v1.6.5"]
    assert "ab_env.PQBENCH_STACK_PINS" in series.NAMING


def test_a_pin_applies_only_to_the_stacks_that_depend_on_it() -> None:
    circl = pins.parse("gomod:github.com/cloudflare/circl@v1.6.1")
    bc = pins.parse("maven:org.bouncycastle:bcprov-jdk18on==1.80")
    crate = pins.parse("crate:aws-lc-rs==1.13.0")
    chosen = {s.name: compiling.applicable(s, (circl, bc, crate)) for s in registry.STACKS}
    assert chosen == {"go": (circl,), "aws-lc-rs": (crate,), "libcrux": (), "java": (),
                      "bouncycastle": (bc,)}


def test_a_pinned_crate_requirement_is_rewritten_in_either_form() -> None:
    pin = pins.parse("crate:aws-lc-rs==1.13.0")
    assert compiling._pin_crate('[dependencies]\naws-lc-rs = "1.19"\n', pin) == \
        '[dependencies]\naws-lc-rs = "=1.13.0"\n'
    assert compiling._pin_crate(
        '[dependencies]\naws-lc-rs = { version = "=1.19.0", default-features = false }\n',
        pin) == ('[dependencies]\naws-lc-rs = { version = "=1.13.0", '
                 'default-features = false }\n')
    with pytest.raises(compiling.BuildFailed, match="no version requirement"):
        compiling._pin_crate('[dependencies]\nlibcrux-ml-kem = "0.0.4"\n', pin)


def test_a_pinned_maven_artifact_moves_its_version_property(tmp_path: Path) -> None:
    pom = registry.SOURCES / "java" / "pom.xml"
    pin = pins.parse("maven:org.bouncycastle:bcprov-jdk18on==1.80")
    assert compiling._maven_property(pom, pin) == "-Dbc.version=1.80"
    other = pins.parse("maven:org.bouncycastle:bcpkix-jdk18on==1.80")
    with pytest.raises(compiling.BuildFailed, match="does not depend on"):
        compiling._maven_property(pom, other)
