"""pqbench's memory figures against valgrind's, operation by operation.

pqbench (`pqbench memory`) measures a call's stack on a painted stack and its heap with an
LD_PRELOAD allocator interposer. Here the same operations, prepared and checked by the same
C code (pqbench/timing/csrc), run under valgrind 3.x from the distribution:

* stack: massif --stacks=yes --heap=no --peak-inaccuracy=0.0, on a harness
  (benchmarks/memory_harness.c) that prepares the operation and makes ONE call from a frame
  1 MiB deep, so that the run's peak is the call's; the same run with an empty function in
  place of the call is subtracted. Massif counts the stack by the stack pointer.
* heap: DHAT (--num-callers=200), counting only the allocation points whose stack passes
  through the harness's measured_call (the preparation's own counts vary from run to
  run: RSA key generation, ML-DSA's signing check); a 256 MiB block (never touched) held
  across the call puts the global peak (t-gmax) inside it, and the bytes those points
  hold then are the call's peak. DHAT counts requested bytes and a realloc as a block, as
  pqbench does.

Each figure has three columns: pqbench's stored figure (native CPU, largest of --calls
calls), pqbench's own measurement of one call run under valgrind (`--tool=none`, with the
interposer preloaded, which that tool allows: it sees the CPU valgrind emulates, without
AVX-512, ADX or SHA-NI, and OpenSSL and liboqs choose their code by the CPU), and the
tool's. Targets: pqbench's stack on valgrind's CPU within 10 % of massif's; its heap peak
and allocation count equal to DHAT's. A benchmark script, not a test:

    python benchmarks/memory_vs_valgrind.py                 # the default memory suite
    python benchmarks/memory_vs_valgrind.py ml-kem-768 rsa2048 --calls 5
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CSRC = REPO / "pqbench" / "timing" / "csrc"
HARNESS_SOURCE = Path(__file__).resolve().parent / "memory_harness.c"
WORK_DIR = Path(__file__).resolve().parent / ".work"  # gitignored
TARGET = 0.10
#: pqbench's canonical names -> the C table's (as pqbench/libraries/implementations/native.py maps).
C_NAMES = {"ECDH-P-256": "P-256", "ECDH-P-384": "P-384", "ECDH-P-521": "P-521"}
#: x86-64 System V: leaf functions may use 128 bytes below the stack pointer unannounced.
RED_ZONE = 128


def build_harness() -> Path:
    """Compile the harness with the flags the extension is built with."""
    WORK_DIR.mkdir(exist_ok=True)
    out = WORK_DIR / "memory_harness"
    sources = [HARNESS_SOURCE, *sorted(p for p in CSRC.glob("*.c") if p.name != "module.c")]
    flags = (sysconfig.get_config_var("CFLAGS") or "").split()
    command = [os.environ.get("CC", "cc"), *flags, "-O2", "-std=c11", "-Wall", f"-I{CSRC}",
               "-o", str(out), *map(str, sources), "-lcrypto", "-ldl", "-lpthread", "-lm"]
    print("building the harness: " + " ".join(command), file=sys.stderr)
    subprocess.run(command, check=True)
    return out


def pqbench_figures(names: list[str], calls: int) -> dict[str, Any]:
    """A real `pqbench memory --json` run (in a throw-away database)."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-m", "pqbench", "memory", *names, "--json",
                               "--calls", str(calls), "--db", str(Path(tmp) / "m.db")],
                              capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1) or not done.stdout:
        sys.exit(f"pqbench memory failed: {done.stderr}")
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def harness_args(row: dict[str, Any], liboqs: str) -> tuple[list[str], list[str]]:
    """KIND ALG OP ... LIBOQS [LENS] for one result row."""
    sizes = row["sizes"]
    if row["implementation"] == "libcrypto":
        return ["ssl", C_NAMES.get(row["algorithm"], row["algorithm"]), row["operation"]], []
    if "ciphertext" in sizes:
        lens = [sizes["public_key"], sizes["secret_key"], sizes["ciphertext"],
                sizes["shared_secret"]]
        return ["kem", row["algorithm"], row["operation"]], [liboqs, *map(str, lens)]
    lens = [sizes["public_key"], sizes["secret_key"], sizes["signature"],
            sizes.get("message", 32)]
    return ["sig", row["algorithm"], row["operation"]], [liboqs, *map(str, lens)]


