"""A JVM's options as pqbench may show and store them: what they change, never what they hold.

A JVM takes options from its command line and from JAVA_TOOL_OPTIONS, _JAVA_OPTIONS and
JDK_JAVA_OPTIONS, and a user's may carry secrets (`-Djavax.net.ssl.keyStorePassword=...`,
`-Dgithub.token=...`, an agent's arguments). The worker reports the options it runs with
(its hello's `jvm options`), and the JVM repeats the variables on stderr ("Picked up
JAVA_TOOL_OPTIONS: ..."), which a build step's or a worker's failure quotes. Both go
through here: the options that change how the JVM runs the timed code are kept as they
are (heap sizes, flags, the collector, the JIT's switches), a system property keeps its
name and loses its value (`-Dname=***`), and anything else keeps at most its option's
name (`-javaagent:***`), so nothing a user typed as a value is stored.
"""

from __future__ import annotations

import re

from pqbench.platform.untrusted import MASK

#: Options shown as they are: what they change is the point, and they hold no free text.
#: Heap and stack sizes; HotSpot's -XX:+Flag / -XX:-Flag; -XX:Name=NUMBER (a size, a
#: count, a percentage) or a boolean; the interpreter and JIT modes; assertions; verbose
#: switches.
_KEPT = re.compile(
    r"-X(?:ms|mx|ss|mn)\d+[kKmMgGtT]?"
    r"|-XX:[+-][A-Za-z][A-Za-z0-9_]*"
    r"|-XX:[A-Za-z][A-Za-z0-9_]*=(?:\d+(?:\.\d+)?[kKmMgGtT%]?|true|false)"
    r"|-X(?:int|comp|mixed|batch|rs|noclassgc|share:(?:auto|on|off))"
    r"|-(?:server|client|ea|da|esa|dsa|enableassertions|disableassertions|enablesystemassertions"
    r"|disablesystemassertions)"
    r"|-verbose(?::(?:gc|class|jni|module))?")
#: A system property: its name is kept, its value never.
_PROPERTY = re.compile(r"-D(?P<name>[A-Za-z0-9_.$-]+)(?P<value>=.*)?", re.DOTALL)
#: An option's name before its value (`-javaagent:`, `--add-opens=`, `-XX:Path=`).
_NAMED = re.compile(r"(?P<name>-XX:[A-Za-z][A-Za-z0-9_]*=|--?[A-Za-z][A-Za-z0-9_.+-]*[:=])")
#: The variables a JVM reads its options from, as it names them on stderr.
VARIABLES = ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS")
_PICKED_UP = re.compile(rf"(?P<head>Picked up (?:{'|'.join(VARIABLES)}): ?)(?P<options>.*)")


def shown_option(word: str) -> str:
    """One JVM option as it may be stored."""
    if _KEPT.fullmatch(word):
        return word
    prop = _PROPERTY.fullmatch(word)
    if prop:
        return f"-D{prop['name']}" + (f"={MASK}" if prop["value"] is not None else "")
    named = _NAMED.match(word)
    if named:
        return named["name"] + MASK
    return MASK


def shown_options(text: str) -> str:
    """JVM options (separated by white space, as the JVM splits its variables) as they may
    be stored."""
    return " ".join(shown_option(word) for word in text.split())


def shown_line(line: str) -> str:
    """A line a JVM or a tool running on one wrote, with the options it says it picked up
    from the environment shown as `shown_options` shows them."""
    found = _PICKED_UP.search(line)
    if found is None:
        return line
    return line[:found.start()] + found["head"] + shown_options(found["options"])


def picked_up(line: str) -> bool:
    """Whether a JVM says in `line` that it picked up options from the environment."""
    return _PICKED_UP.search(line) is not None
