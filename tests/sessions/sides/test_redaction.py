"""What a side shows of the values it hands its worker: one reading of an item's kind for
`parse` and `shown`, NAME=VALUE wherever a command line can carry it (a word of its own,
glued to an option, inside a `sh -c` script), and refusals that echo no value. Each case
is a form a hostile round found leaking; the worker still gets the value as typed."""

from __future__ import annotations

import shlex

import pytest

from pqbench.platform.errors import UsageError
from pqbench.sessions import sides

SECRET = "Sek7ret"


@pytest.mark.parametrize("item, shown", [
    (f"ENV :GH_PAT={SECRET}", "env:GH_PAT=***"),
    (f" Env:GH_PAT={SECRET}", "env:GH_PAT=***"),
    (f"env :OQS_INSTALL_PATH=/opt/{SECRET}", f"env:OQS_INSTALL_PATH=/opt/{SECRET}"),
    (f"CMD :env GH_PAT={SECRET} pqbench", "cmd:env 'GH_PAT=***' pqbench"),
    (f"cmd:sh -c 'export TOKEN={SECRET}; exec pqbench'",
     "cmd:sh -c 'export TOKEN=*** ; exec pqbench'"),
    (f"cmd:sh -c 'TOKEN={SECRET} exec pqbench'", "cmd:sh -c 'TOKEN=***'"),
    (f"cmd:su -c \"env A='x {SECRET}' pqbench\" me", "cmd:su -c 'env A=*** pqbench' me"),
    (f"cmd:sh -c \"echo it's TOKEN={SECRET}\"", "cmd:sh -c '***'"),
    (f"cmd:docker run -eTOKEN={SECRET} img", "cmd:docker run '-eTOKEN=***' img"),
    (f"cmd:docker run --env=TOKEN={SECRET} img", "cmd:docker run '--env=TOKEN=***' img"),
    (f"cmd:java -Dgithub.token={SECRET} -jar w.jar", "cmd:java '-Dgithub.token=***' -jar w.jar"),
    (f"cmd:tool --token={SECRET} pqbench", "cmd:tool '--token=***' pqbench"),
    ("cmd:docker run -ePATH=/usr/bin img", "cmd:docker run -ePATH=/usr/bin img"),
    (f"evn:GH_PAT={SECRET}", "evn:GH_PAT=***"),
    (f"GH_PAT={SECRET}", "GH_PAT=***"),
    (f"GH_PAT={SECRET}:x", "GH_PAT=***"),
    ("PIP :cryptography==42.0.8", "pip:cryptography==42.0.8"),
    (" HERE ", "here"),
], ids=["space before the colon", "capitals", "harmless", "cmd space before the colon",
        "sh -c script", "script one assignment", "nested quotes", "script that does not split",
        "glued -e", "--env=", "-D", "--option=", "harmless glued", "typo'd kind", "no kind",
        "secret in the kind", "pip", "here"])
def test_an_item_is_shown_with_every_value_hidden(item: str, shown: str) -> None:
    assert sides.shown(item) == shown
    assert sides.shown_spec(item) == shown
    assert sides.command_line(["ab", "--b", item]) == shlex.join(["pqbench", "ab", "--b", shown])


def test_parse_and_shown_read_a_kind_alike_and_the_worker_gets_the_value() -> None:
    side = sides.parse(["here", f"ENV :GH_PAT={SECRET}"], "b")
    assert side.env == {"GH_PAT": SECRET}
    assert side.spec == "here env:GH_PAT=***"
    assert side.shown_env() == {"GH_PAT": "***"}


def test_items_joined_by_plus_split_with_a_space_before_the_colon() -> None:
    assert sides.shown_spec(f"here + ENV :T={SECRET} + Cmd :env A={SECRET} x") == \
        "here + env:T=*** + cmd:env 'A=***' x"
    assert sides.redact_argument(f"--series=here + ENV :T={SECRET}") == \
        "--series=here + env:T=***"


@pytest.mark.parametrize("item, said", [
    (f"evn:GH_PAT={SECRET}", "'evn:GH_PAT=***': a side is here"),
    (f"here + env:T={SECRET}", "'here + env:T=***': give each item of a side as its own --b"),
    (f"GH_PAT={SECRET}", "'GH_PAT=***': a side is here"),
    (f"env: X={SECRET}", "env: X=***: expected env:NAME=VALUE"),
])
def test_a_refused_item_echoes_no_value(item: str, said: str) -> None:
    with pytest.raises(UsageError) as refused:
        sides.parse([item], "b")
    assert said in str(refused.value) and SECRET not in str(refused.value)


def test_a_stored_command_shows_every_side_as_a_side() -> None:
    stored = sides.command_line(["ab", "--b", f"evn:GH_PAT={SECRET}", "--a", "here",
                                 f"--b=GH_PAT={SECRET}", "--label", "x"])
    assert stored == "pqbench ab --b 'evn:GH_PAT=***' --a here '--b=GH_PAT=***' --label x"


@pytest.mark.parametrize("item", [f"pip:GH_PAT={SECRET}", f"crate:GH_PAT={SECRET}",
                                  f"maven:g:a==1 X={SECRET}", f"gomod:GH_PAT={SECRET}",
                                  f"mask:aesni,GH_PAT={SECRET}", f"userland:GH_PAT={SECRET}"])
def test_an_assignment_in_any_other_kind_is_refused_before_its_parser_echoes_it(
        item: str) -> None:
    """`pip:`, `crate:`, `maven:`, `gomod:`, `mask:` and `userland:` take no NAME=VALUE,
    and each one's own refusal quoted the value as typed."""
    shown = sides.shown(item)
    assert shown.endswith("=***") and SECRET not in shown
    with pytest.raises(UsageError) as refused:
        sides.parse(["here", item], "b")
    assert f"--b {shown!r}: a {sides.kind_of(item)}: item holds no NAME=VALUE" in \
        str(refused.value)
    assert SECRET not in str(refused.value)


def test_a_version_specifier_is_no_assignment() -> None:
    assert sides.shown("pip:cryptography==42.0.8") == "pip:cryptography==42.0.8"
    assert sides.shown("PIP:pkg>=1") == "pip:pkg>=1"