def valgrind(tool_args: list[str], harness: Path, mode: str, what: list[str], empty: bool,
             tail: list[str], preload: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LD_BIND_NOW": "1"}  # as pqbench's worker runs
    if preload is not None:  # only with --tool=none, which leaves malloc alone
        env["LD_PRELOAD"] = str(preload)
    command = ["valgrind", *tool_args, str(harness), mode, *what, "1" if empty else "0",
               *(tail or ["-"])]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr[-500:]}")
    return done


def massif_peak(harness: Path, what: list[str], empty: bool, tail: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "massif.out"
        valgrind(["--tool=massif", "--stacks=yes", "--heap=no", "--peak-inaccuracy=0.0",
                  f"--massif-out-file={out}", "-q"], harness, "deep", what, empty, tail)
        stacks = [int(v) for v in re.findall(r"^mem_stacks_B=(\d+)$", out.read_text(), re.M)]
    return max(stacks)


def dhat_counts(harness: Path, what: list[str], tail: list[str]) -> tuple[int, int]:
    """(bytes the call held at t-gmax, blocks it allocated), from DHAT's allocation points
    whose stack passes through the harness's measured_call."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "dhat.out"
        valgrind(["--tool=dhat", "--num-callers=200", f"--dhat-out-file={out}"], harness,
                 "marker", what, False, tail)
        profile = json.loads(out.read_text())
    frames = profile["ftbl"]
    inside = [pp for pp in profile["pps"]
              if any("measured_call" in frames[f] for f in pp["fs"])]
    return sum(pp["gb"] for pp in inside), sum(pp["tbk"] for pp in inside)


@dataclass(frozen=True)
class Compared:
    """One operation: pqbench natively (the stored row), pqbench on valgrind's CPU, the tools."""

    row: dict[str, Any]
    painted: dict[str, int]  # pqbench's measurement of one call under valgrind --tool=none
    massif: int
    dhat_heap: int
    dhat_allocations: int
    gdb: str = ""  # where gdb saw the deepest word written, when massif's figure is short

    @property
    def stack_gap(self) -> float:
        gap = self.painted["stack_bytes"] - self.massif
        return gap / self.massif if self.massif else 0.0

    @property
    def random_allocations(self) -> bool:
        """pqbench saw the count change between calls: each run draws its own loop count."""
        low, high = self.row["memory_range"].get("allocations") or (0, 0)
        return low != high

    @property
    def heap_agrees(self) -> bool:
        return self.painted["heap_bytes"] == self.dhat_heap and (
            self.painted["allocations"] == self.dhat_allocations or self.random_allocations)

    def explanation(self) -> str:
        gap = self.painted["stack_bytes"] - self.massif
        notes = []
        if abs(self.stack_gap) > TARGET:
            notes.append(f"stack off by {self.stack_gap:+.1%}")
        if 0 < gap <= RED_ZONE + 16:
            notes.append("painted counts the red zone below the stack pointer")
        if gap < 0:
            notes.append("frames reserve stack they never write; massif counts the pointer")
        if not self.heap_agrees:
            notes.append("heap differs from DHAT's")
        if self.random_allocations and self.painted["allocations"] != self.dhat_allocations:
            notes.append("allocations vary from call to call (a random loop): each run "
                         "draws its own")
        if self.gdb:
            notes.append(self.gdb)
        native = (self.row["stack_bytes"], self.row["heap_bytes"], self.row["allocations"])
        on_valgrind = (self.painted["stack_bytes"], self.painted["heap_bytes"],
                       self.painted["allocations"])
        if native != on_valgrind:
            notes.append("natively OpenSSL/liboqs take other code paths (valgrind has no "
                         "AVX-512, ADX or SHA-NI), or the native figure is the largest of "
                         "several calls")
        return "; ".join(notes)


def valgrind_ia32cap() -> str | None:
    """The capability vector OpenSSL detects under valgrind (`openssl version -c`)."""
    done = subprocess.run(["valgrind", "-q", "openssl", "version", "-c"], capture_output=True,
                          text=True, check=False)
    match = re.search(r"OPENSSL_ia32cap=(\S+)", done.stdout)
    return match.group(1) if match else None


_GDB_SCRIPT = """set pagination off
break mem_entry
run
continue
set $addr = (long)g_region + {guard} + {region} - {depth}
watch -l *(long*)$addr
continue
printf "PQBENCH-GDB pc=%lx rsp=%lx addr=%lx\\n", $pc, $rsp, $addr
python print(gdb.solib_name(int(gdb.parse_and_eval("$pc"))) or "the harness")
kill
"""


def deepest_write(harness: Path, what: list[str], tail: list[str], depth: int,
                  ia32cap: str | None) -> str:
    """Natively, on valgrind's OpenSSL code path: who writes the deepest painted word?"""
    if shutil.which("gdb") is None:
        return ""
    script = _GDB_SCRIPT.format(guard=1 << 20, region=8 << 20, depth=depth)
    env = {**os.environ, "LD_BIND_NOW": "1", **({"OPENSSL_ia32cap": ia32cap} if ia32cap
                                                   else {})}
    with tempfile.NamedTemporaryFile("w", suffix=".gdb") as commands:
        commands.write(script)
        commands.flush()
        done = subprocess.run(["gdb", "-batch", "-x", commands.name, "--args", str(harness),
                               "painted", *what, "0", *(tail or ["-"])], capture_output=True,
                              text=True, env=env, check=False, timeout=600)
    match = re.search(r"PQBENCH-GDB pc=(\w+) rsp=(\w+) addr=(\w+)\n(.*)", done.stdout)
    if match is None:
        return "gdb could not watch the deepest word"
    pc, rsp, addr = (int(match.group(i), 16) for i in (1, 2, 3))
    where = Path(match.group(4).strip()).name
    verdict = ("the stack pointer did go that deep, massif's samples missed it"
               if addr - rsp >= -RED_ZONE else "below the stack pointer and its red zone")
    return (f"gdb: the deepest word is written at stack pointer {addr - rsp:+d} by code in "
            f"{where} (pc {pc:#x}): {verdict}")


def compare_row(harness: Path, row: dict[str, Any], liboqs: str, hook: Path,
                ia32cap: str | None) -> Compared:
    what, tail = harness_args(row, liboqs)
    painted = json.loads(valgrind(["--tool=none", "-q"], harness, "painted", what, False,
                                  tail, preload=hook).stdout)
    massif = massif_peak(harness, what, False, tail) - massif_peak(harness, what, True, tail)
    heap, blocks = dhat_counts(harness, what, tail)
    found = Compared(row, painted, massif, heap, blocks)
    if abs(found.stack_gap) > TARGET and row["implementation"] == "libcrypto":
        depth = painted["stack_bytes"] + painted["harness_stack_bytes"]
        found = Compared(row, painted, massif, heap, blocks,
                         deepest_write(harness, what, tail, depth, ia32cap))
    return found


_EXCURSION = r"""
/* The stack pointer dips 8 KiB for two instructions, 1000 times. */
__attribute__((noinline)) static void dip(void)
{
    __asm__ volatile("mov %%rsp,%%rbx\n\tsub $8192,%%rsp\n\tmovq $1,(%%rsp)\n\t"
                     "mov %%rbx,%%rsp" ::: "rbx", "memory");
}
int main(int argc, char **argv)
{
    for (int i = 0; i < 1000; i++)
        if (argc > 1)
            dip();
    return 0;
}
"""


def massif_sampling_check() -> int | None:
    """How much of a brief 8 KiB stack excursion massif reports (x86-64 only)."""
    if not sys.platform.startswith("linux") or os.uname().machine != "x86_64":
        return None
    WORK_DIR.mkdir(exist_ok=True)
    source, binary = WORK_DIR / "excursion.c", WORK_DIR / "excursion"
    source.write_text(_EXCURSION)
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-o", str(binary), str(source)],
                   check=True)
    peaks = []
    for args in ([], ["dip"]):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "massif.out"
            subprocess.run(["valgrind", "--tool=massif", "--stacks=yes", "--heap=no",
                            "--peak-inaccuracy=0.0", f"--massif-out-file={out}", "-q",
                            str(binary), *args], check=True)
            peaks.append(max(int(v) for v in re.findall(r"^mem_stacks_B=(\d+)$",
                                                        out.read_text(), re.M)))
    return peaks[1] - peaks[0]


