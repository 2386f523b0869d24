"""pqbench's TLS handshake figures against `openssl s_time -new` and `openssl s_server`.

Reference: `openssl s_server` serving the cell's certificate chain with `-groups G`, and
`openssl s_time -new` connecting to it for --seconds (its client limited to the same group
through an OpenSSL config file, `Groups = G`, since s_time has no -groups option). Each
reference handshake is first checked with `openssl s_client -brief`: the group and the
signature type must be the cell's. Measured: connections per wall-clock second, the
client's CPU time (s_time's rusage, user + system) and the server's (s_server's on-CPU time
from /proc/PID/schedstat) per connection.

pqbench: the `libssl` implementation (the system libssl through ctypes) and `python-ssl`
(Python's ssl module), over loopback between two processes, exactly as `pqbench tls`
times a `-loopback` row: handshakes per second and each side's thread CPU time per
handshake. With the system's `openssl` command both run on the same library as the
reference; the script prints the versions and says whether they are the same.

A third stretch swaps one side: s_time against pqbench's server, so a difference in the
connection rate can be put on the server or on the client. The three run in rotation
(reference, swapped, pqbench; --pairs times, --seconds each), so a slow phase of this shared
machine hits all of them; each rotation gives one ratio per figure, and the tables show the
median ratio with its range. Target: pqbench's CPU time per handshake, each side, within
10 % of the reference, or the difference explained (`explain` lists what the two loops do
differently). A benchmark script, not a test:

    python benchmarks/tls_vs_openssl.py --seconds 3 --pairs 5
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from pqbench.measure.tls import catalog, certs, loopback, registry

TARGET = 0.10
#: s_client -brief lines that name the group and the signature, by cell component.
GROUP_WORDS = {"X25519": ("x25519",), "P-256": ("prime256v1", "p-256", "secp256r1"),
               "X25519MLKEM768": ("x25519mlkem768",),
               "SecP256r1MLKEM768": ("secp256r1mlkem768",), "MLKEM768": ("mlkem768",)}
SIGNATURE_WORDS = {"ECDSA-P-256": ("ecdsa",), "Ed25519": ("ed25519",),
                   "RSA-2048": ("rsa-pss", "rsassa-pss"), "ML-DSA-44": ("ml-dsa-44", "mldsa44"),
                   "ML-DSA-65": ("ml-dsa-65", "mldsa65"), "ML-DSA-87": ("ml-dsa-87", "mldsa87")}
CLASSICAL_CELLS = ("X25519 + ECDSA-P-256", "X25519 + Ed25519", "X25519 + RSA-2048",
                   "P-256 + ECDSA-P-256")
PQ_CELLS = ("X25519MLKEM768 + ECDSA-P-256", "X25519MLKEM768 + ML-DSA-65")


@dataclass(frozen=True)
class Sample:
    """One timed stretch: connections, wall seconds, client and server CPU seconds."""

    connections: int
    wall: float
    client_cpu: float
    server_cpu: float

    @property
    def rate(self) -> float:
        return self.connections / self.wall

    @property
    def client_us(self) -> float:
        return self.client_cpu / self.connections * 1e6

    @property
    def server_us(self) -> float:
        return self.server_cpu / self.connections * 1e6


@dataclass
class Row:
    cell: str
    implementation: str
    reference: list[Sample] = field(default_factory=list)  # s_time -> s_server
    mixed: list[Sample] = field(default_factory=list)  # s_time -> pqbench's server
    pqbench: list[Sample] = field(default_factory=list)  # pqbench -> pqbench

    def ratios(self, figure: str, over: str = "reference", of: str = "pqbench"
               ) -> list[float]:
        return [getattr(a, figure) / getattr(b, figure)
                for a, b in zip(getattr(self, of), getattr(self, over), strict=True)]


# --- the reference: s_server and s_time -------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _on_cpu_seconds(pid: int) -> float:
    """A process's time on CPU: schedstat (ns) where the kernel has it, else stat ticks."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Reference:
    """s_server for one cell, in a private directory holding the chain and the client config."""

    def __init__(self, openssl: str, cell: catalog.Cell, credentials: certs.Credentials,
                 directory: Path) -> None:
        self.openssl, self.cell, self.directory = openssl, cell, directory
        files = {"leaf.pem": credentials.chain_pem[0],
                 "chain.pem": b"".join(credentials.chain_pem[1:]),
                 "key.pem": credentials.key_pem, "root.pem": credentials.root_pem,
                 "client.cnf": (
                     "openssl_conf = openssl_init\n[openssl_init]\nssl_conf = ssl_sect\n"
                     "[ssl_sect]\nsystem_default = system_default_sect\n"
                     f"[system_default_sect]\nGroups = {cell.group.name}\n"
                     "MinProtocol = TLSv1.3\n").encode()}
        for name, data in files.items():
            (directory / name).write_bytes(data)
            (directory / name).chmod(0o600)
        self.port = _free_port()
        # s_server reports every client that closes without close_notify (s_time does):
        # to a file, since an unread pipe would fill and block it.
        self.log = (directory / "s_server.log").open("wb")
        self.server = subprocess.Popen(
            [openssl, "s_server", "-accept", f"127.0.0.1:{self.port}",
             "-cert", str(directory / "leaf.pem"), "-key", str(directory / "key.pem"),
             "-cert_chain", str(directory / "chain.pem"), "-groups", cell.group.name,
             "-tls1_3", "-quiet"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.log)
        self._wait_listening()

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                log = (self.directory / "s_server.log").read_text(errors="replace")
                raise RuntimeError(f"s_server exited: {log}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("s_server did not start listening")

    @property
    def client_env(self) -> dict[str, str]:
        return {**os.environ, "OPENSSL_CONF": str(self.directory / "client.cnf")}

    def verify(self) -> str:
        """s_client -brief must report the cell's group and signature type."""
        done = subprocess.run(
            [self.openssl, "s_client", "-connect", f"127.0.0.1:{self.port}", "-brief",
             "-CAfile", str(self.directory / "root.pem"), "-verify_return_error",
             "-servername", certs.SERVER_NAME],
            input=b"", capture_output=True, env=self.client_env, timeout=30, check=False)
        text = (done.stdout + done.stderr).decode(errors="replace")
        lines = {line.split(":", 1)[0].strip().lower(): line.split(":", 1)[1].strip().lower()
                 for line in text.splitlines() if ":" in line}
        # OpenSSL 3.0 says "Server Temp Key", 3.5 "Peer Temp Key" and, for KEM groups,
        # "Negotiated TLS1.3 group".
        group = (lines.get("negotiated tls1.3 group") or lines.get("peer temp key")
                 or lines.get("server temp key", ""))
        signature = lines.get("peer signature type") or lines.get("signature type", "")
        if lines.get("verification") != "ok" \
                or not any(w in group for w in GROUP_WORDS[self.cell.group.name]) \
                or not any(w in signature for w in SIGNATURE_WORDS[self.cell.certificate.name]):
            raise RuntimeError(f"the reference handshake is not {self.cell.name}:\n{text}")
        return f"group {group}, signature {signature}, verification ok"

    def measure(self, seconds: int) -> Sample:
        """s_time against s_server; s_server's CPU from the kernel."""
        before = _on_cpu_seconds(self.server.pid)
        connections, wall, client_cpu = self.s_time(self.port, seconds)
        return Sample(connections, wall, client_cpu, _on_cpu_seconds(self.server.pid) - before)

    def s_time(self, port: int, seconds: int) -> tuple[int, float, float]:
        """`openssl s_time -new` against a port: connections, wall and its CPU seconds."""
        start = time.perf_counter()
        client = subprocess.Popen(
            [self.openssl, "s_time", "-connect", f"127.0.0.1:{port}", "-new",
             "-time", str(seconds), "-CAfile", str(self.directory / "root.pem"),
             "-verify", "4", "-tls1_3"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=self.client_env)
        assert client.stdout is not None
        output = client.stdout.read().decode(errors="replace")
        _, status, usage = os.wait4(client.pid, 0)
        client.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        found = re.search(r"(\d+) connections in [\d.]+s", output)
        if client.returncode != 0 or found is None:
            raise RuntimeError(f"s_time failed:\n{output}")
        return int(found.group(1)), wall, usage.ru_utime + usage.ru_stime

    def close(self) -> None:
        self.server.terminate()
        self.server.wait(10)
        self.log.close()


# --- pqbench ---------------------------------------------------------------------------


class Pqbench:
    """One implementation's loopback client and server process for one cell."""

    def __init__(self, name: str, cell: catalog.Cell, credentials: certs.Credentials) -> None:
        implementation = registry.by_name(name)
        reason = implementation.unavailable_reason() or implementation.offers(cell)
        if reason:
            raise RuntimeError(reason)
        self.client = implementation.client(cell, credentials)
        self.server = loopback.ServerProcess(name)
        self.port = self.server.serve(cell, credentials)

    def measure(self, seconds: int) -> Sample:
        (done,) = loopback.run_rounds(self.client, self.server, self.port, resumed=False,
                                      rounds=1, round_seconds=seconds, warmup=0.0)
        return Sample(done.handshakes, done.elapsed_ns / 1e9, done.client_cpu_ns / 1e9,
                      done.server_cpu_ns / 1e9)

    def measure_s_time(self, reference: Reference, seconds: int) -> Sample:
        """s_time against pqbench's server: the server swapped, the client kept."""
        self.server.tallies()
        connections, wall, client_cpu = reference.s_time(self.port, seconds)
        served, server_ns = self.server.tallies()
        if served != connections:
            raise RuntimeError(f"pqbench's server counted {served} connections, s_time "
                               f"{connections}")
        return Sample(connections, wall, client_cpu, server_ns / 1e9)

    def close(self) -> None:
        self.server.close()


# --- the run -----------------------------------------------------------------------------


def measure_cell(openssl: str, cell: catalog.Cell, implementations: list[str], seconds: int,
                 pairs: int, log: list[str]) -> list[Row]:
    credentials = certs.make_credentials(cell.certificate)
    rows = []
    with tempfile.TemporaryDirectory(prefix="pqbench-s_time-") as directory:
        reference = Reference(openssl, cell, credentials, Path(directory))
        try:
            log.append(f"- {cell.name}: reference {reference.verify()}")
            for name in implementations:
                try:
                    ours = Pqbench(name, cell, credentials)
                except RuntimeError as exc:
                    log.append(f"- {cell.name} [{name}]: not measured: {exc}")
                    continue
                row = Row(cell.name, name)
                try:
                    ours.measure(1)  # warm-up, and the verified first connection
                    for _ in range(pairs):
                        row.reference.append(reference.measure(seconds))
                        row.mixed.append(ours.measure_s_time(reference, seconds))
                        row.pqbench.append(ours.measure(seconds))
                finally:
                    ours.close()
                rows.append(row)
        finally:
            reference.close()
    return rows


def _range(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.2f}–{max(values):.2f})"


def _median(samples: list[Sample], figure: str) -> float:
    return statistics.median(getattr(s, figure) for s in samples)


def markdown(rows: list[Row], pairs: int) -> str:
    """Two tables: connection rates (with the server swapped on its own), CPU per side."""
    rates = ["| cell | pqbench | s_time → s_server | s_time → pqbench server "
             "| pqbench → pqbench | server swapped | client swapped | both |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    cpu = [f"| cell | pqbench | s_time client µs | pqbench client µs | ratio (median of {pairs}) "
           "| s_server µs | pqbench server µs | ratio |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        name = f"| {row.cell} | {row.implementation}-loopback "
        rates.append(
            name + f"| {_median(row.reference, 'rate'):,.0f} "
            f"| {_median(row.mixed, 'rate'):,.0f} | {_median(row.pqbench, 'rate'):,.0f} "
            f"| {_range(row.ratios('rate', 'reference', 'mixed'))} "
            f"| {_range(row.ratios('rate', 'mixed', 'pqbench'))} "
            f"| {_range(row.ratios('rate'))} |")
        cpu.append(
            name + f"| {_median(row.reference, 'client_us'):,.0f} "
            f"| {_median(row.pqbench, 'client_us'):,.0f} "
            f"| {_range(row.ratios('client_us'))} "
            f"| {_median(row.reference, 'server_us'):,.0f} "
            f"| {_median(row.pqbench, 'server_us'):,.0f} "
            f"| {_range(row.ratios('server_us'))} |")
    return "Connections per second (ratios: pqbench over the reference)\n\n" \
        + "\n".join(rates) + "\n\nCPU time per handshake\n\n" + "\n".join(cpu)


def explain() -> str:
    """What the two loops do differently, per connection (all of it in pqbench's figures)."""
    return ("Differences per connection, all costing pqbench a little more CPU and wall "
            "time: pqbench's client "
            "sends SNI and checks the server name against the certificate (s_time does "
            "neither), reads the two session tickets and the server's close_notify before it "
            "closes (s_time closes right after the handshake and never parses the tickets), "
            "and goes through Python (ctypes for libssl, the ssl module for python-ssl) for "
            "each call; pqbench's server sends close_notify and closes first (s_server waits "
            "for the client to close).")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=3, help="seconds per stretch (whole)")
    parser.add_argument("--pairs", type=int, default=5, help="alternating pairs per row")
    parser.add_argument("--openssl", default="openssl", help="the openssl command")
    parser.add_argument("--implementation", "-i", action="append",
                        choices=("libssl", "python-ssl"),
                        help="pqbench implementations (default: both)")
    parser.add_argument("--cell", action="append",
                        help="'GROUP + CERTIFICATE' (default: the classical cells, and the "
                             "post-quantum ones when the openssl command is 3.5 or newer)")
    args = parser.parse_args(argv)
    if args.seconds < 1 or args.pairs < 1:
        parser.error("--seconds and --pairs must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    openssl = shutil.which(args.openssl)
    if openssl is None:
        sys.exit(f"no {args.openssl} command found")
    version = subprocess.run([openssl, "version"], capture_output=True, text=True,
                             check=True).stdout.strip()
    libssl = registry.by_name("libssl")
    same = libssl.unavailable_reason() is None and \
        " ".join(version.split()[:2]) == libssl.library()
    major_minor = tuple(int(x) for x in re.findall(r"\d+", version)[:2])
    names = args.cell or [*CLASSICAL_CELLS, *(PQ_CELLS if major_minor >= (3, 5) else ())]
    cells = []
    for name in names:
        group, _, certificate = name.partition(" + ")
        cells += catalog.grid(catalog.resolve_groups([group.strip()]),
                              catalog.resolve_certificates([certificate.strip()]))
    log = [f"- reference: {openssl}: {version}",
           f"- pqbench libssl: {libssl.library() if not libssl.unavailable_reason() else '-'}"
           f", python-ssl: {registry.by_name('python-ssl').library()}: "
           + ("the same library as the reference" if same
              else "NOT the same library as the reference"),
           f"- {args.pairs} pairs of {args.seconds} s per row, alternating"]
    rows = [row for cell in cells
            for row in measure_cell(openssl, cell, args.implementation or ["libssl",
                                                                           "python-ssl"],
                                    args.seconds, args.pairs, log)]
    print("\n".join(log))
    print()
    print(markdown(rows, args.pairs))
    print()
    print(explain())
    within = all(abs(statistics.median(r.ratios(f)) - 1) <= TARGET
                 for r in rows for f in ("client_us", "server_us"))
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