def _span(row: dict[str, Any], metric: str) -> str:
    low, high = row["memory_range"].get(metric) or (None, None)
    if low is None:
        return "–"
    return f"{low:,}" if low == high else f"{low:,}–{high:,}"


def markdown(found: list[Compared]) -> str:
    lines = ["| algorithm | impl. | operation | stack: pqbench | pqbench on valgrind's CPU | "
             "massif | difference | heap: pqbench | on valgrind's CPU | DHAT | "
             "allocations: pqbench | on valgrind's CPU | DHAT | notes |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for c in found:
        r, p = c.row, c.painted
        lines.append(
            f"| {r['algorithm']} | {r['implementation']} | {r['operation']} | "
            f"{_span(r, 'stack_bytes')} | {p['stack_bytes']:,} | {c.massif:,} | "
            f"{p['stack_bytes'] - c.massif:+,} ({c.stack_gap:+.1%}) | "
            f"{_span(r, 'heap_bytes')} | {p['heap_bytes']:,} | {c.dhat_heap:,} | "
            f"{_span(r, 'allocations')} | {p['allocations']:,} | {c.dhat_allocations:,} | "
            f"{c.explanation()} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("algorithm", nargs="*", help="as `pqbench memory` takes them")
    parser.add_argument("--calls", type=int, default=5, help="pqbench's calls per operation")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    from pqbench.libraries.liboqs import import_oqs, loaded_install
    from pqbench.measure.memory.runner import interposer

    import_oqs()
    install = loaded_install()
    liboqs = str(install.library) if install else ""
    hook, missing = interposer()
    if hook is None:
        sys.exit(f"pqbench cannot count the heap here: {missing}")
    harness = build_harness()
    ia32cap = valgrind_ia32cap()
    doc = pqbench_figures(args.algorithm, args.calls)
    found = []
    for row in doc["results"]:
        print(f"  {row['algorithm']} {row['operation']} [{row['implementation']}]",
              file=sys.stderr)
        found.append(compare_row(harness, row, liboqs, hook, ia32cap))
    within = sum(abs(c.stack_gap) <= TARGET for c in found)
    heap = sum(c.heap_agrees for c in found)
    print(f"pqbench run {doc['run_id']} (largest of {args.calls} calls, harness stack "
          f"{doc['settings']['harness_stack_bytes']} B subtracted): {within}/{len(found)} "
          f"stack figures within {TARGET:.0%} of massif, {heap}/{len(found)} heap peaks and "
          "allocation counts equal to DHAT's (on valgrind's CPU)\n")
    print(markdown(found))
    seen = massif_sampling_check()
    if seen is not None:
        print(f"\nMassif's own limit: a stack pointer that dips 8,192 bytes for two "
              f"instructions, 1000 times, is reported as {seen:,} bytes deeper: massif "
              "samples the stack between events rather than at every change.")
    explained = sum(abs(c.stack_gap) <= TARGET or "massif's samples missed it" in c.gdb
                    for c in found)
    return 0 if explained == heap == len(found) else 1


if __name__ == "__main__":
    sys.exit(main())
